import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ReadOptions } from "../formats/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import type { GuardConfig } from "../guards/config.js";
import { ReplayCollector, type ReplaySummary } from "../guards/replay.js";
import { Store } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
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

const BATCH = 200;

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
  mkdirSync(opts.out, { recursive: true });
  const store = new Store(opts.db);
  const runId = store.beginRun(paths, RULES_ANNOTATOR, (opts.taxonomy?.version ?? "mast-v3"));
  const findingsPath = join(opts.out, "findings.jsonl");
  const out = createWriteStream(findingsPath);
  const counts = emptyRunCounts();
  const diagnoses: Diagnosis[] = [];
  let batch: { trace: Trace; diagnosis: Diagnosis }[] = [];
  const flush = () => {
    if (batch.length) store.saveBatch(runId, batch);
    batch = [];
  };
  try {
    for await (const { trace, rules: d } of diagnosedTraces(paths, opts, counts)) {
      if (d.modes) counts.annotated++;
      else counts.failed++;
      if (!out.write(`${JSON.stringify(d)}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
      diagnoses.push(d);
      // a trace whose detectors all failed is replayed with the detectors run again: their failures show in the replay
      replay.add(trace, d.modes === null && trace.steps.length > 0 ? undefined : d.findings);
      batch.push({ trace, diagnosis: d });
      if (batch.length >= BATCH) flush();
      opts.onTrace?.(d);
    }
    flush();
    store.finishRun(runId, counts);
  } finally {
    await new Promise<void>((r) => out.end(r));
    store.close();
  }
  return { runId, diagnoses, counts, findingsPath, replay: replay.summary() };
}
