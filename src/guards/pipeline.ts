import {
  systemClock,
  type Clock,
  type Guard,
  type GuardAction,
  type GuardContext,
  type GuardDecision,
  type GuardEvent,
  type InterventionDecision,
  type RunContext,
} from "./types.js";

/**
 * How decisions combine: the strongest wins. `stop` ends the run, so it beats refusing one action (`block`), which
 * beats asking for a step first (`require`), which beats a note to the model (`warn`). Ties keep guard order.
 */
export const ACTION_PRECEDENCE: Readonly<Record<GuardAction, number>> = { continue: 0, warn: 1, require: 2, block: 3, stop: 4 };

export function strongest(a: GuardAction, b: GuardAction): GuardAction {
  return ACTION_PRECEDENCE[b] > ACTION_PRECEDENCE[a] ? b : a;
}

export interface GuardError {
  guard: string;
  error: string;
}

/** The combined answer of a GuardSet to one event. */
export interface GuardVerdict {
  /** 0-based position of the event in the run. */
  seq: number;
  event: GuardEvent;
  /** The combined action (highest precedence among the guards' decisions). */
  action: GuardAction;
  /** The intervention that decided the action (highest precedence; first guard on ties). */
  primary?: InterventionDecision;
  /** Every intervention, highest precedence first. */
  interventions: InterventionDecision[];
  /** Messages for the model: interventions by precedence, then informational messages (summaries). */
  messages: string[];
  /** Every guard's decision, in guard order. */
  decisions: GuardDecision[];
  /** Guards that threw on this event; they are treated as `continue` and reported here, never hidden. */
  errors: GuardError[];
}

export interface GuardSetOptions {
  /** Time source for events without their own `at` (default: the system clock). */
  clock?: Clock;
}

/**
 * Runs several guards on each event and combines their decisions with {@link ACTION_PRECEDENCE}.
 * After every guard has answered, each is told the combined outcome (`settle`), so a completion one guard refused is
 * not recorded as accepted by another.
 */
export class GuardSet {
  readonly guards: readonly Guard[];
  private readonly clock: Clock;
  private seq = 0;
  private stoppedAt?: number;

  constructor(guards: Guard[], opts: GuardSetOptions = {}) {
    const seen = new Set<string>();
    for (const g of guards) {
      if (seen.has(g.name)) throw new Error(`two guards are named "${g.name}"; give each guard a distinct name`);
      seen.add(g.name);
    }
    this.guards = guards;
    this.clock = opts.clock ?? systemClock;
  }

  /** True once any event was answered with `stop`. */
  get stopped(): boolean {
    return this.stoppedAt !== undefined;
  }

  /** Sequence number of the first `stop` verdict. */
  get stoppedAtSeq(): number | undefined {
    return this.stoppedAt;
  }

  get<T extends Guard>(name: string): T | undefined {
    return this.guards.find((g) => g.name === name) as T | undefined;
  }

  observe(event: GuardEvent): GuardVerdict {
    const ctx: GuardContext = { now: event.at ?? this.clock.now(), seq: this.seq++ };
    const decisions: GuardDecision[] = [];
    const errors: GuardError[] = [];
    for (const g of this.guards) {
      try {
        decisions.push(g.observe(event, ctx));
      } catch (e) {
        errors.push({ guard: g.name, error: (e as Error).message });
        decisions.push({ action: "continue", guard: g.name, reason: `guard error: ${(e as Error).message}` });
      }
    }
    const interventions = decisions
      .filter((d): d is InterventionDecision => d.action !== "continue")
      .map((d, i) => ({ d, i }))
      .sort((a, b) => ACTION_PRECEDENCE[b.d.action] - ACTION_PRECEDENCE[a.d.action] || a.i - b.i)
      .map(({ d }) => d);
    const action = interventions[0]?.action ?? "continue";
    const info = decisions.filter((d) => d.action === "continue" && d.message).map((d) => d.message!);
    for (const g of this.guards) {
      try {
        g.settle?.(event, action, ctx);
      } catch (e) {
        errors.push({ guard: g.name, error: `settle: ${(e as Error).message}` });
      }
    }
    if (action === "stop" && this.stoppedAt === undefined) this.stoppedAt = ctx.seq;
    const verdict: GuardVerdict = { seq: ctx.seq, event, action, interventions, messages: [...interventions.map((d) => d.message), ...info], decisions, errors };
    if (interventions[0]) verdict.primary = interventions[0];
    return verdict;
  }

  /** Observes a whole sequence (a replay) and returns every verdict. */
  run(events: Iterable<GuardEvent>): GuardVerdict[] {
    const out: GuardVerdict[] = [];
    for (const e of events) out.push(this.observe(e));
    return out;
  }

  reset(): void {
    this.seq = 0;
    this.stoppedAt = undefined;
    for (const g of this.guards) g.reset();
  }

  /** Starts a new run: resets every guard, then tells each what the run is about (task, benchmark, tools). */
  begin(run: RunContext = {}): void {
    this.reset();
    for (const g of this.guards) g.begin?.(run);
  }
}
