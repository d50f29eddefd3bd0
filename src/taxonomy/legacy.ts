/**
 * MAST-Data's human-labelled file mixes three taxonomy generations. This crosswalk maps an older round's code to
 * the final v3 code by identical definition text (null = no final equivalent). See mast-taxonomy.md §4.1.
 * 3.2/3.3 of rounds 2–3 are mapped by meaning (weak verifier → 3.3, no checking → 3.2), not by number.
 */
export type LegacyRound = "round1" | "round2-3" | "final";

const ROUND1: Record<string, string | null> = {
  "1.1": "1.1", "1.2": "2.6", "1.3": null, "1.4": "2.2", "1.5": "1.5",
  "2.1": null, "2.2": "1.3", "2.3": "1.4", "2.4": "2.1", "2.5": "2.3", "2.6": "1.2",
  "3.1": null, "3.2": "2.4", "3.3": "2.5", "3.4": null,
  "4.1": "3.1", "4.2": "3.2", "4.3": "3.3",
};

const ROUND2_3: Record<string, string | null> = {
  "1.1": "1.1", "1.2": "2.6", "1.3": "1.5", "1.4": null, "1.5": "1.3", "1.6": "1.4", "1.7": "1.2",
  "2.1": "2.1", "2.2": "2.2", "2.3": "2.3", "2.4": null, "2.5": null, "2.6": "2.4", "2.7": "2.5",
  "3.1": "3.1", "3.2": "3.3", "3.3": "3.2",
};

/** Which taxonomy generation a MAD human-file `round` value uses. */
export function roundOf(round: string): LegacyRound {
  const r = round.toLowerCase();
  if (r.includes("round 1")) return "round1";
  if (r.includes("round 2") || r.includes("round 3")) return "round2-3";
  return "final"; // "Generlazability" [sic] and anything newer use the final 14 codes
}

/** Maps a code of the given round to its v3 code; null when the old mode has no final equivalent. */
export function crosswalk(round: LegacyRound, code: string): string | null | undefined {
  if (round === "final") return code;
  const table = round === "round1" ? ROUND1 : ROUND2_3;
  return code in table ? table[code] : undefined;
}
