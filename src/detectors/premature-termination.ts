import type { Finding, Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { CONCLUSION_RE, HYPOTHETICAL_RE, INTENT_RE, UNOBTAINED_RE } from "../trace/claims.js";
import { isCompletionCall } from "../trace/actions.js";
import type { Detector } from "./types.js";
import { failed, type DetectionContext } from "./context.js";
import { finalStretch, runEnd, TRANSFER_RE } from "./run-end.js";
import { ownWords, PRESENT_RE, presentsUnretrieved } from "./text-signals.js";
import { CONSEQUENTIAL_RE } from "./task-spec-violation.js";
import { agentSteps, finding, hasTag, isFailedResult, isMutating, quote, resultOf } from "./util.js";

/** Someone other than the agent spoke after `index` (a user turn that is not a harness re-prompt): the run did not end on the agent's own stop. */
const othersSpokeAfter = (trace: Trace, index: number) =>
  trace.steps.some((s) => s.index > index && s.role === "user" && s.kind === "message" && !hasTag(s, "harness-retry") && (s.text ?? "").trim() !== "");

/**
 * FM-3.1 Premature termination (guideline v2: every run that ends before its objective is met without having
 * delivered its final answer or deliverable, whatever ended it — the agent, the user, a cap or an infrastructure
 * fault — and a run that delivered an answer before the information it needed was obtained).
 * Signals:
 * - steps: the run's last word is an announcement of work with no action after it; the run stops right after an
 *   unresolved tool failure; plan items still pending; the harness still reporting the deliverable missing; a
 *   completion call that says the task was not completed.
 * - task: the contract names a deliverable (ITBench `agent_output.json`) and no step ever writes it.
 * - outcome: a failed run that ended on a cap, a transfer to a human, or an infrastructure fault; a failed run whose
 *   agents said they could not obtain information (or used hypothetical data) and answered anyway; a failed coding
 *   run submitted without a single change that took effect.
 * Guards against: successful runs; traces that end on a tool result (the agent never had a turn after it), harness
 * nudges the agent answered, runs where the user ended the conversation, courtesy ("let me know", "I'll be here"),
 * questions to the user, a final answer that merely mentions a next step, failures the agent worked around, and
 * admissions of missing information that a later retrieval resolved (only the final stretch of the run counts).
 */
const RETRY_RE = /\b(I don't see|I do not see|is missing|not found)\b.{0,80}\b(file|output|deliverable)\b/i;

function lastAgentStep(trace: Trace): Step | undefined {
  const s = agentSteps(trace).filter((x) => !(x.kind === "message" && !(x.text ?? "").trim()));
  return s[s.length - 1];
}

function announcedButStopped(trace: Trace): Finding[] {
  const last = lastAgentStep(trace);
  if (last?.role !== "assistant" || (last.kind !== "message" && last.kind !== "reasoning")) return [];
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

/** The contract's deliverable was never written by any step (ITBench `agent_output.json`). */
function deliverableNeverWritten(trace: Trace, ctx: DetectionContext): Finding[] {
  const d = ctx.contract.deliverables[0];
  if (!d) return [];
  const name = d.path.split("/").pop()!;
  const wrote = trace.steps.some((s) => s.kind === "tool_call" && s.role === "assistant" && isMutating(s) && stepContent(s).includes(name) && !isFailedResult(resultOf(trace, s)));
  if (wrote) return [];
  // cite what shows the gap: the harness's complaint, else the agent's last words, else the requirement itself
  const complaint = [...trace.steps].reverse().find((s) => s.role === "user" && RETRY_RE.test(s.text ?? ""));
  const last = lastAgentStep(trace);
  const stated = d.step >= 0 ? trace.steps[d.step] : undefined;
  const cite = complaint ?? (last && (last.text ?? "").trim() ? last : stated);
  if (!cite) return [];
  const ev = cite === stated ? d.quote : quote(cite, cite === complaint ? RETRY_RE : undefined);
  return [finding("premature-termination", "3.1", [cite], ev, `the run ended without ever writing its required deliverable ${d.path}`, 0.85, ["steps", "task"])];
}

/** The user asked for a human agent shortly before `index`. */
const userAskedForHuman = (trace: Trace, index: number) =>
  trace.steps.filter((s) => s.index < index && s.role === "user" && s.kind === "message").slice(-2).some((s) => /\b(?:human|real person|representative|supervisor|manager|live agent|transfer me)\b/i.test(s.text ?? ""));

/** A failed run that was ended by a cap, a transfer to a human, or an infrastructure fault. */
function endedEarly(trace: Trace, ctx: DetectionContext): Finding[] {
  const end = runEnd(trace);
  if (end.kind !== "cap" && end.kind !== "transfer" && end.kind !== "infra") return [];
  // an empty model turn has nothing to quote: cite the last step that says something instead
  const cite = end.step && stepContent(end.step).trim() ? end.step : [...trace.steps].reverse().find((s) => stepContent(s).trim() && s.role !== "system");
  if (!cite) return [];
  const expectedLeft = end.kind === "transfer" && ctx.contract.expectedActions.some((a) => !TRANSFER_RE.test(a.name));
  // a transfer the user asked for, when nothing consequential was expected of the agent, ended nothing early
  const writesExpected = ctx.contract.expectedActions.some((a) => CONSEQUENTIAL_RE.test(a.name) && !TRANSFER_RE.test(a.name));
  if (end.kind === "transfer" && ctx.contract.expectedActions.length && !writesExpected && userAskedForHuman(trace, end.step!.index)) return [];
  const why = { cap: "a step, turn, message or time cap ended the failed run before its objective was met", transfer: "the failed run was handed to a human before its objective was met", infra: "an infrastructure fault or empty model turns ended the failed run before it delivered" }[end.kind];
  return [finding("premature-termination", "3.1", [cite], quote(cite), why, end.kind === "infra" ? 0.8 : 0.75, expectedLeft ? ["steps", "outcome", "expected"] : ["steps", "outcome"])];
}

/**
 * A failed run whose agents said, in its final stretch, that they could not obtain information (or that they were
 * using hypothetical data) and then answered anyway: it ended before the information was obtained.
 */
function answeredWithoutInformation(trace: Trace, ctx: DetectionContext): Finding[] {
  // service dialogues (expected actions) refuse requests in these words ("I cannot process this because…"): their
  // early endings are read off the expected actions instead
  if (ctx.contract.expectedActions.length) return [];
  const turns = finalStretch(trace);
  if (turns.length < 2) return [];
  const words = new Map(turns.map((s) => [s.index, ownWords(trace, s)]));
  // an admission of missing information late in the run (an early one a later retrieval may have resolved), or data
  // the agents made up or presented without the lookup that should have produced it (nothing later makes it real)
  const late = turns.slice(-Math.max(3, Math.ceil(turns.length * 0.4)));
  const admission = late.find((s) => UNOBTAINED_RE.test(words.get(s.index)!)) ?? turns.find((s) => HYPOTHETICAL_RE.test(words.get(s.index)!) || presentsUnretrieved(s) !== null);
  if (!admission) return [];
  const own = words.get(admission.index)!;
  const re = UNOBTAINED_RE.test(own) ? UNOBTAINED_RE : HYPOTHETICAL_RE.test(own) ? HYPOTHETICAL_RE : PRESENT_RE;
  return [finding("premature-termination", "3.1", [admission], quote(admission, re), "the failed run ended with an answer although the information it needed was never obtained", 0.65, ["steps", "outcome"])];
}

/** A completion call that says the task was not completed, or a failed coding run submitted with no change made. */
function gaveUp(trace: Trace, ctx: DetectionContext): Finding[] {
  const done = [...trace.steps].reverse().find((s) => s.kind === "tool_call" && s.tool !== undefined && isCompletionCall(s.tool));
  if (!done) {
    const term = [...trace.steps].reverse().find((s) => s.kind === "termination" && s.role === "assistant" && /task_completed["']?\s*[:=]\s*["']?false/i.test(stepContent(s)));
    return term ? [finding("premature-termination", "3.1", [term], quote(term, /task_completed/i), "the agent ended the run saying the task was not completed", 0.8)] : [];
  }
  if (/task_completed["']?\s*[:=]\s*["']?false/i.test(stepContent(done)))
    return [finding("premature-termination", "3.1", [done], quote(done, /task_completed/i), "the agent ended the run saying the task was not completed", 0.8)];
  if (!failed(ctx)) return [];
  const changes = trace.steps.filter((s) => s.index < done.index && s.kind === "tool_call" && s.role === "assistant" && isMutating(s) && !isFailedResult(resultOf(trace, s)));
  const edits = trace.steps.filter((s) => s.index < done.index && s.kind === "tool_call" && s.role === "assistant" && isMutating(s));
  // only where the agent tried to change something (a read-only question answered by submit is not this)
  if (changes.length > 0 || edits.length === 0) return [];
  return [finding("premature-termination", "3.1", [done], quote(done), `the failed run was submitted although none of its ${edits.length} attempted change(s) took effect`, 0.7, ["steps", "outcome"])];
}

/** A failed run that ended without ever attempting the consequential actions the dataset expects of it. */
function expectedNeverAttempted(trace: Trace, ctx: DetectionContext): Finding[] {
  const writes = ctx.contract.expectedActions.filter((a) => CONSEQUENTIAL_RE.test(a.name) && !TRANSFER_RE.test(a.name));
  if (!writes.length) return [];
  const names = new Set(writes.map((a) => a.name));
  if (trace.steps.some((s) => s.kind === "tool_call" && s.role === "assistant" && names.has(s.tool?.name ?? ""))) return [];
  // a transfer or a cap is reported by endedEarly; here the conversation simply ended
  if (runEnd(trace).kind !== "agent" && runEnd(trace).kind !== "user") return [];
  const last = lastAgentStep(trace);
  if (!last || !(stepContent(last).trim())) return [];
  return [finding("premature-termination", "3.1", [last], quote(last), `the failed run ended without ever attempting the expected ${[...names].join(", ")}`, 0.65, ["steps", "expected", "outcome"])];
}

export const prematureTermination: Detector = {
  id: "premature-termination",
  mode: "3.1",
  description: "Runs that end before their objective: on an announcement, a failure, pending plan items, a missing deliverable, a cap, a transfer, an infrastructure fault, or without the information the answer needed.",
  detect: (trace, ctx) => {
    if (ctx.outcome.success === true) return [];
    const out = [...endsOnMissingDeliverable(trace), ...announcedButStopped(trace), ...pendingPlan(trace), ...stoppedOnFailure(trace), ...deliverableNeverWritten(trace, ctx), ...gaveUp(trace, ctx)];
    if (failed(ctx)) out.push(...endedEarly(trace, ctx), ...answeredWithoutInformation(trace, ctx), ...expectedNeverAttempted(trace, ctx));
    return out;
  },
};
