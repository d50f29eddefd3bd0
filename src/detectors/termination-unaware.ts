import type { Finding, Step, Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, hasTag, LIMIT_RE, quote } from "./util.js";

/**
 * FM-1.5 Unaware of termination conditions.
 * Signals: the harness has to re-prompt for a missing deliverable (tagged `harness-retry`, or the usual wording);
 * "continue" nudges repeated; a step or turn limit hit; work carrying on after the agent itself declared the task
 * finished (e.g. AG2's TERMINATE followed by more turns).
 * Guards against: a single user follow-up that adds a new request, designed termination checks (Magentic-One's
 * "termination condition" steps, and its sub-agents' TERMINATE that only ends their own turn), a closing courtesy
 * message after the final answer, format-error re-prompts (tagged `format-error`: a parsing problem, not a
 * termination one), and retry wording in peer agents' messages or a simulated user's reasoning.
 * Runs whose every model turn was empty still count when the harness re-prompts: itbench.md §5.6 lists those
 * re-prompts as the FM-1.5 / FM-3.1 signal of the ITBench study (the `never_acted` signal is reported beside it).
 */
const RETRY_RE = /\b(I don't see|I do not see|could not find|couldn't find|is missing|not found)\b.{0,80}\b(file|output|deliverable|answer)\b|\bplease (resume|continue)\b/i;
const NUDGE_RE = /^\s*(please\s+)?(continue|go on|keep going|proceed)[.!]?\s*$/i;
const DONE_RE = /^\s*TERMINATE\s*$|\bTERMINATE\s*$|\b(the task is (now )?(complete|completed|done|finished)(?! (when|if|once))|final answer\s*:)/i;

/**
 * A message from the harness or a human, not a peer agent speaking in the user role (ChatDev reviewers, AG2 proxies)
 * and not a simulated user's private reasoning.
 */
const fromHarnessOrHuman = (s: Step) =>
  s.role === "user" && s.kind === "message" && /^(user|human|harness|system|environment)$/i.test(s.agent) && (s.text ?? "").length < 600;

function harnessRetries(trace: Trace): Finding[] {
  const firstAgentStep = trace.steps.findIndex((s) => s.role === "assistant");
  // the harness's own tag is authoritative; untagged wording counts only from the harness or a human
  const retries = trace.steps.filter(
    (s) => s.role === "user" && s.index > firstAgentStep && firstAgentStep >= 0 && !hasTag(s, "format-error") && (hasTag(s, "harness-retry") || (fromHarnessOrHuman(s) && RETRY_RE.test(s.text ?? ""))),
  );
  if (!retries.length) return [];
  return [
    finding("termination-unaware", "1.5", retries, quote(retries[0]!, RETRY_RE), `the harness had to re-prompt ${retries.length} time(s) because the run stopped without its deliverable`, retries.length >= 2 ? 0.85 : 0.7),
  ];
}

function nudges(trace: Trace): Finding[] {
  const n = trace.steps.filter((s) => fromHarnessOrHuman(s) && !hasTag(s, "harness-retry") && NUDGE_RE.test(s.text ?? ""));
  return n.length >= 2 ? [finding("termination-unaware", "1.5", n, quote(n[0]!), `${n.length} bare "continue" nudges were needed`, 0.7)] : [];
}

function limits(trace: Trace): Finding[] {
  const tail = trace.steps.slice(-6);
  const hit =
    tail.find((s) => hasTag(s, "step-limit")) ??
    tail.find((s) => (s.kind === "termination" || s.kind === "error" || s.kind === "event") && s.role !== "user" && LIMIT_RE.test(s.text ?? ""));
  return hit ? [finding("termination-unaware", "1.5", [hit], quote(hit, LIMIT_RE), "the run ended on a step, turn or cost limit instead of a decision to stop", 0.8)] : [];
}

/** Frameworks whose sub-agents sign off their own turn with TERMINATE while an orchestrator owns the run's end. */
const ORCHESTRATED = new Set(["magentic-one"]);

function afterDone(trace: Trace): Finding[] {
  if (ORCHESTRATED.has((trace.framework ?? "").toLowerCase())) return [];
  // the first agent message often restates the task ("the task is complete when…"): a declaration comes later
  const firstAgent = trace.steps.find((s) => s.role === "assistant")?.index ?? -1;
  const done = trace.steps.find((s) => s.role === "assistant" && s.kind === "message" && s.index > firstAgent && DONE_RE.test(s.text ?? ""));
  if (!done) return [];
  const later: Step[] = trace.steps.filter(
    (s) => s.index > done.index && s.role === "assistant" && (s.kind === "tool_call" || ((s.kind === "message" || s.kind === "handoff") && (s.text ?? "").trim().length > 40)),
  );
  return later.length >= 3
    ? [finding("termination-unaware", "1.5", [done, ...later.slice(0, 5)], quote(done, DONE_RE), `the agent declared the task finished, then took ${later.length} more steps`, 0.7)]
    : [];
}

export const terminationUnaware: Detector = {
  id: "termination-unaware",
  mode: "1.5",
  description: "Harness re-prompts for a missing deliverable, repeated continue nudges, step/turn limits, and work after declaring completion.",
  detect: (trace) => [...harnessRetries(trace), ...nudges(trace), ...limits(trace), ...afterDone(trace)],
};
