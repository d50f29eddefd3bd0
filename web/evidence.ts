/*
 * Where a finding's evidence sits in a step as the viewer shows it. Evidence quotes are verbatim up to whitespace
 * (src/trace/text.ts: a quote is a substring of the step's content, whitespace-normalised), and the viewer shows
 * tool arguments pretty-printed, so the search ignores whitespace altogether and maps the match back to offsets in
 * the displayed text. Pure functions: the server's tests run them too.
 */

/** The parts of a step the viewer shows, in display order, with the text exactly as displayed. */
export type FieldName = "text" | "args" | "output";

export interface StepLike {
  text?: string;
  tool?: { name: string; args?: unknown; output?: string };
}

export interface DisplayField {
  field: FieldName;
  text: string;
}

/** Tool arguments as shown: pretty JSON for structured arguments, the raw string otherwise. */
export function argsText(args: unknown): string | undefined {
  if (args === undefined) return undefined;
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

export function displayFields(step: StepLike): DisplayField[] {
  const out: DisplayField[] = [];
  const output = step.tool?.output;
  // A tool result whose text is its output is shown once, as output (collapsed sooner than what an agent says).
  if (step.text && step.text !== output) out.push({ field: "text", text: step.text });
  const args = argsText(step.tool?.args);
  if (args) out.push({ field: "args", text: args });
  if (output) out.push({ field: "output", text: output });
  return out;
}

/** [start, end) of `quote` in `text`, ignoring all whitespace on both sides; null when it does not occur. */
export function locateQuote(text: string, quote: string): { start: number; end: number } | null {
  const q = quote.replace(/\s+/g, "");
  if (!q) return null;
  // Positions in `text` of each non-whitespace character, so a match in the squeezed text maps back.
  const positions: number[] = [];
  let squeezed = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (/\s/.test(ch)) continue;
    positions.push(i);
    squeezed += ch;
  }
  const at = squeezed.indexOf(q);
  if (at < 0) return null;
  return { start: positions[at]!, end: positions[at + q.length - 1]! + 1 };
}

/**
 * The evidence's place in a step: the first displayed field that contains it. A quote joined from several fields
 * (rare) is not found; the viewer then marks the whole step.
 */
export function locateEvidence(step: StepLike, quote: string): { field: FieldName; start: number; end: number } | null {
  for (const f of displayFields(step)) {
    const r = locateQuote(f.text, quote);
    if (r) return { field: f.field, ...r };
  }
  return null;
}
