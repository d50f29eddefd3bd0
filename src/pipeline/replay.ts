import { groupLabel } from "../analysis/index.js";
import { runDetectors, type Detector } from "../detectors/index.js";
import { guardSetFromConfig, loadGuardConfig, ManualClock, replaySteps, type GuardConfig, type GuardEventType, type GuardSet, type GuardVerdict, type ReplayEventOptions, type RunContext } from "../guards/index.js";
import { estimateTokens } from "../judge/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import {
  REPLAY_DEFINITIONS,
  stepContent,
  type Finding,
  type GuardReplaySummary,
  type HighlightKind,
  type ModeCrossTab,
  type ModelReplaySummary,
  type ReplayFindingRef,
  type ReplayHighlight,
  type ReplayInterventionEntry,
  type ReplaySummary,
  type Step,
  type Trace,
  type TraceReplay,
} from "../trace/index.js";

// The replay's results are canonical types in trace/replay.ts: reports read them without importing this stage.

/*
 * `faultline replay`: recorded traces run step by step through the guards, as if the guards had been in the loop.
 * For each trace: where each guard would have intervened, what that would have saved, and which of the rule
 * detectors' findings each intervention addresses. The summary joins the analysis report as "what the recommended
 * fixes would have caught".
 *
 * Definitions (also in REPLAY_DEFINITIONS, for reports):
 * - The replay ends at the first `stop`: the run would have ended there, so later interventions are not listed.
 * - steps_saved counts the agent's steps (assistant steps and tool results) that would not have happened:
 *   every one from the first stop on (from the stopped step itself when the stop refused an agent action or a model
 *   call's usage, from the next step when it answered a tool result or a message), plus each tool call a guard
 *   blocked before that, with its result. Refused completions (`block`/`require` on an attempt to end) and warnings
 *   save nothing: they ask for more work, and what the model would have done instead is not in the trace.
 * - tokens_saved sums the saved steps' recorded usage (input + output) when the trace records usage (not the usage of
 *   the model call a token budget stopped on: those tokens were spent); otherwise it estimates the tokens of the saved
 *   steps' own content with the judge's estimator — a lower bound, since each skipped model call would also have
 *   re-read the context.
 * - An intervention addresses a finding when the finding has the intervention's MAST mode and its evidence reaches the
 *   intervention's step or later (the finding's last cited step ≥ the step): the guard acted before that failure was
 *   over. Findings of modes no guard covers (e.g. 1.1, 2.1) are never addressed.
 */

export interface ReplayOptions extends ReplayEventOptions {
  /** Rule detectors for the cross-tab (default: all). */
  detectors?: readonly Detector[];
  /** Findings already computed for the trace (e.g. by `analyze`); skips running the detectors again. */
  findings?: readonly Finding[];
}

const agentWork = (s: Step) => s.role === "assistant" || s.role === "tool";
const actingEvents = new Set<GuardEventType>(["tool_call", "completion", "plan", "usage"]);

/** Where saving starts for a stop: the stopped step itself when it was the agent acting (or a model call's usage). */
function cutOf(v: GuardVerdict): number | undefined {
  const step = v.event.step;
  if (step === undefined) return undefined;
  const acting = actingEvents.has(v.event.type) || (v.event.type === "message" && v.event.role === "assistant");
  return acting ? step : step + 1;
}

const findingRef = (f: Finding): ReplayFindingRef => ({ mode: f.mode, detector: f.detector, steps: f.steps });

/** Harnesses whose agents always have tools (a shell, an editor), whether or not a trace shows a call. */
const TOOL_HARNESSES = /^(?:codex|claude-code|openhands|swe-agent|mini-swe-agent)$/i;

/**
 * What a recorded run was about, as the guards are told it before its first event: the task statement, the benchmark
 * (per-benchmark exit conditions and work requirement) and whether the agent had tools (a tool step in the trace, or a
 * harness whose agents always have them).
 */
export function runContextOf(trace: Trace): RunContext {
  const tools = trace.steps.some((s) => s.kind === "tool_call" || s.kind === "tool_result") || TOOL_HARNESSES.test(trace.framework ?? "");
  return { ...(trace.task?.text ? { task: trace.task.text } : {}), ...(trace.task?.benchmark ? { benchmark: trace.task.benchmark } : {}), tools };
}

/** Replays one trace through a guard set (reset first) and measures what the guards would have changed. */
export function replayTrace(trace: Trace, set: GuardSet, opts: ReplayOptions = {}): TraceReplay {
  const errors: TraceReplay["errors"] = [];
  let findings: readonly Finding[] = opts.findings ?? [];
  if (!opts.findings) {
    const d = runDetectors(trace, opts.detectors);
    findings = d.findings;
    for (const f of d.failures) errors.push({ source: `detector ${f.detector}`, message: f.message });
  }
  const r = replaySteps(trace.steps, set, { run: runContextOf(trace), ...(opts.detectClaim ? { detectClaim: opts.detectClaim } : {}) });
  const stopIndex = r.verdicts.findIndex((v) => v.action === "stop");
  const considered = stopIndex === -1 ? r.verdicts : r.verdicts.slice(0, stopIndex + 1);

  const interventions: ReplayInterventionEntry[] = [];
  const saved = new Set<number>();
  for (const v of considered) {
    for (const e of v.errors) errors.push({ source: `guard ${e.guard}`, message: e.error, ...(v.event.step !== undefined ? { step: v.event.step } : {}) });
    const step = v.event.step ?? null;
    for (const d of v.interventions)
      interventions.push({
        guard: d.guard,
        step,
        decision: d.action,
        mode: d.mode,
        reason: d.reason,
        event: v.event.type,
        ...(v.event.type === "completion" ? { claims_success: v.event.claimsSuccess } : {}),
        addresses: findings.filter((f) => f.mode === d.mode && (step === null || Math.max(...f.steps) >= step)).map(findingRef),
      });
    // a blocked tool call does not run: the call and its result are saved
    if (v.action === "block" && v.event.type === "tool_call" && step !== null) {
      saved.add(step);
      const result = trace.steps[step]?.tool?.resultIndex;
      if (result !== undefined) saved.add(result);
    }
  }
  let stoppedAt: number | null = null;
  // a token budget stops on the usage of a model call already made: its action is saved, its tokens were spent
  let spentStep: number | undefined;
  if (stopIndex !== -1) {
    const stop = r.verdicts[stopIndex]!;
    stoppedAt = stop.event.step ?? null;
    if (stop.event.type === "usage") spentStep = stop.event.step;
    const cut = cutOf(stop);
    if (cut !== undefined) for (const s of trace.steps) if (s.index >= cut && agentWork(s)) saved.add(s.index);
  }
  const savedSteps = [...saved].map((i) => trace.steps[i]).filter((s): s is Step => s !== undefined && agentWork(s));
  const recordsUsage = trace.steps.some((s) => s.usage && (s.usage.input !== undefined || s.usage.output !== undefined));
  const tokens = savedSteps.length === 0 ? 0 : recordsUsage
    ? savedSteps.reduce((n, s) => n + (s.index === spentStep ? 0 : (s.usage?.input ?? 0) + (s.usage?.output ?? 0)), 0)
    : savedSteps.reduce((n, s) => n + estimateTokens(stepContent(s)), 0);

  return {
    trace_id: trace.id,
    model: groupLabel(trace.model),
    source: { file: trace.source.file, format: trace.source.format, index: trace.source.index },
    steps: trace.steps.length,
    agent_steps: trace.steps.filter(agentWork).length,
    interventions,
    stopped_at: stoppedAt,
    steps_saved: savedSteps.length,
    tokens_saved: tokens,
    tokens_source: savedSteps.length === 0 ? "none" : recordsUsage ? "usage" : "estimate",
    findings: findings.map(findingRef),
    errors,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Summaries: per model, the cross-tab with the detectors, and the notable catches
// ---------------------------------------------------------------------------------------------------------------

function highlightKind(i: ReplayInterventionEntry): HighlightKind | undefined {
  if (i.decision === "stop") return "stopped";
  if (i.guard === "loop-detector" && i.mode === "1.3" && (i.event === "tool_call" || i.event === "tool_result")) return "repeated_calls";
  if (i.guard === "termination-controller" && i.mode === "3.1") return "ended_without_deliverable";
  if (i.guard === "verification-gate" && i.event === "completion" && i.claims_success === true) return "claimed_without_check";
  return undefined;
}

/** Builds the summary from per-trace replays (in the order given). */
export function summarizeReplays(replays: readonly TraceReplay[], guards: string, taxonomy: Taxonomy = mast, guardModes: Map<string, Set<string>> = new Map()): ReplaySummary {
  const covered = new Set([...guardModes.values()].flatMap((s) => [...s]));
  for (const r of replays) for (const i of r.interventions) covered.add(i.mode);
  const models = new Map<string, ModelReplaySummary>();
  for (const r of replays) {
    const m = models.get(r.model) ?? { model: r.model, traces: 0, intervened: 0, stopped: 0, decisions: { warn: 0, block: 0, require: 0, stop: 0 }, steps_saved: 0, tokens_saved: 0, findings: 0, findings_addressed: 0 };
    m.traces++;
    if (r.interventions.length) m.intervened++;
    if (r.stopped_at !== null) m.stopped++;
    for (const i of r.interventions) m.decisions[i.decision]++;
    m.steps_saved += r.steps_saved;
    m.tokens_saved += r.tokens_saved;
    const addressed = new Set(r.interventions.flatMap((i) => i.addresses.map((f) => `${f.detector}|${f.mode}|${f.steps.join(",")}`)));
    for (const f of r.findings)
      if (covered.has(f.mode)) {
        m.findings++;
        if (addressed.has(`${f.detector}|${f.mode}|${f.steps.join(",")}`)) m.findings_addressed++;
      }
    models.set(r.model, m);
  }

  const names = new Map(taxonomy.modes.map((m) => [m.code, m.name]));
  const modes = [...covered].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const crosstab: ModeCrossTab[] = modes.map((mode) => {
    let interventions = 0;
    let intervened = 0;
    let withFinding = 0;
    let caught = 0;
    let guardOnly = 0;
    const guards = new Set([...guardModes].filter(([, ms]) => ms.has(mode)).map(([g]) => g));
    for (const r of replays) {
      const own = r.interventions.filter((i) => i.mode === mode);
      own.forEach((i) => guards.add(i.guard));
      interventions += own.length;
      const found = r.findings.some((f) => f.mode === mode);
      if (own.length) intervened++;
      if (found) withFinding++;
      if (own.some((i) => i.addresses.length > 0)) caught++;
      if (own.length && !found) guardOnly++;
    }
    return { mode, name: names.get(mode) ?? mode, guards: [...guards].sort(), interventions, traces_intervened: intervened, traces_with_finding: withFinding, traces_caught: caught, traces_guard_only: guardOnly };
  });

  const highlights: ReplayHighlight[] = [];
  for (const r of replays) {
    const seen = new Set<HighlightKind>();
    for (const i of r.interventions) {
      const kind = highlightKind(i);
      if (!kind || seen.has(kind)) continue;
      seen.add(kind);
      highlights.push({ kind, trace_id: r.trace_id, model: r.model, step: i.step, guard: i.guard, decision: i.decision, mode: i.mode, reason: i.reason });
    }
  }

  const perGuard = new Map<string, GuardReplaySummary>();
  const guardRow = (g: string) => {
    let row = perGuard.get(g);
    if (!row) {
      row = { guard: g, modes: [...(guardModes.get(g) ?? [])].sort(), interventions: 0, traces: 0, decisions: { warn: 0, block: 0, require: 0, stop: 0 }, findings_addressed: 0 };
      perGuard.set(g, row);
    }
    return row;
  };
  for (const g of guardModes.keys()) guardRow(g);
  for (const r of replays) {
    const seen = new Set<string>();
    const addressed = new Map<string, Set<string>>();
    for (const i of r.interventions) {
      const row = guardRow(i.guard);
      row.interventions++;
      row.decisions[i.decision]++;
      if (!seen.has(i.guard)) row.traces++;
      seen.add(i.guard);
      const set = addressed.get(i.guard) ?? new Set<string>();
      for (const f of i.addresses) set.add(`${f.detector}|${f.mode}|${f.steps.join(",")}`);
      addressed.set(i.guard, set);
    }
    for (const [g, set] of addressed) guardRow(g).findings_addressed += set.size;
  }

  const all = [...models.values()];
  return {
    guards,
    definitions: REPLAY_DEFINITIONS,
    totals: {
      traces: replays.length,
      intervened: all.reduce((n, m) => n + m.intervened, 0),
      stopped: all.reduce((n, m) => n + m.stopped, 0),
      interventions: replays.reduce((n, r) => n + r.interventions.length, 0),
      steps_saved: all.reduce((n, m) => n + m.steps_saved, 0),
      tokens_saved: all.reduce((n, m) => n + m.tokens_saved, 0),
      errors: replays.reduce((n, r) => n + r.errors.length, 0),
    },
    models: all.sort((a, b) => a.model.localeCompare(b.model)),
    guards_summary: [...perGuard.values()],
    crosstab,
    highlights,
    traces: [...replays],
  };
}

export interface ReplayCollectorOptions extends Omit<ReplayOptions, "findings"> {
  taxonomy?: Taxonomy;
}

/**
 * Replays traces one at a time (streaming: only the small per-trace results are kept) and summarises them.
 * `analyze` can feed it each trace with the findings it already has: `collector.add(trace, diagnosis.findings)`.
 */
export class ReplayCollector {
  private readonly set: GuardSet;
  private readonly replays: TraceReplay[] = [];
  readonly name: string;

  /** `guards`: a preset name (`default`, `itbench-sre`), a config file path, or a config object. */
  constructor(guards: string | GuardConfig = "default", private readonly opts: ReplayCollectorOptions = {}) {
    const config = typeof guards === "string" ? loadGuardConfig(guards) : guards;
    this.name = typeof guards === "string" ? guards : "custom";
    // recorded events carry their own times; those without fall back to a clock that never moves
    this.set = guardSetFromConfig(config, { clock: new ManualClock() });
  }

  add(trace: Trace, findings?: readonly Finding[]): TraceReplay {
    const r = this.replay(trace, findings);
    this.replays.push(r);
    return r;
  }

  /** The replay of one trace, not kept (a worker of a parallel analysis hands it to the collector that keeps them). */
  replay(trace: Trace, findings?: readonly Finding[]): TraceReplay {
    let r: TraceReplay;
    try {
      r = replayTrace(trace, this.set, { ...this.opts, ...(findings ? { findings } : {}) });
    } catch (e) {
      // one trace the replay cannot handle is reported in its row and the totals, never stops the rest
      r = {
        trace_id: trace.id,
        model: groupLabel(trace.model),
        source: { file: trace.source.file, format: trace.source.format, index: trace.source.index },
        steps: trace.steps.length,
        agent_steps: trace.steps.filter(agentWork).length,
        interventions: [],
        stopped_at: null,
        steps_saved: 0,
        tokens_saved: 0,
        tokens_source: "none",
        findings: (findings ?? []).map(findingRef),
        errors: [{ source: "replay", message: (e as Error).message }],
      };
    }
    return r;
  }

  /** Keeps a replay computed elsewhere (a worker of a parallel analysis, with the same guards). */
  push(r: TraceReplay): void {
    this.replays.push(r);
  }

  summary(): ReplaySummary {
    const modes = new Map(this.set.guards.map((g) => [g.name, new Set<string>(g.modes)]));
    return summarizeReplays(this.replays, this.name, this.opts.taxonomy, modes);
  }
}

/**
 * What the recommended fixes would have caught, for the analysis report: replays the traces through the guards
 * (default: the built-in `default` preset) and returns the summary. Pass each trace's findings when they are known.
 */
export function replaySummary(
  traces: Iterable<Trace | { trace: Trace; findings?: readonly Finding[] }>,
  guards: string | GuardConfig = "default",
  opts: ReplayCollectorOptions = {},
): ReplaySummary {
  const c = new ReplayCollector(guards, opts);
  for (const t of traces) {
    if ("trace" in t) c.add(t.trace, t.findings);
    else c.add(t);
  }
  return c.summary();
}

