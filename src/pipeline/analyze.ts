import type { ReadOptions } from "../formats/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import type { GuardConfig } from "../guards/config.js";
import { ReplayCollector, type ReplaySummary } from "../guards/replay.js";
import { RunWriter } from "./run-writer.js";
import type { Diagnosis } from "../trace/index.js";
import type { DiagnoseOptions } from "./diagnose.js";
import { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";

export interface AnalyzeOptions extends DiagnoseOptions, Pick<ReadOptions, "format" | "groundTruth" | "onFile"> {
  out: string;
  db: string;
  /** Called after each trace, for progress. */
  onTrace?: (d: Diagnosis) => void;
  onDiagnostic?: (d: import("../formats/index.js").Diagnostic) => void;
  /** Guards the traces are replayed through for "what the recommended fixes would have caught": a preset name
   * (`default`, `itbench-sre`), a guard config file, or a config object. Default: `default`. */
  guards?: string | GuardConfig;
}

export interface AnalyzeResult {
  runId: string;
  diagnoses: Diagnosis[];
  counts: RunCounts;
  findingsPath: string;
  /** The guard replay over the same traces, with the rule findings of each (summary.json `replay`). */
  replay: ReplaySummary;
}


/**
 * The main job: ingest → detect → outcome → store, streaming. Writes findings.jsonl (one line per trace) as it goes
 * and stores traces, diagnoses and findings in SQLite. Each trace is also replayed through the guards with its findings
 * (the collector keeps only the per-trace replay results). Keeps only the small per-trace diagnoses and replay results
 * in memory.
 */
export async function analyze(paths: string[], opts: AnalyzeOptions): Promise<AnalyzeResult> {
  // first, so that an unreadable guard configuration fails before anything is written
  const replay = new ReplayCollector(opts.guards ?? "default", {
    ...(opts.taxonomy ? { taxonomy: opts.taxonomy } : {}),
    ...(opts.detectors ? { detectors: opts.detectors } : {}),
  });
  const writer = new RunWriter(paths, { out: opts.out, db: opts.db, annotator: RULES_ANNOTATOR, taxonomy: opts.taxonomy?.version ?? "mast-v3" });
  const counts = emptyRunCounts();
  try {
    for await (const { trace, rules: d } of diagnosedTraces(paths, opts, counts)) {
      await writer.write(trace, d, counts);
      // a trace whose detectors all failed is replayed with the detectors run again: their failures show in the replay
      replay.add(trace, d.modes === null && trace.steps.length > 0 ? undefined : d.findings);
      opts.onTrace?.(d);
    }
    writer.finish(counts);
  } finally {
    await writer.close();
  }
  const { runId, diagnoses, findingsPath } = writer;
  return { runId, diagnoses, counts, findingsPath, replay: replay.summary() };
}
