/*
 * Text similarity, one definition for the detectors and the guards: Jaccard overlap of word n-gram sets. Callers
 * choose the tokenisation and n (the FM-1.3 detector compares prose by ASCII word trigrams, the loop guard chat
 * messages by Unicode word bigrams); the measure is this one.
 */

/** Lower-cased words of a text (Unicode letters, digits, underscores). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** The set of runs of n consecutive words (joined by a space); empty for fewer than n words. */
export function wordGrams(w: readonly string[], n: number): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + n <= w.length; i++) out.add(w.slice(i, i + n).join(" "));
  return out;
}

/** |a ∩ b| / |a ∪ b|; 0 when either set is empty. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
