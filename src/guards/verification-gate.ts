import { argsText, changedFile, isCleanupCall, isProseFile, isVerifyingCall, returnsState } from "../trace/actions.js";
import { EvidenceTracker, resultOk, toCallMatcher, type EvidenceRule, type EvidenceStatus, type ToolSelector } from "./predicates.js";
import { intervene, proceed, type Guard, type GuardContext, type GuardDecision, type GuardEvent, type ToolCallInfo } from "./types.js";

export interface VerificationOptions {
  /** Evidence declared by the user: e.g. an alert cleared, a health check passed, a schema validated. */
  evidence?: EvidenceRule[];
  /** Calls that change the world; evidence gathered before the latest one is stale. */
  mutating?: ToolSelector;
  /**
   * Also require, after the latest mutating call, at least one successful check: a call that is not itself mutating
   * and that `check` accepts (a re-read, a status query, a test run). Needs `mutating`. Default false.
   */
  requireCheckAfterChange?: boolean;
  /**
   * Which calls count as a check after a change (default: the built-in classifier shared with the rule detectors —
   * tools named by a reading verb, `jq`/`cat`/`kubectl get`/test runners — see src/trace/actions.ts `isVerifyingCall`).
   * A call the `mutating` selector matches is never a check.
   */
  check?: ToolSelector;
  /**
   * A change whose successful result returns the resulting state (a JSON object with several fields, as tau-bench's
   * `update_reservation_flights` answers with the updated reservation) is its own check (default true), the same
   * rule the FM-3.2 detector applies. Only the check-after-change requirement relaxes; declared evidence never does.
   */
  stateResultIsCheck?: boolean;
  /**
   * A user message after the change counts as external feedback on it (default true): the user saw the result and
   * answered, as tau2-bench's user runs the check on their own device and reports back. Same rule as the detector.
   */
  userReplyIsCheck?: boolean;
  /** Only gate completions whose text explicitly claims success (default false: every attempt to end is a claim). */
  onlyExplicitClaims?: boolean;
}

export const VERIFICATION_GATE = "verification-gate";

/**
 * Never let the model grade its own homework (FM-3.2, FM-3.3): a claim of success is accepted only when the declared
 * evidence is present in tool results. Otherwise the completion is blocked and the message says what is missing.
 * With `requireCheckAfterChange`, what counts as a change and as its check is the vocabulary the FM-3.2 detector uses
 * (src/trace/actions.ts): a check is a reading/testing call or one that runs or reads the changed file; a change
 * needs none when it failed (it changed nothing), when its result returned the new state, when it edited prose, or
 * when the user answered after it; removing scratch files is not a change.
 * - Evidence missing, or stale after a later change → FM-3.2 (no or incomplete verification).
 * - Evidence present but its latest result contradicts the claim → FM-3.3 (incorrect verification).
 */
export class VerificationGate implements Guard {
  readonly name = VERIFICATION_GATE;
  readonly modes = ["3.2", "3.3"] as const;
  private readonly tracker: EvidenceTracker;
  private readonly isMutating?: (c: ToolCallInfo) => boolean;
  private readonly isCheck: (c: ToolCallInfo) => boolean;
  private lastChange?: { seq: number; step?: number; tool: string; callId?: string; file?: string };
  private checkedAfterChange = false;
  /** The latest check after the change, when it failed (its tool and what it said): it contradicts a success claim. */
  private failedCheck?: string;
  /** The state before the latest change, restored when that change fails (a failed change changed nothing). */
  private beforeChange?: { lastChange?: VerificationGate["lastChange"]; checked: boolean; failedCheck?: string };

  constructor(private readonly opts: VerificationOptions = {}) {
    if (opts.requireCheckAfterChange && !opts.mutating) throw new Error("verification gate: requireCheckAfterChange needs a `mutating` selector");
    this.tracker = new EvidenceTracker(opts.evidence ?? [], opts.mutating);
    if (opts.mutating !== undefined) this.isMutating = toCallMatcher(opts.mutating);
    this.isCheck = opts.check !== undefined ? toCallMatcher(opts.check) : isVerifyingCall;
  }

  reset(): void {
    this.tracker.reset();
    this.lastChange = undefined;
    this.checkedAfterChange = false;
    this.failedCheck = undefined;
    this.beforeChange = undefined;
  }

  /** Where each piece of evidence stands now. */
  status(): EvidenceStatus[] {
    const out = this.tracker.status();
    if (this.opts.requireCheckAfterChange && this.lastChange)
      out.push({
        rule: "check after the last change",
        state: this.checkedAfterChange ? "satisfied" : this.failedCheck ? "failing" : "missing",
        detail: this.checkedAfterChange
          ? `a successful check followed ${this.lastChange.tool}`
          : this.failedCheck
            ? `the latest check after ${this.lastChange.tool} failed: ${this.failedCheck}`
            : `nothing has been checked since ${this.lastChange.tool}${this.lastChange.file ? ` of ${this.lastChange.file}` : ""} (event ${this.lastChange.seq}${this.lastChange.step !== undefined ? `, step ${this.lastChange.step}` : ""})`,
      });
    return out;
  }

  observe(event: GuardEvent, ctx: GuardContext): GuardDecision {
    if (event.type === "tool_call") {
      this.tracker.onCall(event.call, ctx.seq);
      // removing scratch files before finishing is cleanup, not a change that needs its own check
      if (this.isMutating?.(event.call) && !isCleanupCall(event.call)) {
        this.beforeChange = { lastChange: this.lastChange, checked: this.checkedAfterChange, ...(this.failedCheck ? { failedCheck: this.failedCheck } : {}) };
        const file = changedFile(event.call);
        this.lastChange = { seq: ctx.seq, ...(event.step !== undefined ? { step: event.step } : {}), tool: event.call.name, ...(event.call.id !== undefined ? { callId: event.call.id } : {}), ...(file ? { file } : {}) };
        this.checkedAfterChange = false;
        this.failedCheck = undefined;
      }
      return proceed(this.name, "recorded call");
    }
    if (event.type === "tool_result") {
      this.tracker.onResult(event.result, ctx.seq, event.step);
      const r = event.result;
      const call = { name: r.name, args: r.args };
      if (!this.lastChange) return proceed(this.name, "recorded result");
      const ofLatestChange = this.lastChange.callId !== undefined ? r.callId === this.lastChange.callId : r.name === this.lastChange.tool && this.isMutating?.(call) === true;
      if (ofLatestChange && !resultOk(r)) {
        // the change failed, so it changed nothing: what held before it holds again (the FM-3.2 detector agrees)
        this.lastChange = this.beforeChange?.lastChange;
        this.checkedAfterChange = this.beforeChange?.checked ?? false;
        this.failedCheck = this.beforeChange?.failedCheck;
        return proceed(this.name, `${r.name} failed: not a change to verify`);
      }
      // a check, or running / reading the changed file (`python tests/x.py` after editing it)
      const checks = !this.isMutating?.(call) && (this.isCheck(call) || (this.lastChange.file !== undefined && argsText(call.args).includes(this.lastChange.file)));
      if (!resultOk(r)) {
        // only the latest check counts: a failing one contradicts a claim until a later check passes (a silent failure
        // such as grep finding nothing says nothing either way)
        if (checks && (r.output ?? "").trim()) {
          this.checkedAfterChange = false;
          this.failedCheck = `${r.name}${r.exitCode !== undefined ? ` exit ${r.exitCode}` : ""}: "${(r.output ?? "").replace(/\s+/g, " ").trim().slice(0, 80)}"`;
        }
        return proceed(this.name, "recorded result");
      }
      if (this.isMutating?.(call)) {
        // the latest change answered with the state it produced: that answer is the check; a prose edit the editor
        // confirmed (notes, docs) has nothing further to check
        if (ofLatestChange && ((this.opts.stateResultIsCheck !== false && returnsState(r)) || isProseFile(this.lastChange.file))) this.checkedAfterChange = true;
      } else if (checks) {
        this.checkedAfterChange = true;
        this.failedCheck = undefined;
      }
      return proceed(this.name, "recorded result");
    }
    if (event.type === "message" && event.role === "user" && this.lastChange && !this.checkedAfterChange && this.opts.userReplyIsCheck !== false && event.text.trim()) {
      this.checkedAfterChange = true;
      return proceed(this.name, `the user answered after ${this.lastChange.tool}: external feedback on the change`);
    }
    if (event.type !== "completion") return proceed(this.name, "not a completion");
    if (this.opts.onlyExplicitClaims && !event.claimsSuccess) return proceed(this.name, "completion without an explicit success claim");

    const status = this.status();
    const open = status.filter((s) => s.state !== "satisfied");
    if (open.length === 0)
      return proceed(this.name, status.length ? `evidence present: ${status.map((s) => `${s.rule} (${s.detail})`).join("; ")}` : "no evidence declared");
    const contradicted = open.filter((s) => s.state === "failing");
    const mode = contradicted.length ? "3.3" : "3.2";
    const lines = open.map((s) => `- ${s.rule}${s.description ? ` (${s.description})` : ""}: ${s.detail}`);
    return intervene(
      "block",
      this.name,
      mode,
      `completion claimed without matching evidence: ${open.map((s) => `${s.rule}: ${s.state} (${s.detail})`).join("; ")}`,
      `${contradicted.length ? "The tool results contradict your claim." : "Your claim is not backed by tool evidence yet."} Before finishing, obtain:\n${lines.join("\n")}`,
    );
  }
}
