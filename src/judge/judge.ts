import { diagnosisHeader, vectorFromFindings, type Diagnosis, type Finding, type Outcome, type Trace } from "../trace/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import { cacheKey, sha256, stableStringify, traceContentHash, type JudgeCache } from "./cache.js";
import { addUsage, costUsd, emptyUsage, JudgeCallError, type AttemptEvent, type ChatModel, type TokenUsage } from "./client.js";
import { EvidenceIndex, verifyClaim, type ClaimCheck } from "./evidence.js";
import { mapOrdered } from "./pool.js";
import { finalMessages, finalPassCodes, mastMessages, promptVersion, windowMessages, type ChatMessage, type JudgeMode } from "./prompt.js";
import { Redactor, sumCounts, type RedactionConfig, type RedactionCounts } from "./redact.js";
import { clipMiddle, estimateTokens, renderTrace, type Elision, type RenderedStep, type RenderOptions } from "./render.js";
import { jsonSchemaResponseFormat, parseJudgeAnswer, parseMastAnswer, type JudgeAnswer, type MastAnswer, type ParseResult } from "./response.js";
import { planWindows, wholeRunView, type ForcedCut } from "./windows.js";

/**
 * Judging one trace end to end: redact → render → windows → calls (each window carries the running summary forward)
 * → a final whole-run pass for the termination and verification modes → evidence verification → merge with rule
 * hints → a Diagnosis annotated `llm:<model>`. A trace whose judging fails gets `modes: null` and an `error`, never an
 * all-zero vector. `planJudgement` builds the same calls without sending them (dry run).
 */

export interface JudgeOptions {
  model: ChatModel;
  taxonomy?: Taxonomy;
  mode?: JudgeMode;
  /** The model's context window in tokens. Default 128 000. */
  contextTokens?: number;
  /** Upper bound on the trace steps of one call, below what the context allows (smaller windows, cheaper calls). */
  windowTokens?: number;
  /** Tokens of steps repeated at the start of the next window. Default 15 % of the window. */
  overlapTokens?: number;
  /** Room kept for the running summary carried between windows. Default 600. */
  summaryTokens?: number;
  render?: RenderOptions;
  redaction?: RedactionConfig;
  cache?: JudgeCache;
  /** A rule hint the judge refutes keeps its label (provenance "rules") by default; "drop" removes it. */
  refutedHints?: "keep" | "drop";
  /** How the diagnosis's outcome is filled; default: the dataset's own success flag. */
  outcome?: (trace: Trace) => Outcome;
}

export type CallKind = "whole" | "window" | "final" | "mast";

export interface PlannedCall {
  /** `whole`, `w<i>/<n>`, `final`, `mast`: stable within a trace, part of the cache key. */
  id: string;
  kind: CallKind;
  codes: string[];
  /** Positions in the rendered step list (window calls). */
  start?: number;
  end?: number;
  /** The hints shown in this call. */
  hints: Finding[];
  /** Messages as sent; for calls after the first window the running summary is filled in at run time. */
  build: (summary: string) => ChatMessage[];
  /** Estimated input tokens, with the summary counted at its full reserve. */
  inputTokensEstimate: number;
}

export interface JudgePlan {
  traceId: string;
  traceHash: string;
  mode: JudgeMode;
  promptVersion: string;
  taxonomyVersion: string;
  calls: PlannedCall[];
  /** Number of step windows (1 when the whole trace fits in one call). */
  windows: number;
  steps: RenderedStep[];
  evidence: EvidenceIndex;
  forcedCuts: ForcedCut[];
  /** Fields clipped by the renderer (marked in the prompt): how many, how many characters, in which steps. */
  elisions: { fields: number; chars: number; steps: number[] };
  redactions: RedactionCounts;
  hints: Finding[];
  /** Hints naming a code outside the taxonomy: reported, not judged. */
  unknownHints: Finding[];
  inputTokensEstimate: number;
  /** Settings that change answers, part of every cache key. */
  settings: Record<string, unknown>;
  /** Set when no call can be made (the prompt alone exceeds the context). */
  error?: string;
}

const DEFAULT_CONTEXT = 128_000;
const DEFAULT_SUMMARY = 600;
/** Estimates are approximate: keep this share of the computed room as slack. */
const SAFETY = 0.95;

const estimateMessages = (ms: ChatMessage[]): number => ms.reduce((n, m) => n + estimateTokens(m.content) + 4, 0);

function maxOutputTokensOf(model: ChatModel): number {
  const v = model.settings.maxOutputTokens;
  return typeof v === "number" ? v : 4096;
}

function intersects(steps: number[], from: number, to: number): boolean {
  return steps.some((s) => s >= from && s <= to);
}

/** Builds every call for a trace without sending anything. */
export function planJudgement(trace: Trace, hints: Finding[], opts: JudgeOptions): JudgePlan {
  const taxonomy = opts.taxonomy ?? mast;
  const mode = opts.mode ?? "structured";
  const redactor = new Redactor(opts.redaction);
  const red = redactor.trace(trace);
  const redactions: RedactionCounts = { ...red.counts };
  const unknownHints = hints.filter((h) => !taxonomy.normalize(h.mode));
  const knownHints = redactor.findings(
    hints.filter((h) => taxonomy.normalize(h.mode)).map((h) => ({ ...h, mode: taxonomy.normalize(h.mode)! })),
    redactions,
  );
  const rendered = renderTrace(red.trace, opts.render);
  // Everything placed in a prompt comes from the redacted copy, the trace id included (it is often a file name). The
  // plan and the diagnosis keep the real id: they stay on this machine.
  const promptId = red.trace.id;
  const contextTokens = opts.contextTokens ?? DEFAULT_CONTEXT;
  const summaryTokens = opts.summaryTokens ?? DEFAULT_SUMMARY;
  const outputTokens = maxOutputTokensOf(opts.model);
  const version = promptVersion(taxonomy, mode);
  const settings = {
    ...opts.model.settings,
    mode,
    contextTokens,
    windowTokens: opts.windowTokens ?? null,
    overlapTokens: opts.overlapTokens ?? null,
    summaryTokens,
    maxFieldChars: opts.render?.maxFieldChars ?? null,
    redaction: sha256(redactor.signature).slice(0, 16),
  };
  const base: Omit<JudgePlan, "calls" | "windows" | "inputTokensEstimate" | "steps" | "forcedCuts"> = {
    traceId: trace.id,
    traceHash: traceContentHash(trace),
    mode,
    promptVersion: version,
    taxonomyVersion: taxonomy.version,
    evidence: new EvidenceIndex(rendered.steps),
    elisions: {
      fields: rendered.elisions.length,
      chars: rendered.elisions.reduce((n, e) => n + e.chars, 0),
      steps: [...new Set(rendered.elisions.map((e) => e.step))],
    },
    redactions,
    hints: knownHints,
    unknownHints,
    settings,
  };
  // Nothing to judge: no call is made (and none is paid for).
  if (trace.steps.length === 0) return { ...base, calls: [], windows: 0, steps: [], forcedCuts: [], inputTokensEstimate: 0, error: "the trace has no steps: nothing to judge" };
  const allCodes = [...taxonomy.codes];
  const stepsTokens = rendered.steps.reduce((n, s) => n + s.tokens + 1, 0);

  if (mode === "mast-compatible") {
    const overhead = estimateMessages(mastMessages(taxonomy, "")) + estimateTokens(rendered.preamble) + outputTokens;
    const budget = Math.floor((contextTokens - overhead) * SAFETY);
    if (budget < 64) return { ...base, calls: [], windows: 0, steps: rendered.steps, forcedCuts: [], inputTokensEstimate: 0, error: `the context of ${contextTokens} tokens cannot hold the MAST-compatible prompt (${overhead} tokens before the trace)` };
    const view = wholeRunView(rendered.steps, budget);
    const forcedCuts = [...view.forcedCuts];
    if (view.tailFrom > 0)
      forcedCuts.unshift({
        kind: "steps-outlined",
        from: rendered.steps[0]!.index,
        to: rendered.steps[view.tailFrom - 1]!.index,
        note: `the trace (${stepsTokens} tokens) exceeds the budget of ${budget}; steps before ${rendered.steps[view.tailFrom]!.index} are shown as one outline line each`,
      });
    const text = `${rendered.preamble}\n\n${view.text}`;
    const messages = mastMessages(taxonomy, text);
    const call: PlannedCall = { id: "mast", kind: "mast", codes: allCodes, hints: [], build: () => messages, inputTokensEstimate: estimateMessages(messages) };
    return { ...base, calls: [call], windows: 1, steps: rendered.steps, forcedCuts, inputTokensEstimate: call.inputTokensEstimate };
  }

  const finalCodes = finalPassCodes(taxonomy);
  const windowCodes = allCodes.filter((c) => !finalCodes.includes(c));
  const probe = windowMessages({
    taxonomy, traceId: promptId, preamble: rendered.preamble, stepsText: "", summary: "", codes: allCodes, hints: knownHints, deferredCodes: finalCodes,
    window: { index: 1, count: 2, firstStep: 1, lastStep: 1, overlapSteps: 1, totalSteps: rendered.steps.length },
  });
  const overhead = estimateMessages(probe) + summaryTokens + outputTokens;
  const budget = Math.floor(Math.min(opts.windowTokens ?? Infinity, (contextTokens - overhead) * SAFETY));
  if (budget < 64)
    return { ...base, calls: [], windows: 0, steps: rendered.steps, forcedCuts: [], inputTokensEstimate: 0, error: `the context of ${contextTokens} tokens cannot hold the prompt (${overhead} tokens before the trace, summary and answer included)` };

  const summaryPlaceholder = `[running summary from the earlier windows, up to ${summaryTokens} tokens]`;
  const calls: PlannedCall[] = [];
  if (stepsTokens <= budget) {
    const stepsText = rendered.steps.map((s) => s.block).join("\n\n");
    const build = () =>
      windowMessages({
        taxonomy, traceId: promptId, preamble: rendered.preamble, stepsText, codes: allCodes, hints: knownHints, deferredCodes: [],
        window: { index: 0, count: 1, firstStep: 0, lastStep: Math.max(0, rendered.steps.length - 1), overlapSteps: 0, totalSteps: rendered.steps.length },
      });
    calls.push({ id: "whole", kind: "whole", codes: allCodes, hints: knownHints, build, inputTokensEstimate: estimateMessages(build()) });
    return { ...base, calls, windows: 1, steps: rendered.steps, forcedCuts: [], inputTokensEstimate: calls[0]!.inputTokensEstimate };
  }

  const plan = planWindows(rendered.steps, { budget, overlapTokens: opts.overlapTokens });
  const forcedCuts = [...plan.forcedCuts];
  const n = plan.windows.length;
  for (const w of plan.windows) {
    const shown = plan.steps.slice(w.start, w.end);
    const first = shown[0]!.index;
    const last = shown[shown.length - 1]!.index;
    // A window gets the hints about what it shows; a hint without steps goes to the first window.
    const hints = knownHints.filter(
      (h) => windowCodes.includes(h.mode) && (h.steps.length ? intersects(h.steps, first, last) : w.index === 0),
    );
    const stepsText = shown.map((s) => s.block).join("\n\n");
    const build = (summary: string) =>
      windowMessages({
        taxonomy, traceId: promptId, preamble: rendered.preamble, stepsText, summary: w.index === 0 ? undefined : summary || "(none)", codes: windowCodes, hints, deferredCodes: finalCodes,
        window: { index: w.index, count: n, firstStep: first, lastStep: last, overlapSteps: w.overlap, totalSteps: rendered.steps.length },
      });
    calls.push({
      id: `w${w.index}/${n}`, kind: "window", codes: windowCodes, start: w.start, end: w.end, hints, build,
      inputTokensEstimate: estimateMessages(build(w.index === 0 ? "" : summaryPlaceholder)) + (w.index === 0 ? 0 : summaryTokens),
    });
  }
  if (finalCodes.length) {
    const view = wholeRunView(plan.steps, budget);
    forcedCuts.push(...view.forcedCuts);
    const hints = knownHints.filter((h) => finalCodes.includes(h.mode));
    const build = (summary: string) =>
      finalMessages({ taxonomy, traceId: promptId, preamble: rendered.preamble, viewText: view.text, summary, codes: finalCodes, hints });
    calls.push({ id: "final", kind: "final", codes: finalCodes, hints, build, inputTokensEstimate: estimateMessages(build(summaryPlaceholder)) + summaryTokens });
  }
  return { ...base, calls, windows: n, steps: plan.steps, forcedCuts, inputTokensEstimate: calls.reduce((s, c) => s + c.inputTokensEstimate, 0) };
}

/** What a dry run shows: each call's messages as they would be sent (the running summary as a placeholder). */
export function plannedMessages(plan: JudgePlan): { call: string; messages: ChatMessage[]; inputTokensEstimate: number }[] {
  const placeholder = "[running summary from the earlier windows]";
  return plan.calls.map((c) => ({ call: c.id, messages: c.build(c.kind === "window" && c.start === 0 ? "" : placeholder), inputTokensEstimate: c.inputTokensEstimate }));
}

export interface HintStatus {
  mode: string;
  detector: string;
  steps: number[];
  /**
   * confirmed: the judge found the mode with verified evidence; refuted: it judged the mode absent while shown the
   * hint; unverified: it claimed the mode but its evidence was rejected; unchecked: no call judged it with the hint.
   */
  status: "confirmed" | "refuted" | "unverified" | "unchecked";
}

export interface JudgeSignals {
  mode: JudgeMode;
  model: string;
  promptVersion: string;
  taxonomyVersion: string;
  windows: number;
  calls: number;
  cachedCalls: number;
  attempts: number;
  /** Attempts that failed and were retried, by outcome (rate-limited, timeout, unparseable …). */
  retries: Record<string, number>;
  /** Tokens paid in this run (cache hits cost nothing). */
  usage: TokenUsage;
  /** Tokens the cache hits had cost when they were first made. */
  cachedUsage: TokenUsage;
  costUsd?: number;
  redactions: { total: number; byKind: RedactionCounts };
  elisions: { fields: number; chars: number; steps: number[] };
  forcedCuts: ForcedCut[];
  /** True when any content the judge should have seen was cut to fit a budget. */
  truncated: boolean;
  rejectedClaims: number;
  rejectedQuotes: number;
  rejected: { call: string; mode: string; steps: number[]; quote?: string; reason: string }[];
  hints: HintStatus[];
  unknownHints: { mode: string; detector: string }[];
  summary?: string;
  taskSuccess?: boolean | null;
}

export interface TraceJudgement {
  diagnosis: Diagnosis;
  signals: JudgeSignals;
  failed: boolean;
}

function defaultOutcome(trace: Trace): Outcome {
  const o = trace.outcome;
  if (o?.success !== undefined) return { success: o.success, score: o.score ?? o.reward ?? null, metric: o.metric ?? null, rule: "dataset success flag" };
  return { success: null };
}


/** Judges one trace. Never throws for a provider or answer failure: that becomes `modes: null` with an `error`. */
export async function judgeTrace(trace: Trace, hints: Finding[], opts: JudgeOptions): Promise<TraceJudgement> {
  const taxonomy = opts.taxonomy ?? mast;
  const plan = planJudgement(trace, hints, opts);
  const model = opts.model;
  const detector = `llm:${model.model}`;
  const signals: JudgeSignals = {
    mode: plan.mode,
    model: model.model,
    promptVersion: plan.promptVersion,
    taxonomyVersion: plan.taxonomyVersion,
    windows: plan.windows,
    calls: 0,
    cachedCalls: 0,
    attempts: 0,
    retries: {},
    usage: emptyUsage(),
    cachedUsage: emptyUsage(),
    redactions: { total: sumCounts(plan.redactions), byKind: plan.redactions },
    elisions: plan.elisions,
    forcedCuts: plan.forcedCuts,
    truncated: plan.forcedCuts.length > 0,
    rejectedClaims: 0,
    rejectedQuotes: 0,
    rejected: [],
    hints: [],
    unknownHints: plan.unknownHints.map((h) => ({ mode: h.mode, detector: h.detector })),
  };
  const diagnosisBase = diagnosisHeader(trace, (opts.outcome ?? defaultOutcome)(trace), taxonomy.version, detector);
  const fail = (error: string): TraceJudgement => {
    signals.costUsd = costUsd(signals.usage, model.price);
    return { diagnosis: { ...diagnosisBase, modes: null, findings: [], signals: { judge: signals }, error }, signals, failed: true };
  };
  if (plan.error) return fail(plan.error);

  const judgeFindings: Finding[] = [];
  /** Per mode: the calls that judged it absent while showing a hint for it. */
  const refutedIn = new Map<string, Set<string>>();
  /** Modes the judge claimed but could not back with evidence found in the trace. */
  const unverified = new Set<string>();
  let summary = "";
  let taskSuccess: boolean | null | undefined;

  for (const call of plan.calls) {
    let clippedSummary = summary;
    if (estimateTokens(summary) > (opts.summaryTokens ?? DEFAULT_SUMMARY)) {
      const maxChars = Math.floor((summary.length * (opts.summaryTokens ?? DEFAULT_SUMMARY)) / estimateTokens(summary));
      const c = clipMiddle(summary, maxChars);
      clippedSummary = c.text;
      signals.forcedCuts.push({ kind: "summary-clipped", chars: c.elided, note: `the running summary before ${call.id} exceeded ${opts.summaryTokens ?? DEFAULT_SUMMARY} tokens` });
      signals.truncated = true;
    }
    const messages = call.build(clippedSummary);
    let text: string;
    try {
      text = await runCall(call, messages, plan, opts, signals);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      return fail(`call ${call.id} failed: ${msg}`);
    }

    if (call.kind === "mast") {
      const parsed = parseMastAnswer(text, call.codes);
      if (!parsed.ok) return fail(`call ${call.id}: ${parsed.error}`);
      const a: MastAnswer = parsed.value;
      for (const code of call.codes)
        if (a.modes[code] === 1)
          judgeFindings.push({ mode: code, confidence: 1, steps: [], evidence: "", detector, rationale: "MAST-compatible answer line (no evidence in this format)" });
      summary = a.summary;
      taskSuccess = a.taskCompleted;
      continue;
    }

    const parsed = parseJudgeAnswer(text, call.codes);
    if (!parsed.ok) return fail(`call ${call.id}: ${parsed.error}`);
    const answer: JudgeAnswer = parsed.value;
    for (const code of call.codes) {
      const v = answer.modes[code]!;
      if (!v.present) {
        if (call.hints.some((h) => h.mode === code)) (refutedIn.get(code) ?? refutedIn.set(code, new Set()).get(code)!).add(call.id);
        continue;
      }
      const check: ClaimCheck = verifyClaim({ mode: code, steps: v.steps, evidence: v.evidence, agent: v.agent, confidence: v.confidence, rationale: v.rationale }, plan.evidence);
      for (const r of check.rejected) {
        signals.rejectedQuotes++;
        signals.rejected.push({ call: call.id, mode: code, steps: v.steps, quote: r.quote, reason: r.reason });
      }
      if (!check.accepted) {
        signals.rejectedClaims++;
        unverified.add(code);
        if (v.evidence.length === 0) signals.rejected.push({ call: call.id, mode: code, steps: v.steps, reason: check.reason ?? "rejected" });
        continue;
      }
      const valid = v.steps.filter((s) => plan.evidence.has(s));
      for (const q of check.verified) {
        const f: Finding = { mode: code, confidence: v.confidence, steps: [q.step, ...valid.filter((s) => s !== q.step)], evidence: q.quote, detector };
        if (v.agent) f.agent = v.agent;
        if (v.rationale) f.rationale = v.rationale;
        judgeFindings.push(f);
      }
    }
    summary = answer.summary;
    if (call.kind !== "window") taskSuccess = answer.taskSuccess;
  }
  if (taskSuccess === undefined && plan.calls.length) taskSuccess = null;

  // Merge with rule hints: a label's provenance is rules, judge, or both.
  const judgeModes = new Set(judgeFindings.map((f) => f.mode));
  const ruleFindings: Finding[] = [];
  for (const h of hints.filter((x) => taxonomy.normalize(x.mode))) {
    const mode = taxonomy.normalize(h.mode)!;
    const status: HintStatus["status"] = judgeModes.has(mode) ? "confirmed" : refutedIn.has(mode) ? "refuted" : unverified.has(mode) ? "unverified" : "unchecked";
    signals.hints.push({ mode, detector: h.detector, steps: h.steps, status });
    if (status === "refuted" && opts.refutedHints === "drop") continue;
    ruleFindings.push({ ...h, mode });
  }
  const findings = dedupe([...ruleFindings, ...judgeFindings]);
  const modes = vectorFromFindings(taxonomy.codes, findings);
  const ruleModes = new Set(ruleFindings.map((f) => f.mode));
  const provenance: Record<string, "rules" | "judge" | "both"> = {};
  for (const code of taxonomy.codes)
    if (modes[code] === 1) provenance[code] = ruleModes.has(code) && judgeModes.has(code) ? "both" : judgeModes.has(code) ? "judge" : "rules";
  signals.summary = summary;
  signals.taskSuccess = taskSuccess ?? null;
  signals.costUsd = costUsd(signals.usage, model.price);
  return {
    diagnosis: { ...diagnosisBase, modes, measured_by: Object.fromEntries(taxonomy.codes.map((c) => [c, [diagnosisBase.annotator]])), findings, signals: { judge: signals, provenance } },
    signals,
    failed: false,
  };
}

/** Drops findings that repeat another's mode, steps and quote (windows overlap, so the same claim can come twice). */
function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const k = stableStringify([f.mode, f.detector, f.steps, f.evidence]);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Sends one call (or serves it from the cache), adding its usage and attempt history to the signals. */
async function runCall(call: PlannedCall, messages: ChatMessage[], plan: JudgePlan, opts: JudgeOptions, signals: JudgeSignals): Promise<string> {
  const requestHash = sha256(stableStringify(messages));
  const key = cacheKey({ traceHash: plan.traceHash, promptVersion: plan.promptVersion, model: opts.model.model, settings: plan.settings, call: call.id, requestHash });
  signals.calls++;
  const hit = await opts.cache?.get(key);
  if (hit) {
    // A parser change could make a stored answer unreadable; then it is asked again rather than trusted.
    const ok = call.kind === "mast" ? parseMastAnswer(hit.text, call.codes).ok : parseJudgeAnswer(hit.text, call.codes).ok;
    if (ok) {
      signals.cachedCalls++;
      addUsage(signals.cachedUsage, hit.usage);
      return hit.text;
    }
  }
  const parse = (text: string): ParseResult<string> => {
    const r = call.kind === "mast" ? parseMastAnswer(text, call.codes) : parseJudgeAnswer(text, call.codes);
    return r.ok ? { ok: true, value: text } : r;
  };
  const record = (events: AttemptEvent[]) => {
    signals.attempts += events.length;
    for (const e of events) if (e.outcome !== "ok") signals.retries[e.outcome] = (signals.retries[e.outcome] ?? 0) + 1;
  };
  try {
    const r = await opts.model.complete(messages, parse, { jsonSchema: call.kind === "mast" ? undefined : jsonSchemaResponseFormat(call.codes) });
    addUsage(signals.usage, r.usage);
    record(r.events);
    await opts.cache?.put({
      key, text: r.text, usage: r.usage, attempts: r.attempts, call: call.id, traceHash: plan.traceHash, model: opts.model.model,
      promptVersion: plan.promptVersion, requestHash, at: new Date().toISOString(),
    });
    return r.text;
  } catch (e) {
    if (e instanceof JudgeCallError) {
      addUsage(signals.usage, e.usage);
      record(e.events);
    }
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Many traces, dry runs, totals
// ---------------------------------------------------------------------------------------------------------------

export interface ManyOptions extends JudgeOptions {
  /** Traces judged at once (each trace's calls are sequential). Default 4. */
  concurrency?: number;
  /** Rule findings to give the judge as hints, per trace. */
  hintsFor?: (trace: Trace) => Finding[] | Promise<Finding[]>;
}

/** Judges traces with bounded concurrency, yielding results in input order. */
export async function* judgeTraces(traces: Iterable<Trace> | AsyncIterable<Trace>, opts: ManyOptions): AsyncGenerator<TraceJudgement> {
  yield* mapOrdered(traces, opts.concurrency ?? 4, async (trace) => judgeTrace(trace, (await opts.hintsFor?.(trace)) ?? [], opts));
}

export interface JudgeTotals {
  traces: number;
  failed: number;
  calls: number;
  cachedCalls: number;
  usage: TokenUsage;
  cachedUsage: TokenUsage;
  costUsd?: number;
  rejectedClaims: number;
  redactions: number;
  truncatedTraces: number;
}

export function emptyTotals(): JudgeTotals {
  return { traces: 0, failed: 0, calls: 0, cachedCalls: 0, usage: emptyUsage(), cachedUsage: emptyUsage(), rejectedClaims: 0, redactions: 0, truncatedTraces: 0 };
}

export function addToTotals(t: JudgeTotals, j: TraceJudgement, price?: ChatModel["price"]): JudgeTotals {
  t.traces++;
  if (j.failed) t.failed++;
  t.calls += j.signals.calls;
  t.cachedCalls += j.signals.cachedCalls;
  addUsage(t.usage, j.signals.usage);
  addUsage(t.cachedUsage, j.signals.cachedUsage);
  t.rejectedClaims += j.signals.rejectedClaims;
  t.redactions += j.signals.redactions.total;
  if (j.signals.truncated) t.truncatedTraces++;
  t.costUsd = costUsd(t.usage, price);
  return t;
}

/**
 * How much of a trace's step content the plan's calls show: `chars` = every step's content (with what the field limit
 * clipped), `shown` = the characters some call shows. Lost are clipped field middles (`--max-field-chars`) and, in the
 * single-call MAST-compatible mode, steps shown only as outline lines (counted whole: an outline line keeps at most a
 * few hundred characters) and a clipped last step. A windowed plan shows every character of every step in some window
 * (steps larger than a window in parts); its final pass's outline is a view of what the windows showed, not a loss.
 */
export function planCoverage(plan: JudgePlan): { chars: number; shown: number; share: number; elisions: Elision[] } {
  const bodies = new Map<number, number>();
  for (const s of plan.steps) bodies.set(s.index, (bodies.get(s.index) ?? 0) + s.body.length);
  const elisions = plan.steps.flatMap((s) => s.elisions);
  const listed = elisions.reduce((n, e) => n + e.chars, 0);
  if (plan.elisions.chars > listed) elisions.unshift({ step: -1, field: "task", chars: plan.elisions.chars - listed });
  const chars = [...bodies.values()].reduce((a, b) => a + b, 0) + plan.elisions.chars;
  let lost = plan.elisions.chars;
  if (plan.mode === "mast-compatible")
    for (const c of plan.forcedCuts) {
      if (c.kind === "steps-outlined" || c.kind === "outline-omitted") for (const [i, n] of bodies) if (i >= c.from! && i <= c.to!) lost += n;
      if (c.kind === "step-clipped") lost += c.chars ?? 0;
    }
  lost = Math.min(lost, chars);
  return { chars, shown: chars - lost, share: chars ? (chars - lost) / chars : 1, elisions };
}

export interface DryRunReport {
  traces: {
    trace_id: string; windows: number; calls: number; input_tokens_estimate: number; forced_cuts: number; redactions: number;
    /** Share of the trace's step content some call shows (see planCoverage), and the characters behind it. */
    coverage: number; chars: number; shown_chars: number;
    /** Every field the field limit clipped (none by default): step (-1: the task), field, characters removed. */
    elisions: Elision[];
    /** Steps larger than a window, shown across windows in parts. */
    split_steps: number;
    error?: string;
  }[];
  totals: { traces: number; calls: number; input_tokens_estimate: number };
}

export type DryRunRow = DryRunReport["traces"][number];

/** One trace's row of the dry-run document (a streaming caller builds the totals itself). */
export function dryRunRow(p: JudgePlan): DryRunRow {
  const cov = planCoverage(p);
  return {
    trace_id: p.traceId,
    windows: p.windows,
    calls: p.calls.length,
    input_tokens_estimate: p.inputTokensEstimate,
    forced_cuts: p.forcedCuts.length,
    redactions: sumCounts(p.redactions),
    coverage: Math.round(cov.share * 10_000) / 10_000,
    chars: cov.chars,
    shown_chars: cov.shown,
    elisions: cov.elisions,
    split_steps: new Set(p.steps.filter((s) => s.part).map((s) => s.index)).size,
    ...(p.error ? { error: p.error } : {}),
  };
}

/** The `--dry-run --json` document: windows and input-token estimates per trace, and totals. */
export function dryRunReport(plans: JudgePlan[]): DryRunReport {
  const traces = plans.map(dryRunRow);
  return {
    traces,
    totals: {
      traces: traces.length,
      calls: traces.reduce((n, t) => n + t.calls, 0),
      input_tokens_estimate: traces.reduce((n, t) => n + t.input_tokens_estimate, 0),
    },
  };
}
