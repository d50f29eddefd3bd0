import type { Finding, Step, Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { agentSteps, endedByCap, finding, hasTag, isFailedResult, quote } from "./util.js";

/** Someone other than the agent spoke after `index` (a user turn that is not a harness re-prompt): the run did not end on the agent's own stop. */
const othersSpokeAfter = (trace: Trace, index: number) =>
  trace.steps.some((s) => s.index > index && s.role === "user" && s.kind === "message" && !hasTag(s, "harness-retry") && (s.text ?? "").trim() !== "");

/**
 * FM-3.1 Premature termination.
 * Signals: the run's last word is an announcement of work ("First we'll list…", "Let me check…") with no action
 * after it; the run stops right after an unresolved tool failure; plan items still pending when the run ends; the
 * run ends on a harness complaint that the deliverable is missing.
 * Guards against: runs ended by a step/turn/cost cap (1.5, not 3.1), traces that end on a tool result (the agent
 * never had a turn after it), harness nudges the agent answered, runs where the user ended the conversation,
 * courtesy ("let me know", "I'll be here"), questions to the user, a final answer that merely mentions a next step,
 * and failures the agent acknowledged and worked around. A run whose model produced nothing at all counts only
 * through the harness's missing-deliverable complaint (itbench.md §5.6), never through the intent rule.
 */
// "let me know" and "I'll be here to help" are courtesy, not an announced action
const INTENT_RE = /\b(I will(?! be)|I'll(?! be)|I am going to|I'm going to|let me(?! know)|let's|we'll|we will|next,? I|first,? (we|I)('ll| will)|now I will|I need to|I should)\b/i;
const CONCLUSION_RE = /\b(root cause|in summary|summary of|conclusion|final answer|the answer is|I have (completed|finished|written|created|identified)|task (is )?(complete|completed|done)|TERMINATE|successfully (completed|written|created))\b/i;
const RETRY_RE = /\b(I don't see|I do not see|is missing|not found)\b.{0,80}\b(file|output|deliverable)\b/i;

function lastAgentStep(trace: Trace): Step | undefined {
  const s = agentSteps(trace).filter((x) => !(x.kind === "message" && !(x.text ?? "").trim()));
  return s[s.length - 1];
}

function announcedButStopped(trace: Trace): Finding[] {
  const last = lastAgentStep(trace);
  if (!last || last.role !== "assistant" || (last.kind !== "message" && last.kind !== "reasoning")) return [];
  const text = last.text ?? "";
  if (!INTENT_RE.test(text) || CONCLUSION_RE.test(text)) return [];
  // the announcement must be the tail: nothing but empty turns or harness messages after it
  const after = trace.steps.slice(last.index + 1).filter((s) => s.role === "assistant" && (s.kind === "tool_call" || (s.text ?? "").trim()));
  if (after.length || othersSpokeAfter(trace, last.index)) return [];
  // asking the user for confirmation is waiting, not stopping
  const lastSentence = text.trim().split(/(?<=[.!?])\s+/).pop() ?? "";
  if (/\?\s*$/.test(lastSentence)) return [];
  const anyAction = trace.steps.some((s) => s.kind === "tool_call" || s.kind === "tool_result");
  return [finding("premature-termination", "3.1", [last], quote(last, INTENT_RE), anyAction ? "the run ends on an announced next step that was never taken" : "the agent announced what it would do and stopped without a single action", anyAction ? 0.7 : 0.85)];
}

function stoppedOnFailure(trace: Trace): Finding[] {
  const results = trace.steps.filter((s) => s.kind === "tool_result");
  const lastResult = results[results.length - 1];
  if (!lastResult || !isFailedResult(lastResult)) return [];
  const later = trace.steps.slice(lastResult.index + 1).filter((s) => s.role === "assistant" && (s.kind === "tool_call" || (s.text ?? "").trim()));
  // a trace that ends on the tool result gave the agent no turn after it: the recording (or a cap) stopped, not the agent
  if (later.length === 0) return [];
  if (later.some((s) => s.kind === "tool_call") || othersSpokeAfter(trace, lastResult.index)) return [];
  // a report back (a conclusion, an apology, or a claim — the last is 3.3's to judge) is not a silent stop
  if (later.some((s) => CONCLUSION_RE.test(s.text ?? "") || !INTENT_RE.test(s.text ?? ""))) return [];
  return [finding("premature-termination", "3.1", [lastResult, ...later.slice(0, 1)], quote(lastResult), "the run stops right after a failed tool call without resolving it", 0.6)];
}

function pendingPlan(trace: Trace): Finding[] {
  const plans = trace.steps.filter((s) => s.kind === "plan" && s.tool?.args && typeof s.tool.args === "object");
  const last = plans[plans.length - 1];
  if (!last) return [];
  const items = (last.tool!.args as { plan?: { step?: string; status?: string }[] }).plan;
  if (!Array.isArray(items)) return [];
  const pending = items.filter((i) => i && (i.status === "pending" || i.status === "in_progress"));
  if (!pending.length) return [];
  const actionsAfter = trace.steps.filter((s) => s.index > last.index && s.kind === "tool_call");
  if (actionsAfter.length > 0) return [];
  const label = pending[0]!.step ?? "";
  const ev = label && quote(last).includes(label.slice(0, 30)) ? label.slice(0, 160) : quote(last, /pending|in_progress/);
  return [finding("premature-termination", "3.1", [last], ev, `${pending.length} plan item(s) still pending or in progress when the run ended`, 0.7)];
}

function endsOnMissingDeliverable(trace: Trace): Finding[] {
  const lastUser = [...trace.steps].reverse().find((s) => s.role === "user" && s.kind === "message");
  // only a complaint that names a missing deliverable: "please continue" is a nudge to finish, not a missing-file report
  if (!lastUser || !RETRY_RE.test(lastUser.text ?? "")) return [];
  // did the agent answer the last complaint at all (an action, a message, or a termination of its own)?
  const answered = trace.steps.some((s) => s.index > lastUser.index && s.role === "assistant" && (s.kind === "tool_call" || s.kind === "termination" || (s.text ?? "").trim() !== ""));
  if (answered) return [];
  return [finding("premature-termination", "3.1", [lastUser], quote(lastUser, RETRY_RE), "the run ended with the harness still reporting the deliverable missing", 0.8)];
}

export const prematureTermination: Detector = {
  id: "premature-termination",
  mode: "3.1",
  description: "Runs that end on an announcement, on an unresolved failure, with plan items pending, or without their deliverable.",
  detect: (trace) => {
    // a run ended by a step, turn or cost cap did not stop early by the agent's choice: that is 1.5's to report
    if (endedByCap(trace)) return [];
    return [...endsOnMissingDeliverable(trace), ...announcedButStopped(trace), ...pendingPlan(trace), ...stoppedOnFailure(trace)];
  },
};
