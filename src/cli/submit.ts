import type { Command } from "commander";
import { DEFAULT_RULES_SPEC, submit, type WorkSpec } from "../distributed/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { defaultDb, isPostgresUrl } from "../store/index.js";
import { displayPath, EXIT, printProblems, problemLine, requireInputs, UsageError, writeJson } from "./io.js";
import { addJudgeOptions, judgeSpecOf, type JudgeCliOptions } from "./judge.js";
import { judgeAnnotator } from "../pipeline/index.js";

interface SubmitCliOptions extends Omit<JudgeCliOptions, "out"> {
  judge?: boolean;
  name?: string;
  retries: string;
  retryDelay: string;
  jobTimeout: string;
}

const whole = (flag: string, v: string, min = 0): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be a whole number ≥ ${min}, got "${v}"`);
  return n;
};

export async function runSubmit(paths: string[], opts: SubmitCliOptions): Promise<number> {
  if (!isPostgresUrl(opts.db)) throw new UsageError(`submit needs a PostgreSQL store (--db postgres://… or FAULTLINE_DB): the queue lives there; "${displayPath(opts.db)}" is not one`);
  requireInputs(paths);
  let spec: WorkSpec = DEFAULT_RULES_SPEC;
  if (opts.judge) {
    const judge = judgeSpecOf(opts);
    spec = { annotator: judgeAnnotator(judge.model), rulesAnnotator: RULES_ANNOTATOR, judge };
  } else if (opts.baseUrl || opts.model) throw new UsageError("--base-url and --model configure the LLM judge: add --judge to run it");
  const problems: string[] = [];
  const r = await submit(paths, {
    db: opts.db,
    spec,
    name: opts.name,
    format: opts.format,
    groundTruth: opts.groundTruth,
    policy: { retryLimit: whole("--retries", opts.retries), retryDelay: whole("--retry-delay", opts.retryDelay, 1), jobTimeout: whole("--job-timeout", opts.jobTimeout, 1) },
    onDiagnostic: (d) => {
      if (d.level !== "notice") problems.push(problemLine(d));
    },
  });
  if (!r.runId) throw new UsageError(`no traces in ${paths.join(", ")}: nothing submitted`);
  if (opts.json) writeJson({ run_id: r.runId, submitted: r.submitted, annotator: spec.annotator, counts: r.counts, db: displayPath(opts.db) });
  else {
    console.log(`run ${r.runId}: ${r.submitted} traces queued for the workers (annotator ${spec.annotator}) in ${displayPath(opts.db)}`);
    console.log(`  progress: faultline runs --db … · workers: faultline worker --db … --concurrency N`);
    printProblems(problems);
  }
  return r.counts.errors > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  const cmd = program
    .command("submit")
    .description("Queue traces for `faultline worker` processes (PostgreSQL store): stored at once, diagnosed (and judged) by the workers")
    .argument("<paths...>", "trace files or folders (read recursively)")
    .option("--db <url>", "the PostgreSQL store and queue, postgres://user:pass@host/db (default: $FAULTLINE_DB)", defaultDb())
    .option("--judge", "also run the LLM judge on every trace (the provider options of `faultline judge` apply; the key is read by each worker from its environment)")
    .option("--name <run>", "the run's name (default <first input>-<YYYYMMDD-HHMMSS>)")
    .option("--retries <n>", "retries of a failed job, with exponential backoff, before it stays failed", "3")
    .option("--retry-delay <s>", "seconds before the first retry (doubling)", "2")
    .option("--job-timeout <s>", "seconds a job may run before it counts as lost (its worker died) and is handed to another", "300")
    .option("--format <id>", "skip detection and read every file with this format")
    .option("--ground-truth <file>", "ITBench ground-truth YAML (or folder) for rollouts that have none beside them")
    .option("--json", "print JSON");
  addJudgeOptions(cmd, { hidden: true });
  cmd.action((paths: string[], opts: SubmitCliOptions) => run(runSubmit(paths, opts)));
}
