import type { Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { FINAL_ANSWER_RE } from "../trace/claims.js";
import { hasTag, LIMIT_RE } from "./util.js";

/**
 * How a run ended, read off its last steps: shared by the termination detectors (3.1, 1.5) and the decisive-step
 * search, so that they agree on what ended a run.
 *
 * - `cap`: a step, turn, message, time or cost cap (tagged `step-limit` by the adapter, or a closing harness step).
 * - `transfer`: the agent handed the conversation to a human (tau `transfer_to_human_agents`).
 * - `infra`: the run died on an infrastructure fault (auth, rate limit, content filter, crash) or on empty model turns.
 * - `agent`: the agent ended it (a final message, a completion call, TERMINATE).
 * - `user`: the user (or simulated user) ended it.
 */
export type EndKind = "cap" | "transfer" | "infra" | "agent" | "user";

export interface RunEnd {
  kind: EndKind;
  /** The step that shows the end (the cap notice, the transfer call, the error, the last agent step). */
  step: Step | undefined;
}

const CAP_RE = new RegExp(`${LIMIT_RE.source}|\\bmax(imum)? (time|rounds?|replans?|messages?)\\b[^\\n]{0,40}\\b(reached|exceeded|hit)\\b|\\b(time|message|turn|round) cap\\b|\\bmax_(turns|rounds|replans?)\\b|\\b(replan|round|turn|step|message|time|iteration) (counter|limit|budget) (exceeded|reached)\\b`, "i");
const INFRA_RE = /\b(401|403|429|5\d\d)\b[^\n]{0,60}\b(error|unauthori[sz]ed|forbidden|too many|unavailable)\b|\b(api[ _-]?key|authentication|unauthori[sz]ed|rate[ _-]?limit|quota|content[ _-]?(filter|management|policy)|content_filter\w*|BadRequestError|ResponsibleAIPolicyViolation|context[ _-]?length|APIConnectionError|InternalServerError|ServiceUnavailable|timed? ?out)\b/i;
const CRASH_RE = /Traceback \(most recent call last\)|\bError processing\b|\b\w+Error: Error code: \d{3}\b/;
export const TRANSFER_RE = /^transfer_to_human/i;

const agentSpoke = (s: Step) => s.role === "assistant" && (s.kind === "tool_call" || (s.text ?? "").trim() !== "");

export function runEnd(trace: Trace): RunEnd {
  const steps = trace.steps;
  const tail = steps.slice(-4);
  // a cap notice: a harness step, or a framework's short status line in its own voice ("Replan counter exceeded…")
  const cap =
    tail.find((s) => hasTag(s, "step-limit")) ??
    tail.find((s) => (s.kind === "termination" || s.kind === "error" || (s.kind === "event" && s.role !== "assistant") || (s.text ?? "").length < 200) && CAP_RE.test(s.text ?? ""));
  if (cap) return { kind: "cap", step: cap };
  const lastCalls = steps.filter((s) => s.kind === "tool_call").slice(-2);
  const transfer = lastCalls.find((s) => TRANSFER_RE.test(s.tool?.name ?? ""));
  // a transfer counts as the end when no further agent action follows it
  if (transfer && !steps.some((s) => s.index > transfer.index && s.kind === "tool_call")) return { kind: "transfer", step: transfer };
  // an error step, or a crash dump the framework printed into its last step (Magentic-One's "Error processing…")
  const err = tail.find((s) => (s.kind === "error" || (s.index >= steps.length - 2 && CRASH_RE.test(s.text ?? ""))) && INFRA_RE.test(stepContent(s)));
  if (err) return { kind: "infra", step: err };
  const spoken = steps.filter(agentSpoke);
  const last = spoken[spoken.length - 1];
  // empty model turns after the last real one (or no real turn at all): the model stopped answering
  const emptyAfter = steps.some((s) => s.role === "assistant" && hasTag(s, "empty") && (!last || s.index > last.index));
  if (!last || emptyAfter) return { kind: "infra", step: steps.filter((s) => s.role === "assistant" && hasTag(s, "empty")).pop() ?? steps[steps.length - 1] };
  const lastUser = [...steps].reverse().find((s) => s.role === "user" && s.kind === "message" && (s.text ?? "").trim() !== "");
  if (lastUser && lastUser.index > last.index && !hasTag(lastUser, "harness-retry")) return { kind: "user", step: lastUser };
  return { kind: "agent", step: last };
}


/** The step that gives the run's final answer (an agent's, or the framework's closing step), if any. */
export function finalAnswerStep(trace: Trace): Step | undefined {
  return [...trace.steps].reverse().find((s) => (s.role === "assistant" || s.kind === "termination") && FINAL_ANSWER_RE.test(s.text ?? ""));
}

/**
 * The agents' last turns with something to say, before step `end` (default: the whole run): all of a short run, the
 * last `share` of a long one (more than 12 turns) — where a run settles on its answer.
 */
export function finalStretch(trace: Trace, end = trace.steps.length, share = 0.4): Step[] {
  const turns = trace.steps.filter((s) => s.index < end && s.role === "assistant" && (s.text ?? "").trim());
  return turns.length <= 12 ? turns : turns.slice(-Math.ceil(turns.length * share));
}
