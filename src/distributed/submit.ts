import type PgBoss from "pg-boss";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { readTraces, type ReadOptions } from "../formats/index.js";
import { emptyRunCounts, type RunCounts } from "../pipeline/index.js";
import { PgStore } from "../store/index.js";
import type { Trace } from "../trace/index.js";
import { DEFAULT_POLICY, openQueue, queueFor, type DiagnoseJob, type QueuePolicy } from "./queue.js";
import type { WorkSpec } from "./spec.js";

export interface SubmitOptions extends Pick<ReadOptions, "format" | "groundTruth"> {
  /** The PostgreSQL store (`postgres://…`). */
  db: string;
  spec: WorkSpec;
  /** The run's name (default `<first input>-<YYYYMMDD-HHMMSS>`, made unique). */
  name?: string;
  policy?: QueuePolicy;
  /** Traces stored and enqueued per transaction (default 200). */
  batch?: number;
  onDiagnostic?: (d: import("../formats/index.js").Diagnostic) => void;
}

export interface SubmitResult {
  runId: string;
  submitted: number;
  counts: RunCounts;
}

/**
 * Reads traces and hands them to the workers: each batch of traces is stored in the run and its jobs enqueued in the
 * same transaction (a submit killed midway leaves no trace without its job, and no job without its trace). The run
 * stays `incomplete` until the workers have diagnosed every trace.
 */
export async function submit(paths: string[], opts: SubmitOptions): Promise<SubmitResult> {
  const store = new PgStore(opts.db);
  const policy = { ...DEFAULT_POLICY, ...opts.policy };
  let boss: PgBoss | undefined;
  try {
    await store.init();
    boss = await openQueue(opts.db, policy, { supervise: false });
    const counts = emptyRunCounts();
    let runId: string | undefined;
    let submitted = 0;
    let batch: Trace[] = [];
    const flush = async () => {
      if (!batch.length) return;
      const traces = batch;
      batch = [];
      runId ??= await store.beginRun(paths, opts.spec.annotator, "mast-v3", opts.name ? { name: opts.name } : {});
      const run = runId;
      await store.tx(async (c) => {
        await store.saveTracesOn(c, run, traces);
        const jobs = [...new Map(traces.map((t) => [t.id, t])).keys()].map((trace) => ({
          name: queueFor(opts.spec),
          data: { run, trace } satisfies DiagnoseJob,
          retryLimit: policy.retryLimit,
          retryDelay: policy.retryDelay,
          retryBackoff: true,
          expireInSeconds: policy.jobTimeout,
        }));
        // the jobs are inserted through this transaction's connection: they commit with the traces
        await boss!.insert(jobs, { db: { executeSql: (text: string, values: unknown[]) => c.query(text, values) } });
        submitted += jobs.length;
        await store.setWorkSpec(run, opts.spec, submitted, false, c);
      });
    };
    for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth })) {
      if (ev.type === "file") {
        counts.files++;
        counts.skipped_lines += ev.file.skippedLines;
        counts.skipped_traces += ev.file.skippedTraces;
        if (ev.file.role === "refused") counts.refused_files++;
      } else if (ev.type === "diagnostic") {
        if (ev.diagnostic.level === "error") counts.errors++;
        if (ev.diagnostic.level === "warning") counts.warnings++;
        opts.onDiagnostic?.(ev.diagnostic);
      } else {
        counts.traces++;
        batch.push(ev.trace);
        if (batch.length >= (opts.batch ?? 200)) await flush();
      }
    }
    await flush();
    if (runId === undefined) return { runId: "", submitted: 0, counts };
    // sealed: the workers complete the run once every job is done
    await store.setWorkSpec(runId, { ...opts.spec, counts }, submitted, true);
    return { runId, submitted, counts };
  } finally {
    await boss?.stop({ graceful: false, wait: true, close: true }).catch(() => {});
    await store.close();
  }
}

export const DEFAULT_RULES_SPEC: WorkSpec = { annotator: RULES_ANNOTATOR, rulesAnnotator: RULES_ANNOTATOR };
