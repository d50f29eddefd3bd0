import type { Command } from "commander";
import { DEFAULT_DB, defaultDb, openStore, PgStore, storeExists } from "../store/index.js";
import { displayPath, EXIT, table, UsageError, writeJson } from "./io.js";

interface RunsCliOptions {
  db: string;
  json?: boolean;
  failed?: string;
}

/** `faultline runs`: the store's runs, newest first, with a submitted run's queue progress. */
export async function runRuns(opts: RunsCliOptions): Promise<number> {
  if (!storeExists(opts.db)) throw new UsageError(`no store at ${displayPath(opts.db)}: run \`faultline analyze <paths>\` first`);
  const store = openStore(opts.db);
  try {
    if (opts.failed !== undefined) {
      if (!(store instanceof PgStore)) throw new UsageError("--failed lists failed queue jobs: only a PostgreSQL store has a queue");
      const run = await store.run(opts.failed);
      if (!run) throw new UsageError(`no run ${opts.failed} in ${displayPath(opts.db)}`);
      const jobs = await store.failedJobs(run.id);
      if (opts.json) writeJson({ run: run.id, failed: jobs });
      else console.log(jobs.length ? table(["trace", "retries", "error"], jobs.map((j) => [j.trace, j.retries, j.error])) : `run ${run.id}: no failed jobs`);
      return EXIT.ok;
    }
    const runs = await Promise.all((await store.runs()).map(async (r) => ({ ...r, progress: await store.progress(r.id) })));
    if (opts.json) writeJson({ db: displayPath(opts.db), runs });
    else if (!runs.length) console.log(`no runs in ${displayPath(opts.db)}`);
    else
      console.log(
        table(
          ["run", "status", "traces", "annotator", "queued", "running", "done", "failed", "updated"],
          runs.map((r) => [r.id, r.status, r.trace_count, r.annotator, r.progress?.queued ?? "-", r.progress?.running ?? "-", r.progress?.done ?? "-", r.progress?.failed ?? "-", r.updated_at]),
        ),
      );
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("runs")
    .description("List the store's runs, newest first; a submitted run (PostgreSQL) shows its jobs queued, running, done and failed")
    .option("--db <file|url>", `the store (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else ${DEFAULT_DB})`, defaultDb())
    .option("--failed <run>", "list a submitted run's failed jobs with their errors")
    .option("--json", "print JSON")
    .action((opts: RunsCliOptions) => run(runRuns(opts)));
}
