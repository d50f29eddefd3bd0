import type { Step } from "./schema.js";

/** Collapses whitespace so quotes can be compared with the text they come from. */
export function normalizeWhitespace(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/** Shortens text for display, keeping the head; marks the cut. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * Everything a step says, as one string: its text, its tool output and its tool arguments. Evidence quotes (from rule
 * detectors and from the judge) must be substrings of this, whitespace-normalised.
 */
export function stepContent(s: Step): string {
  return stepFields(s).join("\n");
}

/** The fields of a step in display order — text, a distinct output, arguments not already in the text. */
export function stepFields(s: Step): string[] {
  const parts: string[] = [];
  if (s.text) parts.push(s.text);
  if (s.tool?.output && s.tool.output !== s.text) parts.push(s.tool.output);
  if (s.tool?.args !== undefined) {
    const a = typeof s.tool.args === "string" ? s.tool.args : JSON.stringify(s.tool.args);
    if (a && !(s.text ?? "").includes(a)) parts.push(a);
  }
  return parts;
}

/** True when `quote` occurs in one of the steps (whitespace-normalised, case-sensitive). */
export function quoteInSteps(quote: string, steps: Step[]): boolean {
  const q = normalizeWhitespace(quote);
  if (!q) return false;
  return steps.some((s) => normalizeWhitespace(stepContent(s)).includes(q));
}
