import { z } from "zod";
import { repairJson } from "../trace/index.js";

/**
 * What the judge must answer, and the two parsers: the structured JSON answer (validated by a zod schema that is also
 * sent as `response_format` where the server supports it), and the strict parser for the MAST-compatible text answer.
 * Both fail loudly: a missing or unknown code is an error, never a silent "no".
 */

export const ModeVerdictSchema = z.strictObject({
  present: z.boolean(),
  confidence: z.number().min(0).max(1),
  /** Canonical 0-based step indices, as numbered in the rendered trace. */
  steps: z.array(z.number().int().min(0)),
  agent: z.string().nullable(),
  /** Verbatim quotes copied from the cited steps. */
  evidence: z.array(z.string()),
  rationale: z.string(),
});

export type ModeVerdict = z.infer<typeof ModeVerdictSchema>;

export interface JudgeAnswer {
  /** For windows: the running summary of the run so far; for the final pass: the whole run. */
  summary: string;
  /** The judge's view of whether the task succeeded; null when it cannot tell. */
  taskSuccess: boolean | null;
  modes: Record<string, ModeVerdict>;
}

/** The answer schema for one call: exactly the requested codes, each required, nothing else. */
export function judgeAnswerSchema(codes: readonly string[]) {
  const shape: Record<string, typeof ModeVerdictSchema> = {};
  for (const c of codes) shape[c] = ModeVerdictSchema;
  return z.strictObject({ summary: z.string(), taskSuccess: z.boolean().nullable(), modes: z.strictObject(shape) });
}

/** OpenAI `response_format` for servers that support structured outputs. */
export function jsonSchemaResponseFormat(codes: readonly string[]) {
  const schema = z.toJSONSchema(judgeAnswerSchema(codes), { target: "draft-7" }) as Record<string, unknown>;
  delete schema.$schema;
  return { type: "json_schema" as const, json_schema: { name: "faultline_judgement", strict: true, schema } };
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Takes the JSON out of a reply, repaired as any model-written JSON is (src/trace/json.ts: fences, prose around it…). */
export function extractJson(text: string): ParseResult<unknown> {
  const t = text.trim();
  if (!t) return { ok: false, error: "empty answer" };
  const r = repairJson(t);
  return r.ok ? { ok: true, value: r.value } : { ok: false, error: `answer is not valid JSON (${r.error}): ${JSON.stringify(t.slice(0, 120))}` };
}

export function parseJudgeAnswer(text: string, codes: readonly string[]): ParseResult<JudgeAnswer> {
  const json = extractJson(text);
  if (!json.ok) return json;
  const r = judgeAnswerSchema(codes).safeParse(json.value);
  if (!r.success) {
    const issues = r.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") || "(root)"}: ${i.message}`)
      .join("; ");
    return { ok: false, error: `answer does not fit the schema: ${issues}` };
  }
  return { ok: true, value: r.data as JudgeAnswer };
}

// ---------------------------------------------------------------------------------------------------------------
// MAST-compatible text answer
// ---------------------------------------------------------------------------------------------------------------

export interface MastAnswer {
  summary: string;
  taskCompleted: boolean;
  modes: Record<string, 0 | 1>;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const CODE_LINE = /^\s*(?:[-*•]\s*)?(?:FM-?)?(\d+\.\d+)(?!\d)/i;

/** The part of the reply that holds the answer: the last `@@ … @@` block that has a C section, else the whole text. */
function answerRegion(text: string): string {
  const blocks = text.split(/^\s*@@\s*$/m);
  for (let i = blocks.length - 2; i >= 1; i -= 2) {
    const b = blocks[i]!;
    if (/^\s*C[.:)]/m.test(b)) return b;
  }
  return text;
}

/**
 * Strict, line-anchored parser for the MAST-compatible answer (A. summary, B. task completed yes/no, C. one line per
 * code). Each code is found only at the start of a line inside section C, with the dot escaped and no digit after it,
 * and its value is the yes/no that ends that line — so a label such as "Ignored other agent's input" or "No or
 * incomplete verification" cannot be read as "no", and a code mentioned in the summary is never read. A missing,
 * duplicated-and-conflicting or unknown code is an error.
 */
export function parseMastAnswer(text: string, codes: readonly string[]): ParseResult<MastAnswer> {
  const region = answerRegion(text.replace(/\r\n?/g, "\n").replace(/\*\*|__|`/g, ""));
  const lines = region.split("\n");
  const marker = (letter: string) => lines.map((l, i) => (new RegExp(`^\\s*${letter}[.:)]`).test(l) ? i : -1)).filter((i) => i >= 0);
  const [aAt, bAt, cAt] = [marker("A"), marker("B"), marker("C")];
  for (const [name, at] of [["A", aAt], ["B", bAt], ["C", cAt]] as const) {
    if (at.length === 0) return { ok: false, error: `answer has no "${name}." section` };
    if (at.length > 1) return { ok: false, error: `answer has ${at.length} "${name}." sections` };
  }
  const a = aAt[0]!;
  const b = bAt[0]!;
  const c = cAt[0]!;
  if (!(a < b && b < c)) return { ok: false, error: "answer sections are not in the order A, B, C" };

  const summary = [lines[a]!.replace(/^\s*A[.:)]\s*/, ""), ...lines.slice(a + 1, b)].join(" ").replace(/\s+/g, " ").trim();
  const bText = [lines[b]!.replace(/^\s*B[.:)]\s*/, ""), ...lines.slice(b + 1, c)].join(" ").trim();
  const bValue = /(?:^|[\s:])(yes|no)\s*\.?\s*$/i.exec(bText)?.[1];
  if (!bValue) return { ok: false, error: `section B does not end with yes or no: ${JSON.stringify(bText.slice(0, 80))}` };

  const cLines = [lines[c]!.replace(/^\s*C[.:)]\s*/, ""), ...lines.slice(c + 1)];
  const known = new Set(codes);
  for (const line of cLines) {
    const code = CODE_LINE.exec(line)?.[1];
    if (code && !known.has(code)) return { ok: false, error: `section C has a line for unknown code ${code}: ${JSON.stringify(line.trim())}` };
  }
  const modes: Record<string, 0 | 1> = {};
  for (const code of codes) {
    const start = new RegExp(`^\\s*(?:[-*•]\\s*)?(?:FM-?)?${escapeRegExp(code)}(?!\\d)`, "i");
    const full = new RegExp(`^\\s*(?:[-*•]\\s*)?(?:FM-?)?${escapeRegExp(code)}(?!\\d)(?:[\\s\\-–—][^\\n:]*)?:\\s*(yes|no)\\s*\\.?\\s*$`, "i");
    const values = new Set<string>();
    for (const line of cLines) {
      if (!start.test(line)) continue;
      const v = full.exec(line)?.[1];
      if (!v) return { ok: false, error: `line for ${code} does not end with ": yes" or ": no": ${JSON.stringify(line.trim())}` };
      values.add(v.toLowerCase());
    }
    if (values.size === 0) return { ok: false, error: `section C has no line for code ${code}` };
    if (values.size > 1) return { ok: false, error: `section C answers both yes and no for code ${code}` };
    modes[code] = values.has("yes") ? 1 : 0;
  }
  return { ok: true, value: { summary, taskCompleted: bValue.toLowerCase() === "yes", modes } };
}
