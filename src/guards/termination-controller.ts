import { EvidenceTracker, type EvidenceRule } from "./predicates.js";
import { intervene, isAgentAction, proceed, type Guard, type GuardAction, type GuardContext, type GuardDecision, type GuardEvent } from "./types.js";

export interface TerminationOptions {
  /** Most agent actions (assistant messages, tool calls, completion attempts) the run may take. */
  maxSteps?: number;
  /** Longest the run may take, in ms from its first event. */
  maxDurationMs?: number;
  /** Most tokens (input + output, from usage events) the run may consume. */
  maxTokens?: number;
  /** Warn once per budget when this share of it is used (default 0.8; 0 off). */
  warnAtFraction?: number;
  /**
   * Declared exit conditions: the deliverable and anything else that must exist before the run may end. Each is
   * evidence over tool results (e.g. `agent_output.json` written successfully). None declared: the run may end any time.
   */
  exitConditions?: EvidenceRule[];
  /**
   * Actions allowed once every exit condition holds, e.g. to verify (default 8). The next one is warned about; after
   * twice as many the run is stopped.
   */
  graceSteps?: number;
}

/** The controller's states. `working` → `ready` when the exit conditions hold; an accepted completion → `finished`; a spent budget → `exhausted`. */
export type TerminationState = "working" | "ready" | "finished" | "exhausted";

export const TERMINATION_CONTROLLER = "termination-controller";

type Budget = "steps" | "time" | "tokens";

/**
 * Termination is decided in code, not by the model (FM-1.5, FM-3.1): an explicit state machine with step, time and
 * token budgets and declared exit conditions.
 * - It refuses to end before the deliverable exists (`require`, FM-3.1 premature termination).
 * - It refuses to continue after the run is done: an action after an accepted completion is stopped; once the exit
 *   conditions hold, more than `graceSteps` actions are warned about and more than twice that stopped (FM-1.5).
 *   A spent budget stops the run (FM-1.5).
 * - A user message after an accepted completion reopens the run (a conversation goes on; a harness asks for more).
 */
export class TerminationController implements Guard {
  readonly name = TERMINATION_CONTROLLER;
  readonly modes = ["1.5", "3.1"] as const;
  private readonly exit?: EvidenceTracker;
  private readonly warnAt: number;
  private readonly grace: number;
  private _state: TerminationState;
  private steps = 0;
  private tokens = 0;
  private startedAt?: number;
  private lastNow = 0;
  private readyAtStep?: number;
  private warned = new Set<Budget | "grace">();
  private exhaustedBy?: string;

  constructor(private readonly opts: TerminationOptions = {}) {
    if (opts.exitConditions?.length) this.exit = new EvidenceTracker(opts.exitConditions);
    this.warnAt = opts.warnAtFraction ?? 0.8;
    this.grace = opts.graceSteps ?? 8;
    this._state = this.exit ? "working" : "ready";
  }

  get state(): TerminationState {
    return this._state;
  }

  /** Budget use so far. */
  get usage(): { steps: number; tokens: number; elapsedMs: number | undefined } {
    return { steps: this.steps, tokens: this.tokens, elapsedMs: this.startedAt === undefined ? undefined : this.lastNow - this.startedAt };
  }

  reset(): void {
    this.exit?.reset();
    this._state = this.exit ? "working" : "ready";
    this.steps = 0;
    this.tokens = 0;
    this.startedAt = undefined;
    this.readyAtStep = undefined;
    this.warned.clear();
    this.exhaustedBy = undefined;
  }

  observe(event: GuardEvent, ctx: GuardContext): GuardDecision {
    this.startedAt ??= ctx.now;
    this.lastNow = ctx.now;
    const acting = isAgentAction(event);

    if (this._state === "finished" && event.type === "message" && event.role === "user") {
      // A user (or harness) speaking after an accepted completion opens a new round of work.
      this._state = !this.exit || this.exit.satisfied() ? "ready" : "working";
      this.readyAtStep = this._state === "ready" ? this.steps : undefined;
      this.warned.delete("grace");
      return proceed(this.name, "the user continued after the completion; run reopened");
    }
    if (this._state === "exhausted" && acting)
      return intervene("stop", this.name, "1.5", `run already stopped: ${this.exhaustedBy}`, `The run was stopped (${this.exhaustedBy}). Do not continue.`);
    // saying "done" again is not continuing the work: only a real action after an accepted end is stopped
    if (this._state === "finished" && event.type === "completion") return proceed(this.name, "the run is already finished");
    if (this._state === "finished" && acting)
      return intervene("stop", this.name, "1.5", "action after the run was accepted as finished", "The task is finished and the completion was accepted. Stop here.");

    if (acting) this.steps++;
    if (event.type === "usage") this.tokens += (event.input ?? 0) + (event.output ?? 0);
    if (event.type === "tool_result" && this.exit) {
      this.exit.onResult(event.result, ctx.seq, event.step);
      const ready = this.exit.satisfied();
      if (ready && this._state === "working") {
        this._state = "ready";
        this.readyAtStep = this.steps;
      } else if (!ready && this._state === "ready") {
        this._state = "working"; // the deliverable was broken again (e.g. rewritten and now failing its check)
        this.readyAtStep = undefined;
      }
    }

    const spent = this.spentBudget(ctx.now);
    if (spent) {
      this._state = "exhausted";
      this.exhaustedBy = spent;
      return intervene("stop", this.name, "1.5", spent, `Budget exhausted (${spent}). The run ends now.`);
    }

    if (event.type === "completion") return this.onCompletion();

    if (acting && this.exit && this._state === "ready" && this.readyAtStep !== undefined) {
      const after = this.steps - this.readyAtStep;
      if (after > 2 * this.grace)
        return intervene(
          "stop",
          this.name,
          "1.5",
          `${after} actions since every exit condition was met (grace ${this.grace}, then as many again after the warning)`,
          "The deliverable exists and the exit conditions hold. The run is over: stop here.",
        );
      if (after > this.grace && !this.warned.has("grace")) {
        this.warned.add("grace");
        return intervene(
          "warn",
          this.name,
          "1.5",
          `${after} actions since every exit condition was met`,
          "The deliverable exists and every exit condition holds. Finish now with your final answer.",
        );
      }
    }

    const near = this.nearBudget(ctx.now);
    if (near) return intervene("warn", this.name, "1.5", near, `${near}. Wrap up: make sure the deliverable exists, then finish.`);
    return proceed(this.name, `state ${this._state}`);
  }

  settle(event: GuardEvent, outcome: GuardAction): void {
    // Only a completion that actually went ahead finishes the run; one refused by any guard leaves it running.
    if (event.type === "completion" && (outcome === "continue" || outcome === "warn") && this._state === "ready")
      this._state = "finished";
  }

  private onCompletion(): GuardDecision {
    if (this._state === "ready") return proceed(this.name, this.exit ? "exit conditions hold; completion allowed" : "no exit conditions declared");
    const missing = this.exit!.status().filter((s) => s.state !== "satisfied");
    const list = missing.map((s) => `${s.rule} (${s.detail})`).join("; ");
    return intervene(
      "require",
      this.name,
      "3.1",
      `completion attempted before the exit conditions hold: ${list}`,
      `You cannot finish yet. Still missing: ${missing.map((s) => (s.description ? `${s.rule}: ${s.description}` : s.rule)).join("; ")}. Produce it, then finish.`,
    );
  }

  private spentBudget(now: number): string | undefined {
    const { maxSteps, maxDurationMs, maxTokens } = this.opts;
    if (maxSteps !== undefined && this.steps > maxSteps) return `step budget of ${maxSteps} spent`;
    if (maxDurationMs !== undefined && now - this.startedAt! > maxDurationMs) return `time budget of ${maxDurationMs} ms spent (${now - this.startedAt!} ms elapsed)`;
    if (maxTokens !== undefined && this.tokens > maxTokens) return `token budget of ${maxTokens} spent (${this.tokens} used)`;
    return undefined;
  }

  private nearBudget(now: number): string | undefined {
    if (this.warnAt <= 0) return undefined;
    const { maxSteps, maxDurationMs, maxTokens } = this.opts;
    const check = (b: Budget, used: number, max: number | undefined, what: string) => {
      if (max === undefined || this.warned.has(b) || used < this.warnAt * max) return undefined;
      this.warned.add(b);
      return `${used} of ${max} ${what} used`;
    };
    return (
      check("steps", this.steps, maxSteps, "steps") ??
      check("time", now - this.startedAt!, maxDurationMs, "ms") ??
      check("tokens", this.tokens, maxTokens, "tokens")
    );
  }
}
