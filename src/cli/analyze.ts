import type { Command } from "commander";
import cliProgress from "cli-progress";
import { analyze, defaultJobs, NoTracesError, ReplayCollector } from "../pipeline/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { storeOverviews } from "../server/index.js";
import { DEFAULT_DB, defaultDb } from "../store/index.js";
import { GUARD_PRESETS } from "../guards/index.js";
import { modelTable, outcomeNotes } from "../report/index.js";
import { EXIT, UsageError, writeJson, printProblems, printRunFooter, problemLine, requireInputs, interruptible, noTracesExit } from "./io.js";
import { addJudgeOptions, runJudge, type JudgeCliOptions } from "./judge.js";

interface AnalyzeCliOptions extends Omit<JudgeCliOptions, "out" | "db"> {
  /** Also run the LLM judge (the judge options of `faultline judge` apply). */
  judge?: boolean;
  out: string;
  db: string;
  json?: boolean;
  format?: string;
  groundTruth?: string;
  successRecall?: string;
  failureRecall?: string;
  quiet?: boolean;
  /** Guard configuration for the replay section: a preset or a JSON file. */
  guards: string;
  /** Delete the store's earlier runs of the same inputs once this one is complete. */
  replace?: boolean;
  resume?: boolean;
  /** Worker threads (default: the number of cores). */
  jobs?: string;
}

function jobsOf(v: string | undefined): number {
  if (v === undefined) return defaultJobs();
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--jobs must be a whole number of at least 1, got "${v}"`);
  return n;
}

function ratio(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new UsageError(`${name} must be a number between 0 and 1, got "${v}"`);
  return n;
}

export async function runAnalyze(paths: string[], opts: AnalyzeCliOptions): Promise<number> {
  const itbenchRule = { success: ratio("--success-recall", opts.successRecall, 1), failure: ratio("--failure-recall", opts.failureRecall, 0) };
  if (itbenchRule.failure >= itbenchRule.success) throw new UsageError("--failure-recall must be below --success-recall");
  requireInputs(paths);
  if (opts.judge) {
    // the judge pipeline does not replay its traces through the guards: say so rather than ignore the option
    if (opts.guards !== "default") throw new UsageError("--guards is not supported with --judge: run `faultline analyze` without --judge, or `faultline replay`, for the guard replay");
    return runJudge(paths, opts, { combine: true, itbenchRule });
  }
  if (opts.baseUrl || opts.model) throw new UsageError("--base-url and --model configure the LLM judge: add --judge to run it");
  const jobs = jobsOf(opts.jobs);
  try {
    // a bad preset name or config file is a usage error, found before anything is read or written
    new ReplayCollector(opts.guards);
  } catch (e) {
    throw new UsageError(`--guards: ${(e as Error).message}`);
  }
  const tty = !opts.json && !opts.quiet && process.stderr.isTTY;
  const bar = tty
    ? new cliProgress.SingleBar({ stream: process.stderr, format: "{bar} {value}/{total} files | {traces} traces | {file}", hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
    : undefined;
  let started = false;
  let traces = 0;
  const problems: string[] = [];
  let result: Awaited<ReturnType<typeof analyze>>;
  try {
    result = await interruptible((signal) =>
      analyze(paths, {
        out: opts.out,
        db: opts.db,
        onRunStored: storeOverviews,
        format: opts.format,
        groundTruth: opts.groundTruth,
        itbenchRule,
        guards: opts.guards,
        replace: opts.replace,
        resume: opts.resume,
        jobs,
        signal,
        onFile: (path, i, total) => {
          if (!bar) return;
          if (!started) bar.start(total, 0, { traces: 0, file: "" });
          started = true;
          bar.update(i, { traces, file: path.length > 40 ? `…${path.slice(-39)}` : path });
        },
        onTrace: () => {
          traces++;
        },
        onDiagnostic: (d) => {
          if (d.level !== "notice") problems.push(problemLine(d));
        },
      }),
    );
  } catch (e) {
    if (bar && started) bar.stop();
    if (!(e instanceof NoTracesError)) throw e;
    if (!opts.json) printProblems(problems);
    return noTracesExit(e);
  }
  if (bar && started) bar.stop();
  const { summary, outputs } = result;

  if (opts.json) writeJson({ ...summary, outputs: { findings: outputs.findings, summary: outputs.summary, ...outputs.reports, db: opts.db }, replaced: result.replaced });
  else {
    const c = result.counts;
    console.log(modelTable(summary));
    const r = result.replay.totals;
    console.log(
      `\nGuard replay (${result.replay.guards}): ${r.intervened} of ${r.traces} traces with an intervention, ${r.stopped} ended early, ` +
        `${r.steps_saved} steps and ${r.tokens_saved} tokens saved${r.errors ? `; ${r.errors} replay errors` : ""} (report: "What the recommended fixes would have caught").`,
    );
    for (const l of outcomeNotes(result.diagnoses)) console.log(l);
    printProblems(problems);
    if (result.reused) console.log(`\nResumed run ${result.runId}: ${result.reused} of ${c.traces} traces were already stored unchanged and kept their diagnosis.`);
    printRunFooter(c, { findings: outputs.findings, summary: outputs.summary, runId: result.runId, db: opts.db, reports: outputs.reports, status: result.status, replaced: result.replaced });
  }
  if (result.status === "incomplete") return EXIT.interrupted;
  return result.counts.errors > 0 || result.counts.failed > 0 || result.replay.totals.errors > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  const cmd = program
    .command("analyze")
    .description("Diagnose traces: detect MAST failure modes with evidence, score outcomes, store, and summarise per model")
    .argument("<paths...>", "trace files or folders (read recursively)")
    .option("-o, --out <dir>", "where findings.jsonl, summary.json and the reports (report.html, report.md, CSVs) go", "faultline-out")
    .option("--db <file|url>", "SQLite store; every analysis is a new run, named <first input>-<YYYYMMDD-HHMMSS> (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else " + DEFAULT_DB + ")", defaultDb())
    .option("--replace", "once this run is complete, delete the store's earlier runs of the same inputs (default: keep them, e.g. for `faultline diff`)")
    .option("--resume", "continue the latest run of the same inputs if it is incomplete (interrupted): traces it stored unchanged are not diagnosed again")
    .option("--json", "print the summary as JSON instead of a table")
    .option("--format <id>", "skip detection and read every file with this format")
    .option("--ground-truth <file>", "ITBench ground-truth YAML (or folder) for rollouts that have none beside them")
    .option("--success-recall <r>", "ITBench: root-cause recall at or above which a run is a success", "1")
    .option("--failure-recall <r>", "ITBench: recall at or below which a run is a failure (between: partial, unknown)", "0")
    .option("-q, --quiet", "no progress bar")
    .option("--jobs <n>", "worker threads that read, diagnose and replay the traces (default: the number of cores; 1: all in one thread)")
    .option("--guards <config>", `guards to replay the traces through for the report's "what the recommended fixes would have caught": a preset (${Object.keys(GUARD_PRESETS).join(", ")}) or a JSON file`, "default")
    .option("--judge", "also label with an LLM judge in the same run (needs --base-url and --model; see `faultline judge --help`)");
  addJudgeOptions(cmd, { hidden: true })
    .addHelpText(
      "after",
      `
Each line of findings.jsonl is one trace:
  {"trace_id","source":{"file","format","index"},"model","framework","outcome":{"success","score","metric"},
   "modes":{"1.1":0|1|null,…,"3.3":0|1|null},"measured_by":{"1.1":["rules/…"],…},
   "findings":[{"mode","confidence","steps","agent","evidence","detector","basis"}],"signals":{…},"annotator":"${RULES_ANNOTATOR}"}
A mode is 1 (found), 0 (examined, not found) or null (not measured: no detector examined it; never counted as 0).
A trace that could not be annotated has "modes": null and an "error".

summary.json also holds "replay": every trace replayed through the guards (--guards), as \`faultline replay --json\`
prints it; the reports render it as "What the recommended fixes would have caught".

Runs: each analysis is stored as a new run named <first input>-<YYYYMMDD-HHMMSS> (e.g. examples-20260115-122609),
marked incomplete until it finishes; --replace deletes the earlier runs of the same inputs once the new one is
complete. The output folder is written whole at the end: until then --out keeps what it held. Ctrl-C stops reading,
stores and writes what was read, marked "status": "incomplete" (exit status 130); a second Ctrl-C quits at once.
--resume then continues that run: traces it stored whose content is unchanged keep their diagnosis.
Inputs without any trace are reported and nothing is written.

Examples:
  faultline analyze examples/ --out out/
  faultline diff examples-20260115-122609 examples-20260116-090000 --by model   # before/after of one folder
  faultline analyze runs/ --ground-truth scenarios/2/ground_truth.yaml --json | jq '.models'
  faultline analyze runs/ --judge --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-32B-Instruct

With --judge, the rules diagnosis is stored as "${RULES_ANNOTATOR}" and findings.jsonl holds the combined diagnosis,
annotator "rules+llm:<model>": rule and verified judge findings, each with its detector, and signals.provenance
saying per mode whether it came from the rules, the judge or both.`,
    )
    .action((paths: string[], opts: AnalyzeCliOptions) => run(runAnalyze(paths, opts)));
}
