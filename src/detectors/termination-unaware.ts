import type { Finding, Step, Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, hasTag, quote } from "./util.js";

/**
 * FM-1.5 Unaware of termination conditions (guideline v2: a cap is not 1.5 by itself; 1.5 needs the agents to have
 * reached, or been given, a point where they should have stopped and to have kept going).
 * Signals: "continue" nudges repeated; work carrying on after the agent itself declared the task finished (e.g.
 * AG2's TERMINATE followed by more turns).
 * Guards against: step/turn/time caps and harness re-prompts for a missing deliverable (those are 3.1's when the run
 * ended before its objective), a single user follow-up that adds a new request, designed termination checks
 * (Magentic-One's "termination condition" steps, and its sub-agents' TERMINATE that only ends their own turn), a
 * closing courtesy message after the final answer, format-error re-prompts, and retry wording in peer agents'
 * messages or a simulated user's reasoning.
 */
const NUDGE_RE = /^\s*(please\s+)?(continue|go on|keep going|proceed)[.!]?\s*$/i;
const DONE_RE = /^\s*TERMINATE\s*$|\bTERMINATE\s*$|\b(the task is (now )?(complete|completed|done|finished)(?! (when|if|once))|final answer\s*:)/i;

/**
 * A message from the harness or a human, not a peer agent speaking in the user role (ChatDev reviewers, AG2 proxies)
 * and not a simulated user's private reasoning.
 */
const fromHarnessOrHuman = (s: Step) =>
  s.role === "user" && s.kind === "message" && /^(user|human|harness|system|environment)$/i.test(s.agent) && (s.text ?? "").length < 600;

function nudges(trace: Trace): Finding[] {
  const n = trace.steps.filter((s) => fromHarnessOrHuman(s) && !hasTag(s, "harness-retry") && NUDGE_RE.test(s.text ?? ""));
  return n.length >= 2 ? [finding("termination-unaware", "1.5", n, quote(n[0]!), `${n.length} bare "continue" nudges were needed`, 0.7)] : [];
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
  description: "Repeated continue nudges, and work carrying on after the agents declared the task finished.",
  detect: (trace) => [...nudges(trace), ...afterDone(trace)],
};
