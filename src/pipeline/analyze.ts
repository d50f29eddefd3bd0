import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { readTraces, type ReadOptions } from "../formats/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { Store } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";

export interface AnalyzeOptions extends DiagnoseOptions, Pick<ReadOptions, "format" | "groundTruth" | "onFile"> {
  out: string;
  db: string;
  /** Called after each trace, for progress. */
  onTrace?: (d: Diagnosis) => void;
  onDiagnostic?: (d: import("../formats/index.js").Diagnostic) => void;
}

export interface AnalyzeResult {
  runId: string;
  diagnoses: Diagnosis[];
  counts: { files: number; traces: number; annotated: number; failed: number; errors: number; warnings: number; skipped_lines: number; skipped_traces: number; refused_files: number };
  findingsPath: string;
}

const BATCH = 200;

/**
 * The main job: ingest → detect → outcome → store, streaming. Writes findings.jsonl (one line per trace) as it goes
 * and stores traces, diagnoses and findings in SQLite. Keeps only the small per-trace diagnoses in memory.
 */
export async function analyze(paths: string[], opts: AnalyzeOptions): Promise<AnalyzeResult> {
  mkdirSync(opts.out, { recursive: true });
  const store = new Store(opts.db);
  const runId = store.beginRun(paths, RULES_ANNOTATOR, (opts.taxonomy?.version ?? "mast-v3"));
  const findingsPath = join(opts.out, "findings.jsonl");
  const out = createWriteStream(findingsPath);
  const counts = { files: 0, traces: 0, annotated: 0, failed: 0, errors: 0, warnings: 0, skipped_lines: 0, skipped_traces: 0, refused_files: 0 };
  const diagnoses: Diagnosis[] = [];
  let batch: { trace: Trace; diagnosis: Diagnosis }[] = [];
  const flush = () => {
    if (batch.length) store.saveBatch(runId, batch);
    batch = [];
  };
  try {
    for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth, onFile: opts.onFile })) {
      if (ev.type === "file") {
        counts.files++;
        counts.skipped_lines += ev.file.skippedLines;
        counts.skipped_traces += ev.file.skippedTraces;
        if (ev.file.role === "refused") counts.refused_files++;
        continue;
      }
      if (ev.type === "diagnostic") {
        if (ev.diagnostic.level === "error") counts.errors++;
        if (ev.diagnostic.level === "warning") counts.warnings++;
        opts.onDiagnostic?.(ev.diagnostic);
        continue;
      }
      const d = await diagnoseTrace(ev.trace, opts);
      counts.traces++;
      if (d.modes) counts.annotated++;
      else counts.failed++;
      if (!out.write(`${JSON.stringify(d)}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
      diagnoses.push(d);
      batch.push({ trace: ev.trace, diagnosis: d });
      if (batch.length >= BATCH) flush();
      opts.onTrace?.(d);
    }
    flush();
    store.finishRun(runId, counts);
  } finally {
    await new Promise<void>((r) => out.end(r));
    store.close();
  }
  return { runId, diagnoses, counts, findingsPath };
}
