import type { Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { hasTag, isFailedResult } from "./util.js";

/**
 * Measurements that are not MAST modes and are never forced into a MAST code: tool error rate, infrastructure
 * errors (rate limits, auth failures, timeouts, empty model responses, context overflow), and runs where the model
 * never acted.
 */
export interface Signals {
  steps: number;
  tool_calls: number;
  tool_errors: number;
  tool_error_rate: number | null;
  empty_tool_results: number;
  empty_model_turns: number;
  harness_retries: number;
  never_acted: boolean;
  infra_errors: Record<string, number>;
  infra_error_steps: number[];
}

const INFRA: [string, RegExp][] = [
  ["rate_limit", /\b(429|rate[ _-]?limit(ed)?|too many requests|quota exceeded)\b/i],
  ["auth", /\b(401|403|unauthori[sz]ed|forbidden|invalid api key|authentication (failed|error))\b/i],
  ["timeout", /\b(timed? ?out|timeout|deadline exceeded|504 gateway)\b/i],
  ["context_length", /\b(context (length|window) (exceeded|is too long)|maximum context length|too many tokens|ContextWindowExceeded)\b/i],
  ["server_error", /\b(500 internal server error|502 bad gateway|503 service unavailable|service unavailable|APIConnectionError|connection (refused|reset))\b/i],
];

export function computeSignals(trace: Trace): Signals {
  const calls = trace.steps.filter((s) => s.kind === "tool_call");
  const results = trace.steps.filter((s) => s.kind === "tool_result");
  const errors = results.filter((s) => isFailedResult(s)).length;
  const infra: Record<string, number> = {};
  const infraSteps: number[] = [];
  for (const s of trace.steps) {
    // only errors, terminations and harness/system events speak for the infrastructure; tool output about a system
    // under diagnosis (an SRE agent reading "connection refused" in logs) does not
    if (!(s.kind === "error" || s.kind === "termination" || (s.kind === "event" && s.role !== "assistant"))) continue;
    const text = stepContent(s);
    for (const [kind, re] of INFRA)
      if (re.test(text)) {
        infra[kind] = (infra[kind] ?? 0) + 1;
        infraSteps.push(s.index);
        break;
      }
  }
  const empty = trace.steps.filter((s) => s.role === "assistant" && hasTag(s, "empty")).length;
  const spoke = trace.steps.some((s) => s.role === "assistant" && (s.kind === "tool_call" || (s.text ?? "").trim() !== ""));
  if (empty > 0) {
    infra.empty_response = empty;
  }
  return {
    steps: trace.steps.length,
    tool_calls: calls.length,
    tool_errors: errors,
    tool_error_rate: results.length ? Math.round((errors / results.length) * 1000) / 1000 : null,
    empty_tool_results: results.filter((s) => !(s.tool?.output ?? s.text ?? "").trim()).length,
    empty_model_turns: empty,
    harness_retries: trace.steps.filter((s) => hasTag(s, "harness-retry")).length,
    never_acted: !spoke,
    infra_errors: infra,
    infra_error_steps: infraSteps.slice(0, 20),
  };
}
