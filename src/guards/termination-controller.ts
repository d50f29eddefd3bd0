import { isCompletionCall } from "../trace/actions.js";
import { EvidenceTracker, type EvidenceRule } from "./predicates.js";
import { intervene, isAgentAction, proceed, type Guard, type GuardAction, type GuardContext, type GuardDecision, type GuardEvent, type RunContext } from "./types.js";

/** What the controller knows of a benchmark's tasks (see {@link TerminationOptions.benchmarks}). */
export interface BenchmarkProfile {
  /** Exit conditions every task of the benchmark has (its deliverable), used when the configuration declares none. */
  exitConditions?: EvidenceRule[];
  /** Every task of the benchmark asks the agent to act on an environment: ending without any action is premature. */
  asksForWork?: boolean;
}

/**
 * A task that asks the agent to do work on an environment, not to answer from what it knows: investigate, diagnose,
 * fix, debug, implement, deploy, remediate, find the root cause, create or edit a file… (English imperatives).
 */
export const WORK_REQUEST_PATTERN =
  /\b(?:investigat\w*|diagnos\w*|debug\w*|fix(?:es|ing)?|repair\w*|remediat\w*|implement\w*|refactor\w*|deploy\w*|install\w*|execut\w*|migrat\w*|troubleshoot\w*|root[- ]cause|(?:create|write|edit|modify|update|patch)\s+(?:a\s+|an\s+|the\s+|this\s+)?(?:new\s+)?(?:file|script|code|function|tests?|patch|config\w*|manifest|deployment))\b/i;

/** The words of a text that ask for work, or undefined. */
export function workRequest(text: string): string | undefined {
  return WORK_REQUEST_PATTERN.exec(text)?.[0];
}

const norm = (s: string) => s.toLowerCase().replace(/[\s_]+/g, "-");

/** The profile a run's benchmark falls under: its own key, a `key/…` variant, or a name that contains the key (`princeton-nlp__SWE-bench_Verified`). */
export function benchmarkProfile(profiles: Readonly<Record<string, BenchmarkProfile>> | undefined, benchmark: string | undefined): { key: string; profile: BenchmarkProfile } | undefined {
  if (!profiles || !benchmark) return undefined;
  const b = norm(benchmark);
  for (const [key, profile] of Object.entries(profiles)) {
    const k = norm(key);
    if (b === k || b.startsWith(`${k}/`) || b.includes(k)) return { key, profile };
  }
  return undefined;
}

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
  /**
   * What is known of benchmarks' tasks, by benchmark name: the run's benchmark ({@link RunContext.benchmark}, told by
   * `begin`) picks its exit conditions when none are declared, and says whether its tasks always ask for work.
   */
  benchmarks?: Readonly<Record<string, BenchmarkProfile>>;
  /**
   * A completion before the agent took any action at all (no tool call) on a task that asks for work is refused
   * (`require`, FM-3.1). `"task"` (default): when the run's benchmark asks for work, or the task (`begin`, or the user's
   * messages before the first action) asks to investigate, fix, implement… ({@link WORK_REQUEST_PATTERN}) and the agent
   * has tools (or it is not known). `true`: every run must act before it ends; `false`: never required.
   */
  requireAction?: boolean | "task";
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
  /** The declared exit conditions; a run's benchmark may bring its own when none are declared. */
  private readonly declared?: EvidenceTracker;
  private exit?: EvidenceTracker;
  private run: RunContext = {};
  private benchmark?: { key: string; profile: BenchmarkProfile };
  /** A tool call (other than a final answer) happened: the agent did something. */
  private acted = false;
  /** What the user asked before the agent's first action (the task, in a live loop). */
  private asked = "";
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
    if (opts.exitConditions?.length) this.declared = new EvidenceTracker(opts.exitConditions);
    this.exit = this.declared;
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
    this.declared?.reset();
    this.exit = this.declared;
    this.run = {};
    this.benchmark = undefined;
    this.acted = false;
    this.asked = "";
    this._state = this.exit ? "working" : "ready";
    this.steps = 0;
    this.tokens = 0;
    this.startedAt = undefined;
    this.readyAtStep = undefined;
    this.warned.clear();
    this.exhaustedBy = undefined;
  }

  /** Takes the run's benchmark exit conditions (when none are declared) and what it asks for. */
  begin(run: RunContext): void {
    this.run = run;
    this.benchmark = benchmarkProfile(this.opts.benchmarks, run.benchmark);
    const own = this.benchmark?.profile.exitConditions;
    if (!this.declared && own?.length) {
      this.exit = new EvidenceTracker(own);
      this._state = "working";
    }
  }

  /** Why this run's task asks for work (so ending without any action is premature), or undefined. */
  private asksForWork(): string | undefined {
    const mode = this.opts.requireAction ?? "task";
    if (mode === false) return undefined;
    if (mode === true) return "every run must act before it ends (requireAction)";
    if (this.benchmark?.profile.asksForWork) return `every ${this.benchmark.key} task asks for work`;
    if (this.run.tools === false) return undefined;
    const words = workRequest(`${this.run.task ?? ""}\n${this.asked}`);
    return words ? `the task asks for work ("${words}")` : undefined;
  }

  observe(event: GuardEvent, ctx: GuardContext): GuardDecision {
    this.startedAt ??= ctx.now;
    this.lastNow = ctx.now;
    const acting = isAgentAction(event);
    if (event.type === "tool_call" && !isCompletionCall(event.call)) this.acted = true;
    if (!this.acted && event.type === "message" && event.role === "user" && this.asked.length < 8000) this.asked += `\n${event.text.slice(0, 4000)}`;

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
    // ending before doing anything at all, on a task that asks for work, is premature whatever else holds
    const work = this.acted ? undefined : this.asksForWork();
    if (this._state === "ready" && !work) return proceed(this.name, this.exit ? "exit conditions hold; completion allowed" : "no exit conditions declared");
    const missing = this._state === "ready" ? [] : this.exit!.status().filter((s) => s.state !== "satisfied");
    const reasons = [
      ...(missing.length ? [`completion attempted before the exit conditions hold: ${missing.map((s) => `${s.rule} (${s.detail})`).join("; ")}`] : []),
      ...(work ? [`completion without any action (no tool call) although ${work}`] : []),
    ];
    const asks = [
      ...(work ? ["You have not done anything yet: no tool call. Do the work the task asks for before you finish."] : []),
      ...(missing.length ? [`Still missing: ${missing.map((s) => (s.description ? `${s.rule}: ${s.description}` : s.rule)).join("; ")}. Produce it, then finish.`] : []),
    ];
    return intervene("require", this.name, "3.1", reasons.join("; "), `You cannot finish yet. ${asks.join(" ")}`);
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
