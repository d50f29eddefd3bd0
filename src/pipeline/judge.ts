import type { Diagnostic, ReadOptions } from "../formats/index.js";
import { addToTotals, emptyTotals, judgeTrace, mapOrdered, planJudgement, StoreCache, type JudgeCache, type JudgeOptions, type JudgePlan, type JudgeTotals, type TraceJudgement } from "../judge/index.js";
import { decisiveStep, detectionContext } from "../detectors/index.js";
import { RunWriter, type RunOutputs, type RunStoredHook } from "./run-writer.js";
import type { RunSummary } from "../report/index.js";
import type { RunStatus } from "../store/index.js";
import { mast } from "../taxonomy/index.js";
import { vectorFromFindings, type Diagnosis, type Finding, type Trace } from "../trace/index.js";
import type { DiagnoseOptions } from "./diagnose.js";
import { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";

/**
 * The judge job: ingest → rules (hints and outcome) → LLM judge → store → findings.jsonl, streaming, with a bounded
 * number of traces judged at once and results written in input order.
 *
 * Two shapes of result:
 * - `faultline judge`: one diagnosis per trace, annotator `llm:<model>`. When rule hints are given (the default), rule
 *   findings the judge did not refute stay in it, each finding keeping its own `detector`, and
 *   `signals.provenance` says per present mode whether it came from the rules, the judge, or both.
 * - `faultline analyze --judge` (`combine`): the rules diagnosis is stored as usual (annotator `rules@…`), and the
 *   line written to findings.jsonl and stored beside it is the combined diagnosis, annotator `rules+llm:<model>`:
 *   every rule finding and every verified judge finding, the vector derived from both, `signals.provenance` per
 *   present mode, the rule signals at the top level of `signals` and the judge's under `signals.judge`. A trace the
 *   judge could not judge gets `modes: null` and an `error` in the combined record; its rules diagnosis is still in
 *   the store.
 */

/** What reading, the rules and one judge call need (shared by the run and the dry run). */
export interface JudgeInputOptions extends DiagnoseOptions, Pick<ReadOptions, "format" | "groundTruth" | "onFile"> {
  judge: Omit<JudgeOptions, "cache" | "outcome" | "taxonomy">;
  /** Traces judged at once (each trace's calls are sequential). Default 4. */
  concurrency?: number;
  /** Give the rule findings to the judge as hints to confirm or refute (default true). */
  hints?: boolean;
  onDiagnostic?: (d: Diagnostic) => void;
}

export interface JudgeRunOptions extends JudgeInputOptions {
  out: string;
  db: string;
  /** Called once the run is stored (the CLI stores the dashboard's overview then). */
  onRunStored?: RunStoredHook;
  /** `analyze --judge`: store the rules diagnosis too and write the combined diagnosis. */
  combine?: boolean;
  /** Call cache: default the store's own (`--db`); another JudgeCache (a JSONL file); null for none. */
  cache?: JudgeCache | null;
  onTrace?: (d: Diagnosis, j: TraceJudgement) => void;
  /** Once the run is complete, delete the store's earlier runs of the same inputs and annotator. */
  replace?: boolean;
  /** The run's name (default: `<first input>-<YYYYMMDD-HHMMSS>`, made unique in the store). */
  name?: string;
  /** Stops after the trace being judged when aborted: what was judged is stored and written, marked `incomplete`. */
  signal?: AbortSignal;
}

/** Kept as a name for the judge's callers; the same counts as every run. */
export type JudgeRunCounts = RunCounts;

export interface JudgeRunResult {
  runId: string;
  /** `incomplete` when the run was interrupted (`signal`). */
  status: RunStatus;
  /** Earlier runs of the same inputs and annotator deleted by `replace`. */
  replaced: string[];
  /** summary.json's content. */
  summary: RunSummary;
  outputs: RunOutputs;
  annotator: string;
  diagnoses: Diagnosis[];
  counts: JudgeRunCounts;
  totals: JudgeTotals;
  findingsPath: string;
  /** Cache entries that were present but unreadable (store cache only). */
  unreadableCacheEntries: number;
}

export const judgeAnnotator = (model: string, combine = false): string => (combine ? `rules+llm:${model}` : `llm:${model}`);


interface Item {
  trace: Trace;
  rules: Diagnosis;
}

export const emptyCounts = emptyRunCounts;

/** Reads traces and runs the rule detectors on each (their findings are the judge's hints, their outcome its outcome). */
const withRules = (paths: string[], opts: JudgeInputOptions, counts: JudgeRunCounts): AsyncGenerator<Item> => diagnosedTraces(paths, opts, counts);

function judgeOptionsFor(item: Item, opts: JudgeInputOptions, cache: JudgeCache | undefined): JudgeOptions {
  return { ...opts.judge, taxonomy: opts.taxonomy, cache, outcome: () => item.rules.outcome };
}

const hintsOf = (item: Item, opts: JudgeInputOptions): Finding[] => (opts.hints === false ? [] : item.rules.findings);

/** The combined rules + judge diagnosis (see the module comment). */
export function combineDiagnoses(rules: Diagnosis, judged: TraceJudgement, annotator: string, hinted: boolean, codes: readonly string[] = mast.codes): Diagnosis {
  const signals: Record<string, unknown> = { ...rules.signals, judge: judged.signals };
  if (judged.failed)
    return { ...rules, annotator, modes: null, findings: [], signals, error: `judge: ${judged.diagnosis.error}; the rules diagnosis is stored under ${rules.annotator}` };
  if (rules.modes === null) signals.rules_error = rules.error;
  const j = judged.diagnosis;
  // With hints the judge already merged the rule findings (and applied --refuted-hints); without, merge here.
  const judgeDetector = j.annotator;
  const findings = hinted ? j.findings : [...rules.findings, ...j.findings.filter((f) => f.detector === judgeDetector)];
  const modes = vectorFromFindings(codes, findings);
  const provenance: Record<string, "rules" | "judge" | "both"> = {};
  for (const code of codes) {
    if (modes[code] !== 1) continue;
    const byJudge = findings.some((f) => f.mode === code && f.detector === judgeDetector);
    const byRules = findings.some((f) => f.mode === code && f.detector !== judgeDetector);
    provenance[code] = byJudge && byRules ? "both" : byJudge ? "judge" : "rules";
  }
  signals.provenance = provenance;
  // the judge examines every mode; the rules add their detectors' names to the modes they examined
  const measured_by: Record<string, string[]> = Object.fromEntries(codes.map((c) => [c, [...(rules.measured_by?.[c] ?? []), judgeDetector]]));
  const { error: _error, ...base } = rules;
  return { ...base, annotator, modes, measured_by, findings, signals };
}

/**
 * The decisive step of a judged record, found the same way as the rules' (src/detectors/decisive.ts) but over the
 * record's own findings — the judge's, or the combined ones. A record that could not be judged keeps none.
 */
export function withDecisive(trace: Trace, d: Diagnosis): Diagnosis {
  if (d.modes === null) return d;
  const r = decisiveStep(trace, detectionContext(trace, d.outcome), d.findings);
  const { decisive_reason: _old, ...rest } = d;
  return { ...rest, decisive: r.decisive, ...(r.decisive === null ? { decisive_reason: r.reason } : {}) };
}

/**
 * Runs the judge over `paths`, writes findings.jsonl, summary.json and the reports (committed whole at the end) and
 * stores the run. Never throws for a trace's failure; inputs without any trace throw NoTracesError and write nothing.
 */
export async function judgeRun(paths: string[], opts: JudgeRunOptions): Promise<JudgeRunResult> {
  const taxonomy = opts.taxonomy ?? mast;
  const modelName = opts.judge.model.model;
  const annotator = judgeAnnotator(modelName, opts.combine);
  const writer = new RunWriter(paths, { out: opts.out, db: opts.db, annotator, taxonomy: taxonomy.version, replace: opts.replace, name: opts.name, onRunStored: opts.onRunStored });
  const storeCache = opts.cache === undefined ? new StoreCache(writer.store) : undefined;
  const cache = storeCache ?? opts.cache ?? undefined;
  const counts = emptyCounts();
  const totals = emptyTotals();
  try {
    const judged = mapOrdered(withRules(paths, opts, counts), opts.concurrency ?? 4, async (item) => ({
      item,
      judgement: await judgeTrace(item.trace, hintsOf(item, opts), judgeOptionsFor(item, opts, cache)),
    }));
    if (!opts.signal?.aborted)
      for await (const { item, judgement } of judged) {
        const d = withDecisive(item.trace, opts.combine ? combineDiagnoses(item.rules, judgement, annotator, opts.hints !== false, taxonomy.codes) : judgement.diagnosis);
        addToTotals(totals, judgement, opts.judge.model.price);
        // counts.traces is counted as traces are read; the rules diagnosis is stored beside a combined one
        await writer.write(item.trace, d, counts, opts.combine ? [item.rules] : []);
        opts.onTrace?.(d, judgement);
        if (opts.signal?.aborted) break;
      }
    // traces read ahead for judging but never written are not part of an interrupted run
    if (opts.signal?.aborted) counts.traces = counts.annotated + counts.failed;
    const done = await writer.complete(counts, opts.signal?.aborted ? "incomplete" : "complete");
    const { diagnoses } = writer;
    return {
      runId: done.runId,
      status: done.status,
      replaced: done.replaced,
      summary: done.summary,
      outputs: done.outputs,
      annotator,
      diagnoses,
      counts,
      totals,
      findingsPath: done.outputs.findings,
      unreadableCacheEntries: storeCache?.unreadable ?? 0,
    };
  } finally {
    await cache?.close();
    await writer.close();
  }
}

export interface PlannedTrace {
  trace: Trace;
  rules: Diagnosis;
  plan: JudgePlan;
}

/** The dry run: the calls each trace would need, built exactly as a real run builds them, and nothing sent. */
export async function* planRun(paths: string[], opts: JudgeInputOptions, counts: JudgeRunCounts = emptyCounts()): AsyncGenerator<PlannedTrace> {
  for await (const item of withRules(paths, opts, counts)) yield { ...item, plan: planJudgement(item.trace, hintsOf(item, opts), judgeOptionsFor(item, opts, undefined)) };
}
