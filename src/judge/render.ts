import type { Step, Trace } from "../trace/index.js";

/**
 * Renders a trace as numbered steps for the judge: one block per step with its canonical index, agent, role and kind,
 * the tool name, arguments and exit code, and the text or output. Nothing is cut by default; with a field limit
 * (`maxFieldChars`) long fields are clipped in the middle with an explicit marker, and every clip is recorded.
 */

/** The marker that replaces clipped text; the judge sees it, and evidence that spans it is rejected. */
export const ELISION_RE = /\[… \d+ chars elided …\]/;
export const elisionMarker = (chars: number): string => `[… ${chars} chars elided …]`;

export interface Elision {
  /** Canonical step index; -1 for the task statement. */
  step: number;
  field: "text" | "args" | "output" | "task" | "step";
  /** Characters removed from the field. */
  chars: number;
}

export interface RenderOptions {
  /**
   * Longest text, argument or output field kept whole; longer ones keep head and tail around a marker (each cut is
   * recorded). Default: no limit — a step larger than a window is split across windows instead (see splitStep).
   */
  maxFieldChars?: number;
}

export const DEFAULT_MAX_FIELD_CHARS = Number.POSITIVE_INFINITY;

export interface RenderedStep {
  index: number;
  agent: string;
  /** The header line: `[step 3] agent=… role=… kind=…`. */
  header: string;
  /** The step's content as the judge sees it (labels included); evidence quotes are checked against it. */
  body: string;
  /** header + body, as placed in the prompt. */
  block: string;
  tokens: number;
  elisions: Elision[];
  /** Set on the parts of a step split across windows (1-based part number, number of parts). */
  part?: { n: number; of: number };
}

export interface RenderedTrace {
  traceId: string;
  /** Task statement and agents, placed before the steps. */
  preamble: string;
  preambleTokens: number;
  steps: RenderedStep[];
  elisions: Elision[];
}

/** Keeps the head (two thirds) and the tail (one third) of a long string around an elision marker. */
export function clipMiddle(s: string, max: number): { text: string; elided: number } {
  if (s.length <= max) return { text: s, elided: 0 };
  // The marker itself takes room; reserve it so the clipped field stays within max.
  const room = Math.max(0, max - elisionMarker(s.length).length - 2);
  const head = Math.ceil((room * 2) / 3);
  const tail = room - head;
  const elided = s.length - head - tail;
  return { text: `${s.slice(0, head)}\n${elisionMarker(elided)}\n${tail > 0 ? s.slice(s.length - tail) : ""}`, elided };
}

function argsText(args: unknown): string | undefined {
  if (args === undefined) return undefined;
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args);
  } catch {
    return String(args);
  }
}

export function renderStep(step: Step, opts: RenderOptions = {}): RenderedStep {
  const max = opts.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
  const elisions: Elision[] = [];
  const clip = (field: Elision["field"], s: string): string => {
    const c = clipMiddle(s, max);
    if (c.elided > 0) elisions.push({ step: step.index, field, chars: c.elided });
    return c.text;
  };
  const header = `[step ${step.index}] agent=${step.agent} role=${step.role} kind=${step.kind}`;
  const lines: string[] = [];
  if (step.tags?.length) lines.push(`tags: ${step.tags.join(", ")}`);
  const tool = step.tool;
  if (tool) {
    lines.push(`tool: ${tool.name}`);
    const args = argsText(tool.args);
    if (args !== undefined && args !== "") lines.push(`args: ${clip("args", args)}`);
    if (tool.exitCode !== undefined || tool.isError) {
      const status = [tool.exitCode !== undefined ? `exit code ${tool.exitCode}` : undefined, tool.isError ? "error" : undefined];
      lines.push(`status: ${status.filter(Boolean).join(", ")}`);
    }
  }
  // Tool results often repeat their output as text; show it once.
  const output = tool?.output;
  if (step.text !== undefined && step.text !== "" && step.text !== output) lines.push(clip("text", step.text));
  if (output !== undefined && output !== "") lines.push(`output:\n${clip("output", output)}`);
  const body = lines.join("\n");
  const block = body ? `${header}\n${body}` : header;
  return { index: step.index, agent: step.agent, header, body, block, tokens: estimateTokens(block), elisions };
}

export function renderTrace(trace: Trace, opts: RenderOptions = {}): RenderedTrace {
  const max = opts.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
  const elisions: Elision[] = [];
  const parts: string[] = [];
  if (trace.task?.text) {
    const c = clipMiddle(trace.task.text, max);
    if (c.elided > 0) elisions.push({ step: -1, field: "task", chars: c.elided });
    parts.push(`Task: ${c.text}`);
  }
  parts.push(`Agents: ${trace.agents.join(", ") || "(none named)"}`);
  parts.push(`Steps: ${trace.steps.length} (numbered from 0)`);
  const preamble = parts.join("\n");
  const steps = trace.steps.map((s) => renderStep(s, opts));
  for (const s of steps) elisions.push(...s.elisions);
  return { traceId: trace.id, preamble, preambleTokens: estimateTokens(preamble), steps, elisions };
}

/**
 * Shrinks one rendered step so that its block fits `maxTokens`, clipping the body in the middle. Used when a single
 * step is larger than a whole window; the caller records the returned elision as a forced cut.
 */
export function clipStepToTokens(step: RenderedStep, maxTokens: number): { step: RenderedStep; elided: number } {
  if (step.tokens <= maxTokens) return { step, elided: 0 };
  // Estimate the characters to keep from the step's own chars-per-token ratio, then tighten until it fits.
  let maxChars = Math.max(0, Math.floor((step.body.length * maxTokens) / step.tokens) - step.header.length);
  for (;;) {
    const c = clipMiddle(step.body, maxChars);
    const block = `${step.header}\n${c.text}`;
    const tokens = estimateTokens(block);
    if (tokens <= maxTokens || maxChars === 0) {
      const elisions = c.elided > 0 ? [...step.elisions, { step: step.index, field: "step" as const, chars: c.elided }] : step.elisions;
      return { step: { ...step, body: c.text, block, tokens, elisions }, elided: c.elided };
    }
    maxChars = Math.floor(maxChars * 0.9);
  }
}

/**
 * Splits a step larger than `maxTokens` into consecutive parts that each fit, for windows: every character of the body
 * is in exactly one part (cut at a line break where one is near), and each part's header names the step and the part
 * (`[step 7] … (part 2/3)`). Evidence is still checked against the whole step (the rendered step, not its parts).
 */
export function splitStep(step: RenderedStep, maxTokens: number): RenderedStep[] {
  if (step.tokens <= maxTokens) return [step];
  const headerTokens = estimateTokens(`${step.header} (part 99/99)`) + 1;
  const room = Math.max(1, maxTokens - headerTokens);
  // characters per part from the body's own chars-per-token ratio, tightened until every part fits
  let chars = Math.max(1, Math.floor((step.body.length * room) / Math.max(1, step.tokens)));
  for (;;) {
    const chunks: string[] = [];
    for (let at = 0; at < step.body.length; ) {
      let end = Math.min(step.body.length, at + chars);
      if (end < step.body.length) {
        const nl = step.body.lastIndexOf("\n", end);
        if (nl > at + chars * 0.8) end = nl + 1;
      }
      chunks.push(step.body.slice(at, end));
      at = end;
    }
    const parts = chunks.map((body, k) => {
      const header = `${step.header} (part ${k + 1}/${chunks.length})`;
      const block = `${header}\n${body}`;
      return { ...step, header, body, block, tokens: estimateTokens(block), elisions: k === 0 ? step.elisions : [], part: { n: k + 1, of: chunks.length } };
    });
    if (parts.every((p) => p.tokens <= maxTokens) || chars === 1) return parts;
    chars = Math.max(1, Math.floor(chars * 0.85));
  }
}

/**
 * Token estimate without a tokenizer dependency, shaped on BPE vocabularies such as cl100k/o200k: a letter run of up
 * to 10 letters is one token and a longer one costs one per 8 letters; digits group by three; a run of ASCII
 * punctuation costs one per 3 characters; each non-ASCII character is one token; a space before a word or number is
 * folded into it, and other whitespace costs one per 16 characters. Measured against o200k/cl100k on prose, TypeScript,
 * tau-bench JSON, the MAST annotator texts and three rendered corpus traces it came out at 1.05–1.15× the real count
 * (chars/4 gave 0.87–0.99×): a slight overestimate, the safe side for budgets. Provider usage replaces it whenever a
 * response reports usage.
 */
export function estimateTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/ ?[A-Za-z]+| ?\d{1,3}|\s+|[!-/:-@[-`{-~]+|[^\x00-\x7F]/g)) {
    const piece = m[0];
    const word = piece.charCodeAt(0) === 32 && piece.length > 1 ? piece.slice(1) : piece;
    const c = word.charCodeAt(0);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) n += word.length <= 10 ? 1 : Math.ceil(word.length / 8);
    else if (c >= 48 && c <= 57) n += 1;
    else if (c === 32 || c === 9 || c === 10 || c === 13 || /^\s/.test(piece)) n += Math.ceil(piece.length / 16);
    else if (c < 128) n += Math.ceil(word.length / 3);
    else n += 1;
  }
  return n;
}
