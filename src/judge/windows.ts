import { clipStepToTokens, estimateTokens, splitStep, type RenderedStep } from "./render.js";

/**
 * Splits a rendered trace into overlapping windows of whole steps within a token budget, and builds the compressed
 * whole-run view of the final pass. Every character of every step is shown in some window: a step larger than a
 * window is split into parts across windows, never cut. The last window always ends at the last step (the tail, where
 * termination and verification happen, is never dropped). When the final pass's budget forces a cut, a `ForcedCut`
 * says where and how much.
 */

export interface StepWindow {
  /** 0-based window number. */
  index: number;
  /** First step position (inclusive) and last (exclusive), as positions in the rendered step list. */
  start: number;
  end: number;
  tokens: number;
  /** Steps repeated from the previous window for context (0 for the first). */
  overlap: number;
}

export interface ForcedCut {
  /**
   * step-clipped: a step larger than the budget lost its middle; outline-omitted: the final pass could not list some
   * steps even as one line; steps-outlined: a single-call view (MAST-compatible) showed early steps as outline lines
   * only; summary-clipped: the running summary outgrew its reserve.
   */
  kind: "step-clipped" | "outline-omitted" | "steps-outlined" | "summary-clipped";
  /** Canonical step index for a clipped step; first..last for omitted outline lines. */
  step?: number;
  from?: number;
  to?: number;
  /** Characters removed. */
  chars?: number;
  note: string;
}

export interface WindowPlan {
  windows: StepWindow[];
  /**
   * The steps as they will be shown: the input, except that a step larger than the budget is replaced by its parts
   * (same index, `(part k/n)` in the header). Window positions refer to this list.
   */
  steps: RenderedStep[];
  /** Steps split into parts: canonical index and number of parts. */
  splits: { step: number; parts: number }[];
  forcedCuts: ForcedCut[];
}

export interface WindowOptions {
  /** Token budget for the steps of one window. */
  budget: number;
  /** Tokens of steps repeated at the start of the next window (default 15 % of the budget). */
  overlapTokens?: number;
}

export function planWindows(steps: RenderedStep[], opts: WindowOptions): WindowPlan {
  const budget = Math.max(1, Math.floor(opts.budget));
  const overlapTokens = Math.max(0, Math.floor(opts.overlapTokens ?? budget * 0.15));
  const forcedCuts: ForcedCut[] = [];
  // A step larger than a whole window goes across windows in parts. Parts are at most half a window, so that the
  // final pass's tail (60 % of a budget) can show the last one whole.
  const splits: { step: number; parts: number }[] = [];
  const shown = steps.flatMap((s) => {
    if (s.tokens <= budget) return [s];
    const parts = splitStep(s, Math.max(1, Math.floor(budget / 2)));
    splits.push({ step: s.index, parts: parts.length });
    return parts;
  });

  const windows: StepWindow[] = [];
  let start = 0;
  let overlap = 0;
  while (start < shown.length) {
    let end = start;
    let tokens = 0;
    while (end < shown.length && tokens + shown[end]!.tokens <= budget) tokens += shown[end++]!.tokens;
    windows.push({ index: windows.length, start, end, tokens, overlap });
    if (end >= shown.length) break;
    // Step back over whole steps for the overlap, but always move forward by at least one step.
    let next = end;
    let carried = 0;
    while (next - 1 > start && carried + shown[next - 1]!.tokens <= overlapTokens) carried += shown[--next]!.tokens;
    overlap = end - next;
    start = next;
  }
  return { windows, steps: shown, forcedCuts, splits };
}

export interface WholeRunView {
  /** The text placed in the final-pass prompt. */
  text: string;
  tokens: number;
  /** Position of the first step shown in full; steps before it appear as one outline line each. */
  tailFrom: number;
  /** Characters of content kept on each outline line (0 = header only); undefined when everything is shown in full. */
  outlineChars?: number;
  forcedCuts: ForcedCut[];
}

const flat = (s: string): string => s.replace(/\s+/g, " ").trim();

/**
 * The whole run within one budget, for the final pass: every step in full when that fits; otherwise the tail in full
 * (at least the last step) and one outline line per earlier step, shortened as far as needed. Only when even header-
 * only outline lines do not fit are middle lines omitted — recorded as a forced cut.
 */
export function wholeRunView(steps: RenderedStep[], budget: number, tailShare = 0.6): WholeRunView {
  const all = steps.reduce((n, s) => n + s.tokens + 1, 0);
  if (all <= budget || steps.length === 0) {
    const text = steps.map((s) => s.block).join("\n\n");
    return { text, tokens: estimateTokens(text), tailFrom: 0, forcedCuts: [] };
  }
  const forcedCuts: ForcedCut[] = [];
  const tailBudget = Math.max(1, Math.floor(budget * tailShare));
  let tailFrom = steps.length;
  let tailTokens = 0;
  while (tailFrom > 0 && tailTokens + steps[tailFrom - 1]!.tokens + 1 <= tailBudget) tailTokens += steps[--tailFrom]!.tokens + 1;
  const tail = steps.slice(tailFrom);
  if (tail.length === 0) {
    const last = steps[steps.length - 1]!;
    const c = clipStepToTokens(last, tailBudget);
    forcedCuts.push({ kind: "step-clipped", step: last.index, chars: c.elided, note: `the last step is larger than the final pass's tail budget of ${tailBudget} tokens; its middle was clipped` });
    tail.push(c.step);
    tailFrom = steps.length - 1;
    tailTokens = c.step.tokens + 1;
  }
  const outlineBudget = Math.max(0, budget - tailTokens - 40);
  const head = steps.slice(0, tailFrom);
  const lineOf = (s: RenderedStep, chars: number): string => {
    if (chars === 0 || !s.body) return s.header;
    const body = flat(s.body);
    return `${s.header} | ${body.length > chars ? `${body.slice(0, chars)}…` : body}`;
  };
  let outlineChars = 0;
  let lines: string[] = head.map((s) => lineOf(s, 0));
  for (const chars of [400, 200, 100, 50, 0]) {
    const candidate = head.map((s) => lineOf(s, chars));
    if (estimateTokens(candidate.join("\n")) <= outlineBudget || chars === 0) {
      lines = candidate;
      outlineChars = chars;
      break;
    }
  }
  if (estimateTokens(lines.join("\n")) > outlineBudget) {
    // Keep the first and last outline lines, drop the middle, and record exactly which steps were left out.
    let keepHead = 0;
    let keepTail = 0;
    let used = 30;
    const lineTokens = lines.map((l) => estimateTokens(l) + 1);
    while (keepHead + keepTail < lines.length) {
      const takeHead = keepHead <= keepTail;
      const t = takeHead ? lineTokens[keepHead]! : lineTokens[lines.length - 1 - keepTail]!;
      if (used + t > outlineBudget) break;
      used += t;
      if (takeHead) keepHead++;
      else keepTail++;
    }
    const from = head[keepHead]!.index;
    const to = head[lines.length - 1 - keepTail]!.index;
    const omitted = lines.length - keepHead - keepTail;
    forcedCuts.push({ kind: "outline-omitted", from, to, note: `final pass: outline lines of steps ${from}–${to} (${omitted} steps) did not fit the budget of ${budget} tokens` });
    lines = [...lines.slice(0, keepHead), `[… outline of steps ${from}–${to} omitted: ${omitted} steps did not fit …]`, ...lines.slice(lines.length - keepTail)];
  }
  const text = [
    `Outline of steps ${head[0]?.index ?? 0}–${head[head.length - 1]?.index ?? 0} (one line each${outlineChars ? `, content cut at ${outlineChars} chars` : ", headers only"}):`,
    ...lines,
    "",
    `Steps ${tail[0]!.index}–${tail[tail.length - 1]!.index} in full:`,
    tail.map((s) => s.block).join("\n\n"),
  ].join("\n");
  return { text, tokens: estimateTokens(text), tailFrom, outlineChars, forcedCuts };
}
