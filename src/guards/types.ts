/**
 * The framework-neutral core of faultline's runtime guards.
 *
 * An agent loop reports what happens as {@link GuardEvent}s; each {@link Guard} answers with a {@link GuardDecision}
 * whose `reason` and `mode` tie the intervention to the MAST failure mode it prevents. Guards are synchronous and keep
 * their own state, so the same guard can watch a live loop or replay a recorded trace.
 */

/** The MAST v3 codes the guards intervene on (see docs in each guard). */
export const GUARD_MODES = ["1.3", "1.4", "1.5", "2.2", "2.6", "3.1", "3.2", "3.3"] as const;
export type GuardMode = (typeof GUARD_MODES)[number];

export interface ToolCallInfo {
  /** The id pairing this call with its result, when the loop has one. */
  id?: string;
  name: string;
  /** Parsed arguments when they were JSON; the raw string otherwise. */
  args?: unknown;
}

export interface ToolResultInfo {
  callId?: string;
  name: string;
  /** The arguments of the call this result answers, when known: predicates may need them. */
  args?: unknown;
  output?: string;
  exitCode?: number;
  isError?: boolean;
}

export interface PlanItem {
  text: string;
  status?: "pending" | "in_progress" | "done";
}

interface EventBase {
  /** When it happened (ms since epoch), for recorded events; live guards fall back to their clock. */
  at?: number;
  /** The canonical step this event was derived from (replay), so decisions can cite it. */
  step?: number;
  agent?: string;
}

/** The agent said something. A user message may be the task, a harness nudge or a clarification answer. */
export interface MessageEvent extends EventBase {
  type: "message";
  role: "user" | "assistant" | "system";
  text: string;
  /** Hidden reasoning rather than a visible message. */
  reasoning?: boolean;
  /**
   * Tool calls the model emitted in the same turn, when the loop reports them *before* this message
   * (the AI SDK runs tools before its step callback). Lets guards compare what was said with what was done.
   */
  calls?: ToolCallInfo[];
}

export interface ToolCallEvent extends EventBase {
  type: "tool_call";
  call: ToolCallInfo;
}

export interface ToolResultEvent extends EventBase {
  type: "tool_result";
  result: ToolResultInfo;
}

export interface PlanEvent extends EventBase {
  type: "plan";
  text?: string;
  items?: PlanItem[];
}

/**
 * The agent tries to end the run (a final answer, or a turn without tool calls that is not a question).
 * `claimsSuccess` is true when its text explicitly claims the work is done or verified (see claims.ts).
 */
export interface CompletionEvent extends EventBase {
  type: "completion";
  text: string;
  claimsSuccess: boolean;
}

/** Tokens consumed by one model call. */
export interface UsageEvent extends EventBase {
  type: "usage";
  input?: number;
  output?: number;
}

export type GuardEvent = MessageEvent | ToolCallEvent | ToolResultEvent | PlanEvent | CompletionEvent | UsageEvent;
export type GuardEventType = GuardEvent["type"];

/**
 * What a guard asks the loop to do. Meaning per event:
 * - `continue`: nothing to do (it may still carry an informational `message`, e.g. a state summary).
 * - `warn`: go on, but inject `message` into the conversation before the next model call.
 * - `block`: do not perform this action (a tool call is not executed; a completion is refused); tell the model why.
 * - `require`: the run may not end or proceed until a named step happens (e.g. the deliverable is written).
 * - `stop`: end the run now.
 */
export type GuardAction = "continue" | "warn" | "block" | "require" | "stop";

export interface ContinueDecision {
  action: "continue";
  guard: string;
  reason: string;
  mode?: GuardMode;
  /** An informational message to inject (summaries); not an intervention. */
  message?: string;
}

export interface InterventionDecision {
  action: "warn" | "block" | "require" | "stop";
  guard: string;
  /** Why, for logs and replay reports: names the evidence (events, counts, rule names). */
  reason: string;
  /** The MAST mode this intervention prevents. */
  mode: GuardMode;
  /** What the model is told. */
  message: string;
}

export type GuardDecision = ContinueDecision | InterventionDecision;

/** What a guard sees besides the event. */
export interface GuardContext {
  /** The event's time in ms: `event.at` when recorded, otherwise the clock's now. */
  now: number;
  /** 0-based position of the event in the run. */
  seq: number;
}

/**
 * What a run is about, told to the guards before its first event ({@link Guard.begin}): a replay knows it from the
 * recorded trace; a live loop may pass it. Every field is optional; absent means unknown.
 */
export interface RunContext {
  /** The task statement. */
  task?: string;
  /** The benchmark the task comes from (`itbench-sre`, `swe-bench`, `tau-bench/retail`…): selects per-benchmark settings. */
  benchmark?: string;
  /** Whether the agent can act on an environment (has tools); undefined when unknown. */
  tools?: boolean;
}

export interface Guard {
  readonly name: string;
  /** The MAST modes this guard prevents. */
  readonly modes: readonly GuardMode[];
  observe(event: GuardEvent, ctx: GuardContext): GuardDecision;
  /**
   * Told the combined outcome for the event once every guard has answered, so state changes that depend on it
   * (e.g. a completion that was actually accepted) happen only when the action went ahead.
   */
  settle?(event: GuardEvent, outcome: GuardAction, ctx: GuardContext): void;
  /** Forget everything; ready for a new run. */
  reset(): void;
  /** Told what the new run is about, after {@link reset} and before its first event (optional). */
  begin?(run: RunContext): void;
}

/** Time source, injectable so time budgets are testable. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests and replays without timestamps. */
export class ManualClock implements Clock {
  constructor(private ms = 0) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

export function proceed(guard: string, reason: string, extra: { mode?: GuardMode; message?: string } = {}): ContinueDecision {
  const d: ContinueDecision = { action: "continue", guard, reason };
  if (extra.mode) d.mode = extra.mode;
  if (extra.message) d.message = extra.message;
  return d;
}

export function intervene(
  action: InterventionDecision["action"],
  guard: string,
  mode: GuardMode,
  reason: string,
  message: string,
): InterventionDecision {
  return { action, guard, mode, reason, message };
}

/** Events that are the agent acting: what step budgets and progress windows count. */
export function isAgentAction(e: GuardEvent): boolean {
  return e.type === "tool_call" || e.type === "completion" || (e.type === "message" && e.role === "assistant" && !e.reasoning);
}

/** Runs one guard on one event outside a GuardSet (settles it with its own decision). */
export function runGuard(guard: Guard, event: GuardEvent, ctx: GuardContext): GuardDecision {
  const d = guard.observe(event, ctx);
  guard.settle?.(event, d.action, ctx);
  return d;
}
