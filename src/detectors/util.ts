import type { Basis, Finding, Step, Trace } from "../trace/index.js";
import { stepFields } from "../trace/index.js";
import { canonicalJson, commandText, isFailedOutcome, isMutatingCall, isVerifyingCall, normalizeArgs, returnsState, type ResultLike } from "../trace/actions.js";

/**
 * Stable JSON of arguments: keys sorted, whitespace folded in one-line values (multi-line code keeps its indentation),
 * JSON-encoded strings parsed, volatile keys (timestamps, request ids) dropped — the same equivalence the runtime loop
 * guard uses (src/trace/actions.ts).
 */
export function canonicalArgs(v: unknown): string {
  return canonicalJson(normalizeArgs(v ?? null));
}

export const toolCalls = (t: Trace) => t.steps.filter((s) => s.kind === "tool_call" && s.tool);
export const resultOf = (t: Trace, call: Step): Step | undefined =>
  call.tool?.resultIndex !== undefined ? t.steps[call.tool.resultIndex] : undefined;

/** The command line of a shell-like call, as text, or undefined for other tools. */
export function commandOf(s: Step): string | undefined {
  return s.tool ? commandText(s.tool) : undefined;
}

/** The result part of a step (tool results keep their output in `tool.output` or, in some formats, in `text`). */
const resultLike = (s: Step): ResultLike => ({ output: s.tool?.output ?? s.text, exitCode: s.tool?.exitCode, isError: s.tool?.isError });

/** A tool result that reports failure: error flag, non-zero exit code, or output that opens with an error. */
export function isFailedResult(s: Step | undefined): boolean {
  return s !== undefined && isFailedOutcome(resultLike(s));
}

/** A result that returns the resulting state (a JSON object with several fields): a change's own check. */
export function returnsStateResult(s: Step | undefined): boolean {
  return s !== undefined && returnsState(resultLike(s));
}

/** A quote of at most `max` characters from a step's own content, around the first match of `re` if given. */
export function quote(step: Step, re?: RegExp, max = 160): string {
  // quote from one field (text, output or arguments), never across two: a viewer highlights within a field
  const fields = stepFields(step);
  const content = (re ? fields.find((f) => re.test(f)) : undefined) ?? fields.find((f) => f.trim()) ?? "";
  if (!content) return "";
  let start = 0;
  if (re) {
    const m = re.exec(content);
    // start at the beginning of the sentence that holds the match, so the quote reads as a claim
    if (m) {
      const before = content.slice(Math.max(0, m.index - max / 2), m.index);
      const b = Math.max(before.lastIndexOf(". "), before.lastIndexOf("\n"), before.lastIndexOf("! "), before.lastIndexOf("? "));
      start = b >= 0 ? m.index - before.length + b + 1 : Math.max(0, m.index - before.length);
      while (start < m.index && /\s/.test(content[start]!)) start++;
    }
  }
  let q = content.slice(start, start + max);
  // quotes end at a whitespace boundary so they read well; they stay verbatim substrings
  if (start + max < content.length) {
    const cut = q.lastIndexOf(" ");
    if (cut > max / 2) q = q.slice(0, cut);
  }
  q = q.trim();
  // a quote of punctuation only ("{") says nothing: take the first line with words instead
  if (!/\w{3}/.test(q)) {
    const line = content.split("\n").find((l) => /\w{3}/.test(l));
    if (line) q = line.trim().slice(0, max);
  }
  return q;
}

export function finding(
  detector: string,
  mode: string,
  steps: Step[],
  evidence: string,
  rationale: string,
  confidence: number,
  basis: Basis[] = ["steps"],
): Finding {
  const agent = steps.find((s) => s.role === "assistant")?.agent ?? steps[0]?.agent;
  return {
    basis,
    mode,
    confidence: Math.round(confidence * 100) / 100,
    steps: [...new Set(steps.map((s) => s.index))].sort((a, b) => a - b),
    agent,
    evidence,
    detector: `rules/${detector}`,
    rationale,
  };
}

/** Tools that change the world (write files, apply patches, mutate a cluster) as opposed to reading it. */
export function isMutating(s: Step): boolean {
  return s.tool !== undefined && isMutatingCall(s.tool);
}

/** Actions that check a result: tests, builds, validation, reading back, status queries. */
export function isVerification(s: Step): boolean {
  return s.tool !== undefined && isVerifyingCall(s.tool);
}

/** The agent-side steps of a trace in order (assistant and tool), skipping injected and harness context. */
export const agentSteps = (t: Trace) => t.steps.filter((s) => s.role === "assistant" || s.role === "tool");

export const hasTag = (s: Step, tag: string) => s.tags?.includes(tag) ?? false;

/** Text of a step or metadata that says a step, turn, iteration or cost cap ended the run. */
export const LIMIT_RE = /\b(max(imum)?[ _-]?(number of )?(turns|steps|iterations?|rounds)( (reached|exceeded|limit))?|(turn|step|iteration|round) limit|LimitsExceeded|exit_cost|cost limit|ran out of (turns|steps)|max_steps)\b/i;
