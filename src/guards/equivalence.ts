/**
 * When two tool calls are "the same call": argument normalisation for loop detection.
 * Key order, whitespace inside strings and JSON-encoded argument strings do not make calls different; keys the
 * user declares volatile (timestamps, request ids) are ignored wherever they appear.
 */

// Argument equivalence is shared with the rule detectors: one definition of "the same call" (src/trace/actions.ts).
import { callKey, type ArgsEquivalenceOptions } from "../trace/actions.js";
import { jaccard, wordGrams, words } from "../trace/similarity.js";
export { DEFAULT_IGNORED_KEYS, normalizeArgs, canonicalJson, callKey, type ArgsEquivalenceOptions } from "../trace/actions.js";

/** True when two calls are equivalent under the options. */
export function sameCall(a: { name: string; args?: unknown }, b: { name: string; args?: unknown }, opts: ArgsEquivalenceOptions = {}): boolean {
  return callKey(a.name, a.args, opts) === callKey(b.name, b.args, opts);
}

/**
 * What a tool result "said", for the polling rule: a repeated call whose result changed is progress.
 * `volatile` patterns (e.g. a clock printed in every output) are removed first so they do not count as change.
 */
export function resultFingerprint(r: { output?: string; exitCode?: number; isError?: boolean }, volatile: readonly RegExp[] = []): string {
  let out = r.output ?? "";
  for (const re of volatile) out = out.replace(new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`), "");
  return `${r.exitCode ?? ""}|${r.isError ? 1 : 0}|${out.replace(/\s+/g, " ").trim()}`;
}

// One similarity measure for guards and detectors (trace/similarity.ts).
export { words } from "../trace/similarity.js";

/** A text tokenised once for {@link profileSimilarity}: a guard comparing each new message with many kept ones keeps these. */
export interface TextProfile {
  /** The lower-cased words joined by single spaces: equal joins mean identical normalised texts. */
  joined: string;
  /** Word bigrams (the words themselves for texts under three words). */
  grams: Set<string>;
}

export function textProfile(text: string): TextProfile {
  const w = words(text);
  return { joined: w.join(" "), grams: w.length < 3 ? new Set(w) : wordGrams(w, 2) };
}

/** {@link textSimilarity} of two profiled texts. */
export function profileSimilarity(a: TextProfile, b: TextProfile): number {
  if (a.joined === b.joined) return 1;
  return jaccard(a.grams, b.grams);
}

/**
 * Similarity of two messages in [0, 1]: Jaccard overlap of word bigrams (word sets for very short texts).
 * Identical normalised texts, including two empty ones, score 1.
 */
export function textSimilarity(a: string, b: string): number {
  return profileSimilarity(textProfile(a), textProfile(b));
}

/**
 * True when two profiled texts are at least `threshold` similar. Same answer as `profileSimilarity(a, b) >= threshold`,
 * but skips counting the overlap when the set sizes alone rule it out: the overlap is at most the smaller set and the
 * union at least the larger, so the score cannot exceed min/max.
 */
export function profilesSimilar(a: TextProfile, b: TextProfile, threshold: number): boolean {
  if (a.joined === b.joined) return 1 >= threshold;
  const small = Math.min(a.grams.size, b.grams.size);
  const large = Math.max(a.grams.size, b.grams.size);
  if (small === 0) return 0 >= threshold;
  if (small / large < threshold) return false;
  return profileSimilarity(a, b) >= threshold;
}
