import { isCompletionCall } from "../trace/actions.js";
import type { Step } from "../trace/index.js";
import { detectCompletionClaim, endsWithQuestion, type ClaimDetection } from "../trace/claims.js";
import type { GuardSet, GuardVerdict } from "./pipeline.js";
import type { GuardEvent, InterventionDecision, PlanItem, RunContext, ToolResultInfo } from "./types.js";

export interface ReplayEventOptions {
  /** Decides whether an assistant text claims success (default: {@link detectCompletionClaim}). */
  detectClaim?: (text: string) => ClaimDetection;
}

export interface ReplayStepsOptions extends ReplayEventOptions {
  /** What the run is about (task, benchmark, tools), told to the guards before the first event. */
  run?: RunContext;
}

const isAssistantText = (s: Step) => s.kind === "message" && s.role === "assistant";
/** Steps that are the agent acting; reasoning, usage-only calls and bookkeeping events are not. */
const isAgentStep = (s: Step) => isAssistantText(s) || s.kind === "tool_call" || (s.kind === "plan" && s.role === "assistant");

function timeOf(s: Step): number | undefined {
  if (!s.time) return undefined;
  const t = Date.parse(s.time);
  return Number.isFinite(t) ? t : undefined;
}

function planItems(args: unknown): PlanItem[] | undefined {
  if (!args || typeof args !== "object") return undefined;
  const a = args as Record<string, unknown>;
  const list = Array.isArray(a.plan) ? a.plan : Array.isArray(a.todos) ? a.todos : Array.isArray(a.items) ? a.items : undefined;
  if (!list) return undefined;
  return list.flatMap((x): PlanItem[] => {
    if (typeof x === "string") return [{ text: x }];
    if (!x || typeof x !== "object") return [];
    const o = x as Record<string, unknown>;
    const text = [o.step, o.text, o.content, o.title].find((v) => typeof v === "string") as string | undefined;
    if (!text) return [];
    const st = String(o.status ?? "").toLowerCase();
    const status = st === "completed" || st === "done" ? "done" : st === "in_progress" || st === "in-progress" ? "in_progress" : "pending";
    return [{ text, status }];
  });
}

/**
 * Turns canonical steps into the events a live loop would have reported, so recorded traces can be replayed through
 * the guards (`faultline replay`). Mapping:
 * - user / system `message` → message; assistant `message` → message, or **completion** (below); `reasoning` →
 *   message with `reasoning: true`.
 * - `tool_call` → tool_call (and a tool_result right after it when the source stores the output on the call step);
 *   a final-answer tool (`submit`, `final_answer`, `task_complete`…) is followed by a completion that claims success.
 * - `tool_result` → tool_result, with the tool name and arguments of its linked call.
 * - `plan` → plan (items read from `plan`/`todos`/`items` arguments when present), plus a tool_call when it was a call.
 * - `usage` on any step → a usage event before the step's own event.
 * - `llm_call`, `handoff`, `termination`, `error` and `event` steps carry no agent action and map to nothing but usage.
 * Completion: an assistant text becomes a completion event when it is the run's last agent action, when it claims
 * success (see claims.ts) and the agent yields afterwards (a user message or the end comes before any tool call,
 * handoff or further assistant message), or when the harness answers the turn with a retry (a user message tagged
 * `harness-retry`): the agent stopped, and the harness sent it back — what a live loop reports as an attempt to end.
 * A text that ends with a question hands the turn to the user and stays a message.
 */
export function guardEventsFromSteps(steps: readonly Step[], opts: ReplayEventOptions = {}): GuardEvent[] {
  const detect = opts.detectClaim ?? detectCompletionClaim;
  let lastAgent = -1;
  for (let i = steps.length - 1; i >= 0; i--)
    if (isAgentStep(steps[i]!)) {
      lastAgent = i;
      break;
    }
  // The agent yielded when the user speaks (or the trace ends) before the agent acts again. Another assistant message or
  // a handoff first means the run went on: in multi-agent traces one agent's "done" is not the end of the run.
  const yieldsAfter = (i: number) => {
    for (let j = i + 1; j < steps.length; j++) {
      const s = steps[j]!;
      if (s.kind === "tool_call" || s.kind === "plan" || s.kind === "handoff") return false;
      if (s.kind === "message" && s.role === "assistant" && (s.text ?? "").trim()) return false;
      if (s.kind === "message" && s.role === "user") return true;
    }
    return true;
  };

  // A turn the harness answered with a retry (tagged `harness-retry` by the adapter: "I don't see agent_output.json…")
  // was the agent trying to end: the harness refused it, as a termination guard would have.
  const harnessRefused = (i: number) => {
    for (let j = i + 1; j < steps.length; j++) {
      const s = steps[j]!;
      if (s.kind === "tool_call" || s.kind === "plan" || s.kind === "handoff") return false;
      if (s.kind === "message" && s.role === "assistant" && (s.text ?? "").trim()) return false;
      if (s.kind === "message" && s.role === "user") return s.tags?.includes("harness-retry") ?? false;
    }
    return false;
  };

  const events: GuardEvent[] = [];
  steps.forEach((s, i) => {
    const base = { step: s.index, agent: s.agent, ...(timeOf(s) !== undefined ? { at: timeOf(s)! } : {}) };
    if (s.usage && (s.usage.input !== undefined || s.usage.output !== undefined))
      events.push({ type: "usage", ...base, ...(s.usage.input !== undefined ? { input: s.usage.input } : {}), ...(s.usage.output !== undefined ? { output: s.usage.output } : {}) });
    const text = s.text ?? "";
    switch (s.kind) {
      case "message": {
        if (s.role === "tool") return; // tool output is read from tool_result steps
        if (s.role !== "assistant") {
          events.push({ type: "message", ...base, role: s.role, text });
          return;
        }
        // The claim is read only for a text that may be an attempt to end (most are followed by the agent acting):
        // the claim detector is the costliest part of building events.
        let completion = false;
        let claimsSuccess = false;
        if (!endsWithQuestion(text)) {
          const ends = i === lastAgent || harnessRefused(i);
          if (ends || yieldsAfter(i)) {
            claimsSuccess = detect(text).claimsSuccess;
            completion = ends || claimsSuccess;
          }
        }
        if (completion) events.push({ type: "completion", ...base, text, claimsSuccess });
        else events.push({ type: "message", ...base, role: "assistant", text });
        return;
      }
      case "reasoning":
        if (text) events.push({ type: "message", ...base, role: "assistant", text, reasoning: true });
        return;
      case "plan": {
        const items = planItems(s.tool?.args);
        events.push({ type: "plan", ...base, ...(text ? { text } : {}), ...(items ? { items } : {}) });
        if (s.tool) events.push({ type: "tool_call", ...base, call: { name: s.tool.name, args: s.tool.args, ...(s.tool.callId ? { id: s.tool.callId } : {}) } });
        return;
      }
      case "tool_call": {
        if (!s.tool) return;
        const id = s.tool.callId ?? `step-${s.index}`;
        events.push({ type: "tool_call", ...base, call: { id, name: s.tool.name, args: s.tool.args } });
        if (s.tool.output !== undefined && s.tool.resultIndex === undefined) events.push({ type: "tool_result", ...base, result: resultOf(s, s, id) });
        // a final-answer tool (`submit`, `final_answer`) is the agent ending the run and saying it is done
        if (isCompletionCall(s.tool)) events.push({ type: "completion", ...base, text: typeof s.tool.args === "string" ? s.tool.args : JSON.stringify(s.tool.args ?? {}), claimsSuccess: true });
        return;
      }
      case "tool_result": {
        const call = s.tool?.callIndex !== undefined ? steps.find((x) => x.index === s.tool!.callIndex) : undefined;
        const id = call ? call.tool?.callId ?? `step-${call.index}` : s.tool?.callId;
        events.push({ type: "tool_result", ...base, result: resultOf(s, call, id) });
        return;
      }
      default:
        return;
    }
  });
  return events;
}

function resultOf(s: Step, call: Step | undefined, id: string | undefined): ToolResultInfo {
  const t = s.tool;
  const r: ToolResultInfo = { name: call?.tool?.name ?? t?.name ?? "unknown" };
  if (id !== undefined) r.callId = id;
  const args = call?.tool?.args ?? (s.kind === "tool_call" ? t?.args : undefined);
  if (args !== undefined) r.args = args;
  const output = t?.output ?? s.text;
  if (output !== undefined) r.output = output;
  if (t?.exitCode !== undefined) r.exitCode = t.exitCode;
  if (t?.isError !== undefined) r.isError = t.isError;
  return r;
}

/** One intervention found by a replay, tied to the step it would have happened at. */
export interface ReplayIntervention extends InterventionDecision {
  seq: number;
  step?: number;
}

export interface ReplayResult {
  events: GuardEvent[];
  verdicts: GuardVerdict[];
  /** Every intervention of every verdict, in order. */
  interventions: ReplayIntervention[];
  /** Where the guards would have ended the run, if they would have. */
  stoppedAt?: { seq: number; step?: number };
}

/** Replays steps through a guard set (started afresh with `opts.run`) and collects what the guards would have done. */
export function replaySteps(steps: readonly Step[], set: GuardSet, opts: ReplayStepsOptions = {}): ReplayResult {
  set.begin(opts.run ?? {});
  const events = guardEventsFromSteps(steps, opts);
  const verdicts = set.run(events);
  const interventions = verdicts.flatMap((v) => v.interventions.map((d) => ({ ...d, seq: v.seq, ...(v.event.step !== undefined ? { step: v.event.step } : {}) })));
  const result: ReplayResult = { events, verdicts, interventions };
  const stop = verdicts.find((v) => v.action === "stop");
  if (stop) result.stoppedAt = { seq: stop.seq, ...(stop.event.step !== undefined ? { step: stop.event.step } : {}) };
  return result;
}
