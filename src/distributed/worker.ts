import type PgBoss from "pg-boss";
import { StoreCache } from "../judge/index.js";
import { diagnoseTrace } from "../pipeline/diagnose.js";
import { withDecisive, type JudgeInputOptions } from "../pipeline/judge.js";
import { judgeTrace } from "../judge/index.js";
import { PgStore } from "../store/index.js";
import type { Diagnosis } from "../trace/index.js";
import { DIAGNOSE_QUEUE, openQueue, type DiagnoseJob, type QueuePolicy } from "./queue.js";
import type { JudgeSpec, WorkSpec } from "./spec.js";

/** The judge a worker runs for a run's judge settings (built by the CLI from the same options `faultline judge` takes). */
export type JudgeFactory = (spec: JudgeSpec, concurrency: number) => { judge: JudgeInputOptions["judge"]; hints: boolean };

export interface WorkerOptions {
  /** The PostgreSQL store (`postgres://…`) holding the runs and the queue. */
  db: string;
  /** Jobs (traces) in flight in this process; with a judge, also its requests in flight. */
  concurrency: number;
  judgeFor?: JudgeFactory;
  /** Only the maintenance interval matters to a worker (the rest is set per job by submit). */
  policy?: QueuePolicy;
  /** Stop once the queue holds no unfinished job (tests, benchmarks, batch use); default: wait for work until stopped. */
  exitWhenIdle?: boolean;
  /** How long to wait for work when the queue is empty, in ms (default 250). */
  idleMs?: number;
  /** Stop taking jobs; the ones in flight finish (Ctrl-C / SIGTERM). */
  signal?: AbortSignal;
  onJob?: (e: { run: string; trace: string; ok: boolean; skipped?: boolean; error?: string }) => void;
}

export interface WorkerResult {
  done: number;
  failed: number;
  /** Jobs whose diagnosis was already stored (a worker died between storing it and marking the job done). */
  skipped: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A worker: takes jobs from the queue (up to `concurrency` at a time), diagnoses each trace with the rules and, when
 * its run asks, the LLM judge, and stores the result. Any number of workers on any number of machines share one
 * queue. Exactly-once effects on top of at-least-once delivery:
 * - a diagnosis is an upsert keyed by (run, trace, annotator): a retried job replaces, never duplicates;
 * - a job whose diagnosis is already stored completes at once, without judging again;
 * - every judge call is committed to the shared call cache as soon as it answers, so a retried job pays nothing
 *   for the calls its killed predecessor completed.
 * A job that throws is retried with exponential backoff; after its retries it stays `failed` with the error.
 */
export async function runWorker(opts: WorkerOptions): Promise<WorkerResult> {
  const store = new PgStore(opts.db, { max: Math.min(10, opts.concurrency + 2) });
  const result: WorkerResult = { done: 0, failed: 0, skipped: 0 };
  let boss: PgBoss | undefined;
  try {
    await store.init();
    boss = await openQueue(opts.db, opts.policy);
    const specs = new Map<string, Promise<Prepared>>();
    const cache = new StoreCache(store);
    const prepare = async (run: string): Promise<Prepared> => {
      const w = await store.workSpec(run);
      if (!w) throw new Error(`run ${run} was not submitted (no work spec in ${store.path})`);
      const spec = w.spec as WorkSpec;
      if (spec.judge && !opts.judgeFor) throw new Error(`run ${run} asks for the judge, and this worker cannot build one`);
      return { spec, judge: spec.judge ? opts.judgeFor!(spec.judge, opts.concurrency) : undefined };
    };
    const specOf = (run: string) => {
      let p = specs.get(run);
      if (!p) {
        p = prepare(run);
        specs.set(run, p);
        p.catch(() => specs.delete(run));
      }
      return p;
    };

    const work = async (data: DiagnoseJob): Promise<"done" | "skipped"> => {
      const { spec, judge } = await specOf(data.run);
      const { trace, done } = await store.traceForJob(data.run, data.trace, spec.annotator);
      if (done) return "skipped";
      if (!trace) throw new Error(`run ${data.run} has no trace ${data.trace} in ${store.path}`);
      const rules = await diagnoseTrace(trace);
      const items: { traceId: string; diagnosis: Diagnosis }[] = [{ traceId: trace.id, diagnosis: rules }];
      if (judge) {
        const j = await judgeTrace(trace, judge.hints ? rules.findings : [], { ...judge.judge, cache, outcome: () => rules.outcome });
        // a provider that keeps failing is the job's failure: retried later, then visible as failed
        if (j.failed) throw new Error(`judge: ${j.diagnosis.error ?? "failed"}`);
        items.push({ traceId: trace.id, diagnosis: withDecisive(trace, j.diagnosis) });
      }
      await store.saveDiagnoses(data.run, items);
      return "done";
    };

    const finishIfDone = async (run: string) => {
      const w = await store.workSpec(run);
      if (!w?.sealed) return;
      const spec = w.spec as WorkSpec;
      // checked after this job's own completion committed: of two workers finishing a run's last jobs together, the
      // later check sees both done. A run with a failed job stays incomplete (`faultline runs --failed` lists why).
      const p = await store.progress(run);
      if (!p || p.queued + p.running + p.failed > 0) return;
      const tally = await store.diagnosedTally(run, spec.annotator);
      if (tally.diagnosed < tally.traces) return;
      const r = await store.run(run);
      if (r?.status !== "incomplete") return;
      await store.finishRun(run, { ...(spec.counts ?? {}), annotated: tally.annotated, failed: tally.diagnosed - tally.annotated });
    };

    const handle = async (job: PgBoss.Job<DiagnoseJob>) => {
      try {
        const how = await work(job.data);
        await boss!.complete(DIAGNOSE_QUEUE, job.id);
        if (how === "skipped") result.skipped++;
        else result.done++;
        opts.onJob?.({ ...job.data, ok: true, ...(how === "skipped" ? { skipped: true } : {}) });
        touched.add(job.data.run);
      } catch (e) {
        const message = (e as Error).message;
        result.failed++;
        await boss!.fail(DIAGNOSE_QUEUE, job.id, { message }).catch(() => {});
        opts.onJob?.({ ...job.data, ok: false, error: message });
        touched.add(job.data.run);
      }
    };
    // runs this worker worked on since it last looked whether they are done: looked at when the queue runs dry
    const touched = new Set<string>();
    const finishTouched = async () => {
      for (const run of [...touched]) {
        touched.delete(run);
        await finishIfDone(run).catch(() => {});
      }
    };

    const inFlight = new Set<Promise<void>>();
    const idle = opts.idleMs ?? 250;
    while (!opts.signal?.aborted) {
      const free = opts.concurrency - inFlight.size;
      if (free > 0) {
        const jobs = await boss.fetch<DiagnoseJob>(DIAGNOSE_QUEUE, { batchSize: free });
        for (const job of jobs ?? []) {
          const p: Promise<void> = handle(job).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        if (jobs?.length) continue;
        if (inFlight.size === 0) {
          await finishTouched();
          if (opts.exitWhenIdle && (await store.queueBacklog()) === 0) break;
        }
      }
      await Promise.race([...inFlight, sleep(idle)]);
    }
    await Promise.all(inFlight);
    await finishTouched();
    return result;
  } finally {
    await boss?.stop({ graceful: false, wait: true, close: true }).catch(() => {});
    await store.close();
  }
}

interface Prepared {
  spec: WorkSpec;
  judge?: { judge: JudgeInputOptions["judge"]; hints: boolean };
}
