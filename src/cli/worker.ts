import type { Command } from "commander";
import { runWorker } from "../distributed/index.js";
import { defaultDb, isPostgresUrl } from "../store/index.js";
import { displayPath, EXIT, interruptible, UsageError, writeJson } from "./io.js";
import { judgeForWorker } from "./judge.js";

interface WorkerCliOptions {
  db: string;
  concurrency: string;
  exitWhenIdle?: boolean;
  maintenanceInterval: string;
  json?: boolean;
  quiet?: boolean;
}

export async function runWorkerCli(opts: WorkerCliOptions): Promise<number> {
  if (!isPostgresUrl(opts.db)) throw new UsageError(`worker needs a PostgreSQL store (--db postgres://… or FAULTLINE_DB); "${displayPath(opts.db)}" is not one`);
  const concurrency = Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError(`--concurrency must be a positive whole number, got "${opts.concurrency}"`);
  const maintenance = Number(opts.maintenanceInterval);
  if (!Number.isInteger(maintenance) || maintenance < 1) throw new UsageError(`--maintenance-interval must be a positive whole number of seconds`);
  const say = (l: string) => {
    if (!opts.quiet) process.stderr.write(`${l}\n`);
  };
  say(`faultline worker: ${concurrency} at a time from ${displayPath(opts.db)}${opts.exitWhenIdle ? " until the queue is empty" : "; Ctrl-C stops after the jobs in flight"}`);
  const r = await interruptible((signal) =>
    runWorker({
      db: opts.db,
      concurrency,
      judgeFor: judgeForWorker,
      exitWhenIdle: opts.exitWhenIdle,
      policy: { maintenanceInterval: maintenance },
      signal,
      onReady: () => say(`faultline worker: ready (pid ${process.pid})`),
      onJob: (e) => {
        if (!e.ok) say(`  ${e.run} ${e.trace}: ${e.error}`);
      },
    }),
  );
  if (opts.json) writeJson(r);
  else say(`faultline worker: ${r.done} diagnosed, ${r.skipped} already stored, ${r.failed} failed attempts`);
  return EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("worker")
    .description("Diagnose (and judge) queued traces from `faultline submit`; run any number, on any machines, against one PostgreSQL store")
    .option("--db <url>", "the PostgreSQL store and queue, postgres://user:pass@host/db (default: $FAULTLINE_DB)", defaultDb())
    .option("--concurrency <n>", "traces in flight in this process (with a judge: requests in flight)", "4")
    .option("--exit-when-idle", "stop once no job is queued, running or waiting to retry (default: wait for work)")
    .option("--maintenance-interval <s>", "seconds between the queue's passes that hand a dead worker's jobs to others", "30")
    .option("--json", "print the counts as JSON at the end")
    .option("-q, --quiet", "no progress lines")
    .action((opts: WorkerCliOptions) => run(runWorkerCli(opts)));
}
