import PgBoss from "pg-boss";
import { DIAGNOSE_QUEUE, JUDGE_QUEUE, QUEUE_SCHEMA } from "../store/index.js";
import type { WorkSpec } from "./spec.js";

export { DIAGNOSE_QUEUE, JUDGE_QUEUE, QUEUE_SCHEMA };

/** The queue a run's jobs go to: the judge's when it asks for the judge (batches sized to its concurrency), else the rules'. */
export const queueFor = (spec: WorkSpec): string => (spec.judge ? JUDGE_QUEUE : DIAGNOSE_QUEUE);

/** One job: diagnose (and judge) one stored trace of one submitted run. Idempotent per (run, trace, annotator). */
export interface DiagnoseJob {
  run: string;
  trace: string;
}

/** How jobs are retried and when a silent worker's job is taken back. */
export interface QueuePolicy {
  /** Retries after the first attempt (default 3); then the job stays `failed`, with its error. */
  retryLimit?: number;
  /** Seconds before the first retry, doubling each time (pg-boss's backoff; default 2). */
  retryDelay?: number;
  /**
   * Seconds a job may stay active before it counts as lost (its worker killed or cut off) and goes back to the queue
   * (default 300). A longer judge (many windows at a slow endpoint) needs more.
   */
  jobTimeout?: number;
  /** Seconds between the queue's maintenance passes, which take lost jobs back (default 30). */
  maintenanceInterval?: number;
}

export const DEFAULT_POLICY: Required<QueuePolicy> = { retryLimit: 3, retryDelay: 2, jobTimeout: 300, maintenanceInterval: 30 };

/**
 * The job queue: pg-boss 10 in the store's own PostgreSQL (schema `pgboss`), so a distributed setup is one database
 * and any number of `faultline worker` processes. pg-boss 10.x because 11.x and later need Node 22 (this package
 * supports Node 20); 10.4.2 declares `node >= 20`. Jobs are taken with `SELECT … FOR UPDATE SKIP LOCKED`, retried with
 * exponential backoff, and expire back into the queue when their worker disappears.
 */
export async function openQueue(url: string, policy: QueuePolicy = {}, opts: { supervise?: boolean } = {}): Promise<PgBoss> {
  const p = { ...DEFAULT_POLICY, ...policy };
  const boss = new PgBoss({
    connectionString: url,
    schema: QUEUE_SCHEMA,
    max: 3,
    supervise: opts.supervise ?? true,
    schedule: false,
    maintenanceIntervalSeconds: p.maintenanceInterval,
    monitorStateIntervalSeconds: 60,
    // completed jobs are kept a day: progress counts diagnoses in the store, not jobs
    archiveCompletedAfterSeconds: 24 * 3600,
  });
  boss.on("error", () => {});
  try {
    await boss.start();
    for (const name of [DIAGNOSE_QUEUE, JUDGE_QUEUE])
      if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, retryLimit: p.retryLimit, retryDelay: p.retryDelay, retryBackoff: true, expireInSeconds: p.jobTimeout });
  } catch (e) {
    await boss.stop({ graceful: false, wait: false }).catch(() => {});
    throw new Error(`job queue in ${url.replace(/:[^:@/]*@/, ":***@")}: ${(e as Error).message}`);
  }
  return boss;
}
