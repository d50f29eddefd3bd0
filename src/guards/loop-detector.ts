import { failureSignature } from "../trace/actions.js";
import { callKey, profilesSimilar, resultFingerprint, textProfile, type ArgsEquivalenceOptions, type TextProfile } from "./equivalence.js";
import { intervene, proceed, type Guard, type GuardContext, type GuardDecision, type GuardEvent, type ToolCallInfo } from "./types.js";

export interface LoopDetectorOptions {
  /** How arguments are compared (ignored keys such as timestamps, whitespace). */
  equivalence?: ArgsEquivalenceOptions;
  /** Replaces the built-in call identity entirely (e.g. to compare only some arguments). */
  callKey?: (call: ToolCallInfo) => string;
  /** The n-th equivalent call whose earlier results did not change is warned about (default 3). */
  repeatWarnAt?: number;
  /** …and blocked from this count on (default 5; 0 never blocks). */
  repeatBlockAt?: number;
  /** Per-tool thresholds, e.g. a slow rollout status poll may repeat more. */
  perTool?: Record<string, { warnAt?: number; blockAt?: number }>;
  /** Regular expressions removed from outputs before comparing them (clocks, ages, request ids printed by a tool). */
  volatileOutput?: readonly (string | RegExp)[];
  /**
   * The n-th failure in a row of one tool with the same error (stand-alone numbers masked) is warned about, even when
   * the arguments differ each time (default 3; 0 off): a model whose arguments are cut off at a different length on
   * every try, or that keeps sending the same malformed call, is looping on the failure. "In a row": a call of another
   * tool in between (looking something up, trying an alternative) ends the streak.
   */
  failureRepeatWarnAt?: number;
  /** The n-th near-identical assistant message is warned about (default 3). */
  messageRepeatWarnAt?: number;
  /** Similarity in [0,1] from which two messages count as the same (default 0.9). */
  messageSimilarity?: number;
  /** The n-th near-identical user message (a harness nudge repeating) is warned about (default 2; 0 off). */
  nudgeRepeatWarnAt?: number;
  /** User messages shorter than this many words are never treated as nudges ("yes", "thanks"); default 5. */
  nudgeMinWords?: number;
  /** How many recent agent actions the detector remembers (default 40). */
  window?: number;
  /** Agent actions in a row without progress before a warning (default 8; 0 off). */
  noProgressWindow?: number;
  /** Stop after this many consecutive no-progress windows (default 3; 0 never stops). */
  noProgressStopAfter?: number;
}

interface CallRecord {
  /** Equivalent calls since this call's result last changed, including the first. */
  unchanged: number;
  lastFingerprint?: string;
  lastAction: number;
  firstSeq: number;
}

interface MessageRecord {
  /** Tokenised once: every later message is compared with the kept ones. */
  profile: TextProfile;
  action: number;
  seq: number;
}

export const LOOP_DETECTOR = "loop-detector";

/**
 * Catches step repetition (FM-1.3) and runs that go nowhere (FM-1.5).
 *
 * - A tool call equivalent to an earlier one (same tool, normalised arguments) is counted only while the results it
 *   got did not change: **a repeated call whose results change is progress, not a loop** (polling a metric).
 *   The count reaching `repeatWarnAt` warns; `repeatBlockAt` blocks the call.
 * - Near-identical assistant messages repeating warn (1.3); a user/harness nudge repeating warns (1.5).
 * - Progress is a new call, a changed result, a new message or a changed plan. `noProgressWindow` actions without any
 *   warn (1.5), and `noProgressStopAfter` such windows in a row stop the run. Long runs of distinct calls never trip it.
 */
export class LoopDetector implements Guard {
  readonly name = LOOP_DETECTOR;
  readonly modes = ["1.3", "1.5"] as const;
  private readonly o: Required<Omit<LoopDetectorOptions, "callKey" | "equivalence" | "volatileOutput">>;
  private readonly keyOf: (call: ToolCallInfo) => string;
  private readonly volatile: RegExp[];
  private calls = new Map<string, CallRecord>();
  private pendingKeys = new Map<string, string>();
  private lastCallKey?: string;
  private assistant: MessageRecord[] = [];
  private users: MessageRecord[] = [];
  private lastPlan?: string;
  /** Per tool: the signature of its latest failure and how many of its results in a row failed that way. */
  private failures = new Map<string, { signature: string; count: number; firstSeq: number }>();
  private actions = 0;
  private sinceProgress = 0;

  constructor(opts: LoopDetectorOptions = {}) {
    this.o = {
      repeatWarnAt: opts.repeatWarnAt ?? 3,
      repeatBlockAt: opts.repeatBlockAt ?? 5,
      failureRepeatWarnAt: opts.failureRepeatWarnAt ?? 3,
      perTool: opts.perTool ?? {},
      messageRepeatWarnAt: opts.messageRepeatWarnAt ?? 3,
      messageSimilarity: opts.messageSimilarity ?? 0.9,
      nudgeRepeatWarnAt: opts.nudgeRepeatWarnAt ?? 2,
      nudgeMinWords: opts.nudgeMinWords ?? 5,
      window: opts.window ?? 40,
      noProgressWindow: opts.noProgressWindow ?? 8,
      noProgressStopAfter: opts.noProgressStopAfter ?? 3,
    };
    const eq = opts.equivalence ?? {};
    this.keyOf = opts.callKey ?? ((c) => callKey(c.name, c.args, eq));
    this.volatile = (opts.volatileOutput ?? []).map((p) => (typeof p === "string" ? new RegExp(p, "g") : p));
  }

  reset(): void {
    this.calls.clear();
    this.pendingKeys.clear();
    this.lastCallKey = undefined;
    this.assistant = [];
    this.users = [];
    this.lastPlan = undefined;
    this.failures.clear();
    this.actions = 0;
    this.sinceProgress = 0;
  }

  observe(event: GuardEvent, ctx: GuardContext): GuardDecision {
    switch (event.type) {
      case "tool_call":
        return this.onCall(event.call, ctx);
      case "tool_result":
        return this.onResult(event.result.callId, event.result.name, event.result, ctx);
      case "message":
        if (event.reasoning || event.role === "system") return proceed(this.name, "not an agent action");
        return event.role === "assistant" ? this.onAssistant(event.text, ctx) : this.onUser(event.text, ctx);
      case "plan": {
        const text = JSON.stringify(event.items ?? event.text ?? "");
        const changed = text !== this.lastPlan;
        this.lastPlan = text;
        return changed ? this.progress("plan changed") : this.noProgress("plan unchanged", ctx);
      }
      default:
        return proceed(this.name, "not watched");
    }
  }

  private thresholds(tool: string): { warnAt: number; blockAt: number } {
    const t = this.o.perTool[tool];
    return { warnAt: t?.warnAt ?? this.o.repeatWarnAt, blockAt: t?.blockAt ?? this.o.repeatBlockAt };
  }

  private onCall(call: ToolCallInfo, ctx: GuardContext): GuardDecision {
    this.actions++;
    this.expire();
    const key = this.keyOf(call);
    if (call.id) this.pendingKeys.set(call.id, key);
    // a call of another tool in between is trying something else: failure streaks count only retries in a row
    for (const tool of this.failures.keys()) if (tool !== call.name) this.failures.delete(tool);
    this.lastCallKey = key;
    const rec = this.calls.get(key);
    if (!rec) {
      this.calls.set(key, { unchanged: 1, lastAction: this.actions, firstSeq: ctx.seq });
      return proceed(this.name, "new call");
    }
    rec.unchanged++;
    rec.lastAction = this.actions;
    const n = rec.unchanged;
    const { warnAt, blockAt } = this.thresholds(call.name);
    const same = `${call.name} has been called ${n} times with equivalent arguments and its result has not changed`;
    if (blockAt > 0 && n >= blockAt) {
      // A blocked call gets no result, so count it here: an agent that keeps hitting the block is not progressing.
      const stalled = this.noProgress(`blocked repeat of ${call.name}`, ctx);
      if (stalled.action === "stop") return stalled;
      return intervene(
        "block",
        this.name,
        "1.3",
        `repeated call #${n} of ${call.name} (first at event ${rec.firstSeq}), results unchanged; block threshold ${blockAt}`,
        `${same}. This call was not executed: use the result you already have, try a different approach, or finish.`,
      );
    }
    if (warnAt > 0 && n >= warnAt)
      return intervene(
        "warn",
        this.name,
        "1.3",
        `repeated call #${n} of ${call.name} (first at event ${rec.firstSeq}), results unchanged; warn threshold ${warnAt}`,
        `${same}. Repeating it will not tell you anything new; use the result you have or change approach.`,
      );
    return proceed(this.name, `repeat #${n} of ${call.name}, below threshold`);
  }

  private onResult(callId: string | undefined, name: string, r: { output?: string; exitCode?: number; isError?: boolean }, ctx: GuardContext): GuardDecision {
    const key = (callId && this.pendingKeys.get(callId)) ?? this.lastCallKey;
    if (callId) this.pendingKeys.delete(callId);
    const rec = key ? this.calls.get(key) : undefined;
    const failing = this.failureStreak(name, r, ctx);
    // an identical call already warned about by the repeat rule needs no second message for the same loop
    if (failing && (!rec || rec.unchanged < this.thresholds(name).warnAt)) {
      if (rec) rec.lastFingerprint = resultFingerprint(r, this.volatile);
      const stalled = this.noProgress(`${name} failed the same way again`, ctx);
      return stalled.action === "stop" ? stalled : failing;
    }
    if (!rec) return this.progress(`result of ${name} (call not seen)`);
    const fp = resultFingerprint(r, this.volatile);
    const first = rec.lastFingerprint === undefined;
    const changed = !first && fp !== rec.lastFingerprint;
    rec.lastFingerprint = fp;
    if (changed) rec.unchanged = 1; // polling rule: the result moved, so this call made progress
    if (first || changed) return this.progress(first ? `first result of ${name}` : `result of ${name} changed`);
    return this.noProgress(`result of ${name} unchanged`, ctx);
  }

  /** Counts a tool's failures in a row with the same signature; answers with a warning from the threshold on. */
  private failureStreak(name: string, r: { output?: string; exitCode?: number; isError?: boolean }, ctx: GuardContext): GuardDecision | undefined {
    const signature = failureSignature(r);
    if (!signature) {
      this.failures.delete(name);
      return undefined;
    }
    const prev = this.failures.get(name);
    const streak = prev?.signature === signature ? { ...prev, count: prev.count + 1 } : { signature, count: 1, firstSeq: ctx.seq };
    this.failures.set(name, streak);
    const at = this.o.failureRepeatWarnAt;
    if (at <= 0 || streak.count < at) return undefined;
    const said = (r.output ?? "").replace(/\s+/g, " ").trim().slice(0, 120);
    return intervene(
      "warn",
      this.name,
      "1.3",
      `${name} failed ${streak.count} times in a row with the same error (first at event ${streak.firstSeq}): "${said}"`,
      `${name} has failed ${streak.count} times in a row with the same error ("${said}"). Trying it again the same way will fail again: change the approach (smaller arguments, another tool, or fix the cause first).`,
    );
  }

  private onAssistant(text: string, ctx: GuardContext): GuardDecision {
    this.actions++;
    this.expire();
    const profile = textProfile(text);
    const similar = this.assistant.filter((m) => profilesSimilar(m.profile, profile, this.o.messageSimilarity));
    this.assistant.push({ profile, action: this.actions, seq: ctx.seq });
    const n = similar.length + 1;
    if (n === 1) return this.progress("new message");
    const stalled = this.noProgress("message repeats an earlier one", ctx);
    if (stalled.action !== "continue") return stalled;
    if (this.o.messageRepeatWarnAt > 0 && n >= this.o.messageRepeatWarnAt)
      return intervene(
        "warn",
        this.name,
        "1.3",
        `assistant message repeated ${n} times (first at event ${similar[0]!.seq})`,
        `You have said this ${n} times already. Do not repeat yourself: take the next concrete step or finish.`,
      );
    return stalled;
  }

  private onUser(text: string, ctx: GuardContext): GuardDecision {
    const long = text.trim().split(/\s+/).length >= this.o.nudgeMinWords;
    const profile = long ? textProfile(text) : undefined;
    const similar = profile ? this.users.filter((m) => profilesSimilar(m.profile, profile, this.o.messageSimilarity)) : [];
    if (profile) this.users.push({ profile, action: this.actions, seq: ctx.seq });
    const n = similar.length + 1;
    if (this.o.nudgeRepeatWarnAt > 0 && n >= this.o.nudgeRepeatWarnAt)
      return intervene(
        "warn",
        this.name,
        "1.5",
        `the same user instruction arrived ${n} times (first at event ${similar[0]!.seq}): the agent is not meeting it`,
        `This instruction has now been given ${n} times: "${text.trim().slice(0, 160)}". Address exactly what it asks before doing anything else.`,
      );
    return proceed(this.name, "user message");
  }

  private progress(reason: string): GuardDecision {
    this.sinceProgress = 0;
    return proceed(this.name, reason);
  }

  private noProgress(reason: string, ctx: GuardContext): GuardDecision {
    this.sinceProgress++;
    const w = this.o.noProgressWindow;
    if (w <= 0 || this.sinceProgress % w !== 0) return proceed(this.name, reason);
    const windows = this.sinceProgress / w;
    const why = `${this.sinceProgress} agent actions without progress (no new call, no changed result, no new message) up to event ${ctx.seq}`;
    if (this.o.noProgressStopAfter > 0 && windows >= this.o.noProgressStopAfter)
      return intervene("stop", this.name, "1.5", why, `Stopping: ${this.sinceProgress} actions in a row produced nothing new.`);
    return intervene(
      "warn",
      this.name,
      "1.5",
      why,
      `Your last ${this.sinceProgress} actions produced nothing new. Decide now: take a different approach, or finish with what you have.`,
    );
  }

  /** Forgets calls and messages that fell out of the window, so distant legitimate re-checks are not loops. */
  private expire(): void {
    const horizon = this.actions - this.o.window;
    if (horizon <= 0) return;
    for (const [k, r] of this.calls) if (r.lastAction <= horizon) this.calls.delete(k);
    this.assistant = this.assistant.filter((m) => m.action > horizon);
  }
}
