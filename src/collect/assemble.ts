import type PgBoss from "pg-boss";
import { queueFor, type DiagnoseJob, type QueuePolicy, DEFAULT_POLICY, type WorkSpec } from "../distributed/index.js";
import { otlpSpansByTrace, traceFromOtlpSpans } from "../formats/index.js";
import type { PgStore } from "../store/index.js";
import type { Trace } from "../trace/index.js";

/** Where collected traces go: one live run (never complete: traces keep arriving) and what the workers do with them. */
export interface LiveRun {
  runId: string;
  spec: WorkSpec;
}

/** The live run named `name`, created (with its work spec) on first use; a run of that name that was not a live run is refused. */
export async function ensureLiveRun(store: PgStore, name: string, spec: WorkSpec): Promise<LiveRun> {
  const existing = await store.run(name);
  if (existing && existing.id === name) {
    const w = await store.workSpec(name);
    if (!w) throw new Error(`run ${name} exists and is not a live collect run: choose another --name`);
    return { runId: name, spec: w.spec as WorkSpec };
  }
  const runId = await store.beginRun(["otlp:collect"], spec.annotator, "mast-v3", { name });
  await store.setWorkSpec(runId, spec, 0, false);
  return { runId, spec };
}

export interface SweepOptions {
  /** Seconds without a new span, after the root span arrived, before a trace counts as complete. */
  idleSeconds: number;
  /** Seconds after its first span when a trace is taken as it is, root span or not. */
  maxAgeSeconds: number;
  /** Traces per transaction (default 200). */
  limit?: number;
  policy?: QueuePolicy;
}

/**
 * Hands the complete collected traces to the workers: claims them, builds each trace from its spans (the same mapping
 * as an OTLP file), stores it in the live run and enqueues its job — all in one transaction. Returns how many.
 */
export async function sweep(store: PgStore, boss: PgBoss, live: LiveRun, o: SweepOptions): Promise<number> {
  const policy = { ...DEFAULT_POLICY, ...o.policy };
  return store.tx(async (c) => {
    const claimed = await store.claimCollectedOn(c, live.runId, { idleSeconds: o.idleSeconds, maxAgeSeconds: o.maxAgeSeconds, limit: o.limit ?? 200 });
    if (!claimed.size) return 0;
    const traces: Trace[] = [];
    for (const [traceId, requests] of claimed) {
      const spans = otlpSpansByTrace(requests.map((r) => JSON.parse(r) as unknown)).get(traceId) ?? [];
      if (!spans.length) continue;
      traces.push(traceFromOtlpSpans(traceId, spans, { file: "otlp:collect", index: 0 }));
    }
    await store.saveTracesOn(c, live.runId, traces);
    const jobs = traces.map((t) => ({
      name: queueFor(live.spec),
      data: { run: live.runId, trace: t.id } satisfies DiagnoseJob,
      retryLimit: policy.retryLimit,
      retryDelay: policy.retryDelay,
      retryBackoff: true,
      expireInSeconds: policy.jobTimeout,
    }));
    if (jobs.length) await boss.insert(jobs, { db: { executeSql: (text: string, values: unknown[]) => c.query(text, values) } });
    return traces.length;
  });
}
