import type { Command } from "commander";
import { diffRuns } from "../analysis/index.js";
import { diffText } from "../report/index.js";
import { DEFAULT_DB, defaultDb } from "../store/index.js";
import { EXIT, UsageError, writeJson } from "./io.js";
import { checkGroupKey, diagnosticLines, loadLabelInput } from "./label-input.js";

interface DiffCliOptions {
  by?: string;
  json?: boolean;
  db: string;
  annotator?: string;
  alpha: string;
  traces: string;
}

export async function runDiff(beforeSpec: string, afterSpec: string, opts: DiffCliOptions): Promise<number> {
  const alpha = Number(opts.alpha);
  if (!(alpha > 0 && alpha < 1)) throw new UsageError(`--alpha must be between 0 and 1, got "${opts.alpha}"`);
  const maxTraces = Number(opts.traces);
  if (!Number.isInteger(maxTraces) || maxTraces < 0) throw new UsageError(`--traces must be a whole number, got "${opts.traces}"`);
  const before = await loadLabelInput(beforeSpec, { db: opts.db, annotator: opts.annotator });
  const after = await loadLabelInput(afterSpec, { db: opts.db, annotator: opts.annotator });
  checkGroupKey([...before.load.rows, ...after.load.rows], opts.by);
  const report = diffRuns(before.load.rows, after.load.rows, { by: opts.by, alpha });
  const side = (x: typeof before) => ({ source: x.source, format: x.load.format, records: x.load.records, rows: x.load.rows.length, skipped: x.load.skipped, diagnostics: x.load.diagnostics });
  if (opts.json) writeJson({ before: side(before), after: side(after), ...report });
  else {
    for (const [name, x] of [["before", before], ["after", after]] as const)
      for (const line of diagnosticLines(x.load.diagnostics)) process.stderr.write(`${name}: ${line}\n`);
    console.log(`Before: ${before.load.rows.length} traces from ${before.source}`);
    console.log(`After:  ${after.load.rows.length} traces from ${after.source}\n`);
    console.log(diffText(report, maxTraces));
  }
  if (before.load.rows.length === 0 || after.load.rows.length === 0) return EXIT.usage;
  const errors = [...before.load.diagnostics, ...after.load.diagnostics].some((d) => d.level === "error");
  return errors ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("diff")
    .description("Compare two runs over the same or comparable traces: which modes rose or fell per group, with significance, and which traces changed label")
    .argument("<before>", "findings.jsonl, a label CSV or MAST-Data records, or a stored run id")
    .argument("<after>", "the same kinds of input")
    .option("--by <key>", "compare per group of this field (model, framework, benchmark, group, …)")
    .option("--json", "print the full report as JSON (every changed trace, every unmatched id)")
    .option("--db <file|url>", "store to look run ids up in (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else " + DEFAULT_DB + ")", defaultDb())
    .option("--annotator <id>", "with stored runs: only this annotator's diagnoses")
    .option("--alpha <level>", "significance level", "0.05")
    .option("--traces <n>", "changed traces to print", "20")
    .addHelpText(
      "after",
      `
When most of a group's traces appear in both runs, changes are measured on those pairs (Newcombe's paired interval,
exact McNemar test); otherwise the runs are compared as independent samples (Newcombe's interval, Fisher's exact test).

Examples:
  faultline diff before/findings.jsonl after/findings.jsonl --by model
  faultline diff 9a1676a9 b8d939a3 --json | jq '.changed'`,
    )
    .action((before: string, after: string, opts: DiffCliOptions) => run(runDiff(before, after, opts)));
}
