import type { ReadOptions } from "../formats/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import type { GuardConfig } from "../guards/index.js";
import { ReplayCollector } from "./replay.js";
import { RunWriter, type RunOutputs, type RunStoredHook } from "./run-writer.js";
import type { RunSummary } from "../report/index.js";
import { contentHash, openStore, storeExists, type RunStatus } from "../store/index.js";
import type { Diagnosis, ReplaySummary, Trace } from "../trace/index.js";
import type { DiagnoseOptions } from "./diagnose.js";
import { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";
import { pooledTraces } from "./pool.js";
import { mast } from "../taxonomy/index.js";

export interface AnalyzeOptions extends DiagnoseOptions, Pick<ReadOptions, "format" | "groundTruth" | "onFile"> {
  out: string;
  db: string;
  /** Called after each trace, for progress. */
  onTrace?: (d: Diagnosis) => void;
  /** Called once the run is stored (the CLI stores the dashboard's overview then). */
  onRunStored?: RunStoredHook;
  onDiagnostic?: (d: import("../formats/index.js").Diagnostic) => void;
  /** Guards the traces are replayed through for "what the recommended fixes would have caught": a preset name
   * (`default`, `itbench-sre`), a guard config file, or a config object. Default: `default`. */
  guards?: string | GuardConfig;
  /** Once the run is complete, delete the store's earlier runs of the same inputs (default: every analysis is kept). */
  replace?: boolean;
  /** The run's name (default: `<first input>-<YYYYMMDD-HHMMSS>`, made unique in the store). */
  name?: string;
  /**
   * Continue the latest run of the same inputs when it is incomplete (interrupted or killed), instead of starting a
   * new one: a trace it already stored with the same content hash is not diagnosed again (its stored diagnosis is
   * used); everything else — reading, the counts, the guard replay, the reports — is done over all traces as usual.
   * Without such a run, a new one starts.
   */
  resume?: boolean;
  /**
   * Stops reading when aborted (Ctrl-C): what was read is stored and written, marked `incomplete` in the store and in
   * summary.json.
   */
  signal?: AbortSignal;
  /**
   * Worker threads that read, diagnose and replay (default 1: all in this thread). Output, order and trace ids are the
   * same for any number. Custom detectors or taxonomy objects cannot cross to a worker: with them the run is serial.
   */
  jobs?: number;
}

export interface AnalyzeResult {
  /** The run's name in the store, e.g. `examples-20260115-122609`. */
  runId: string;
  /** `incomplete` when the run was interrupted (`signal`). */
  status: RunStatus;
  /** Earlier runs of the same inputs deleted by `replace`. */
  replaced: string[];
  /** With `resume`: the traces whose stored diagnosis was used (0 when a new run started). */
  reused: number;
  diagnoses: Diagnosis[];
  counts: RunCounts;
  findingsPath: string;
  /** summary.json's content. */
  summary: RunSummary;
  /** Where findings.jsonl, summary.json and the reports are. */
  outputs: RunOutputs;
  /** The guard replay over the same traces, with the rule findings of each (summary.json `replay`). */
  replay: ReplaySummary;
}


/**
 * The main job: ingest → detect → outcome → store, streaming. Writes findings.jsonl (one line per trace) as it goes
 * and stores traces, diagnoses and findings in SQLite as a new run; at the end, summary.json and the reports. Each
 * trace is also replayed through the guards with its findings (the collector keeps only the per-trace replay results).
 * Keeps only the small per-trace diagnoses and replay results in memory. The output folder is committed whole at the
 * end (see RunWriter); inputs without any trace throw NoTracesError and write nothing.
 */
export async function analyze(paths: string[], opts: AnalyzeOptions): Promise<AnalyzeResult> {
  // first, so that an unreadable guard configuration fails before anything is written
  const replay = new ReplayCollector(opts.guards ?? "default", {
    ...(opts.taxonomy ? { taxonomy: opts.taxonomy } : {}),
    ...(opts.detectors ? { detectors: opts.detectors } : {}),
  });
  // the run to continue, and what it stored (only the small per-trace diagnoses and hashes are held)
  let resume: string | undefined;
  let stored = new Map<string, { hash: string; diagnosis: Diagnosis }>();
  if (opts.resume && storeExists(opts.db)) {
    const store = openStore(opts.db);
    try {
      resume = await store.resumableRun(paths, RULES_ANNOTATOR);
      if (resume) stored = await store.storedTraces(resume, RULES_ANNOTATOR);
    } finally {
      await store.close();
    }
  }
  let reused = 0;
  const reuse = (t: Trace): Diagnosis | undefined => {
    const s = stored.get(t.id);
    return s && s.hash === contentHash(t) ? s.diagnosis : undefined;
  };
  const writer = new RunWriter(paths, {
    resume,
    out: opts.out,
    db: opts.db,
    annotator: RULES_ANNOTATOR,
    taxonomy: opts.taxonomy?.version ?? "mast-v3",
    replace: opts.replace,
    name: opts.name,
    onRunStored: opts.onRunStored,
  });
  const counts = emptyRunCounts();
  try {
    const jobs = opts.jobs ?? 1;
    if (opts.signal?.aborted) {
      /* nothing read */
    } else if (jobs > 1 && !resume && !opts.detectors && (!opts.taxonomy || opts.taxonomy === mast))
      // (a resumed run reuses stored diagnoses by content hash, which the main thread holds: it runs in one thread)
      for await (const t of pooledTraces(paths, { ...opts, jobs, guards: opts.guards ?? "default" }, counts)) {
        await writer.write(t.stored, t.diagnosis, counts);
        replay.push(t.replay);
        opts.onTrace?.(t.diagnosis);
        if (opts.signal?.aborted) break;
      }
    else
      for await (const { trace, rules: d, reused: again } of diagnosedTraces(paths, { ...opts, ...(resume ? { reuse } : {}) }, counts)) {
        if (again) reused++;
        await writer.write(trace, d, counts, [], { stored: again });
        // a trace whose detectors all failed is replayed with the detectors run again: their failures show in the replay
        replay.add(trace, d.modes === null && trace.steps.length > 0 ? undefined : d.findings);
        opts.onTrace?.(d);
        if (opts.signal?.aborted) break;
      }
    const summaryOfReplay = replay.summary();
    const done = await writer.complete(counts, opts.signal?.aborted ? "incomplete" : "complete", { replay: summaryOfReplay });
    return {
      runId: done.runId,
      status: done.status,
      replaced: done.replaced,
      reused,
      diagnoses: writer.diagnoses,
      counts,
      findingsPath: done.outputs.findings,
      summary: done.summary,
      outputs: done.outputs,
      replay: summaryOfReplay,
    };
  } finally {
    await writer.close();
  }
}
