import type PgBoss from "pg-boss";
import { StoreCache } from "../judge/index.js";
import { diagnoseTrace, withDecisive, type JudgeInputOptions } from "../pipeline/index.js";
import { judgeTrace } from "../judge/index.js";
import { PgStore } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import { DIAGNOSE_QUEUE, JUDGE_QUEUE, openQueue, type DiagnoseJob, type QueuePolicy } from "./queue.js";
import type { JudgeSpec, WorkSpec } from "./spec.js";

/** The judge a worker runs for a run's judge settings (built by the CLI from the same options `faultline judge` takes). */
export type JudgeFactory = (spec: JudgeSpec, concurrency: number) => { judge: JudgeInputOptions["judge"]; hints: boolean };

export interface WorkerOptions {
  /** The PostgreSQL store (`postgres://…`) holding the runs and the queue. */
  db: string;
  /** Judge requests in flight in this process (judged jobs held: twice that); batches of rules-only jobs in flight. */
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
  /** Called once connected to the store and the queue, before the first job is taken. */
  onReady?: () => void;
  onJob?: (e: { run: string; trace: string; ok: boolean; skipped?: boolean; error?: string }) => void;
}

export interface WorkerResult {
  done: number;
  failed: number;
  /** Jobs whose diagnosis was already stored (a worker died between storing it and marking the job done). */
  skipped: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Rules-only jobs taken, diagnosed and stored together. */
const RULES_BATCH = 25;

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
    opts.onReady?.();
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

    /** One job's results: the diagnoses to store, or nothing to do (already stored). */
    const diagnose = async (data: DiagnoseJob, loaded: { trace?: Trace; done: boolean }, p: Prepared): Promise<Diagnosis[] | "skipped"> => {
      if (loaded.done) return "skipped";
      const trace = loaded.trace;
      if (!trace) throw new Error(`run ${data.run} has no trace ${data.trace} in ${store.path}`);
      const rules = await diagnoseTrace(trace);
      if (!p.judge) return [rules];
      const j = await judgeTrace(trace, p.judge.hints ? rules.findings : [], { ...p.judge.judge, cache, outcome: () => rules.outcome });
      // a provider that keeps failing is the job's failure: retried later, then visible as failed
      if (j.failed) throw new Error(`judge: ${j.diagnosis.error ?? "failed"}`);
      return [rules, withDecisive(trace, j.diagnosis)];
    };

    const finishIfDone = async (run: string) => {
      const w = await store.workSpec(run);
      if (!w?.sealed) return;
      const spec = w.spec as WorkSpec;
      // checked when this worker's queue ran dry, after its own jobs' completion committed: of two workers finishing
      // a run's last jobs together, the later check sees both done. A run with a failed job stays incomplete
      // (`faultline runs --failed` lists why).
      const p = await store.progress(run);
      if (!p || p.queued + p.running + p.failed > 0) return;
      const tally = await store.diagnosedTally(run, spec.annotator);
      if (tally.diagnosed < tally.traces) return;
      const r = await store.run(run);
      if (r?.status !== "incomplete") return;
      await store.finishRun(run, { ...(spec.counts ?? {}), annotated: tally.annotated, failed: tally.diagnosed - tally.annotated });
    };
    // runs this worker worked on since it last looked whether they are done: looked at when its queues run dry
    const touched = new Set<string>();
    const finishTouched = async () => {
      for (const run of [...touched]) {
        touched.delete(run);
        await finishIfDone(run).catch(() => {});
      }
    };

    const failJob = async (queue: string, job: PgBoss.Job<DiagnoseJob>, message: string) => {
      result.failed++;
      await boss!.fail(queue, job.id, { message }).catch(() => {});
      opts.onJob?.({ ...job.data, ok: false, error: message });
    };

    /**
     * A batch of jobs of one queue: their traces loaded in one query, each diagnosed (and judged), every result stored
     * in one transaction, and the jobs completed in one call. A job that throws fails alone.
     */
    const handle = async (queue: string, jobs: PgBoss.Job<DiagnoseJob>[]) => {
      for (const j of jobs) touched.add(j.data.run);
      const prepared = await Promise.all(jobs.map((j) => specOf(j.data.run).catch((e: Error) => e)));
      const ready = jobs.flatMap((job, i) => {
        const p = prepared[i]!;
        if (p instanceof Error) {
          void failJob(queue, job, p.message);
          return [];
        }
        return [{ job, p }];
      });
      let loaded: { trace?: Trace; done: boolean }[];
      try {
        loaded = await store.tracesForJobs(ready.map(({ job, p }) => ({ ...job.data, annotator: p.spec.annotator })));
      } catch (e) {
        for (const { job } of ready) await failJob(queue, job, (e as Error).message);
        return;
      }
      const outcomes = await Promise.all(
        ready.map(({ job, p }, i) =>
          diagnose(job.data, loaded[i]!, p).then(
            (r) => ({ job, r }),
            (e: Error) => ({ job, error: e.message }),
          ),
        ),
      );
      const ok = outcomes.filter((o): o is { job: PgBoss.Job<DiagnoseJob>; r: Diagnosis[] | "skipped" } => "r" in o);
      try {
        await store.saveDiagnosesMany(ok.flatMap(({ job, r }) => (r === "skipped" ? [] : r.map((diagnosis) => ({ run: job.data.run, traceId: job.data.trace, diagnosis })))));
        if (ok.length) await boss!.complete(queue, ok.map((o) => o.job.id));
        for (const { job, r } of ok) {
          if (r === "skipped") result.skipped++;
          else result.done++;
          opts.onJob?.({ ...job.data, ok: true, ...(r === "skipped" ? { skipped: true } : {}) });
        }
      } catch (e) {
        for (const { job } of ok) await failJob(queue, job, `storing the diagnosis: ${(e as Error).message}`);
      }
      for (const o of outcomes) if ("error" in o) await failJob(queue, o.job, o.error);
    };

    // Rules jobs come in batches (one per slot, up to RULES_BATCH each); judge jobs one per slot, with as many again
    // held ready, so the judge's `concurrency` requests stay in flight while finished jobs are stored.
    const inFlight = new Set<Promise<void>>();
    let rulesSlots = 0;
    let judgeJobs = 0;
    const launch = (queue: string, jobs: PgBoss.Job<DiagnoseJob>[], judge: boolean) => {
      if (judge) judgeJobs += jobs.length;
      else rulesSlots++;
      const p: Promise<void> = handle(queue, jobs).finally(() => {
        inFlight.delete(p);
        if (judge) judgeJobs -= jobs.length;
        else rulesSlots--;
      });
      inFlight.add(p);
    };
    const idle = opts.idleMs ?? 250;
    while (!opts.signal?.aborted) {
      let got = 0;
      const judgeRoom = 2 * opts.concurrency - judgeJobs;
      if (judgeRoom > 0) {
        const jobs = (await boss.fetch<DiagnoseJob>(JUDGE_QUEUE, { batchSize: judgeRoom })) ?? [];
        for (const job of jobs) launch(JUDGE_QUEUE, [job], true);
        got += jobs.length;
      }
      if (rulesSlots < opts.concurrency) {
        const jobs = (await boss.fetch<DiagnoseJob>(DIAGNOSE_QUEUE, { batchSize: RULES_BATCH })) ?? [];
        if (jobs.length) launch(DIAGNOSE_QUEUE, jobs, false);
        got += jobs.length;
      }
      if (got) continue;
      if (inFlight.size === 0) {
        await finishTouched();
        if (opts.exitWhenIdle && (await store.queueBacklog()) === 0) break;
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
