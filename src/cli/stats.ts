import type { Command } from "commander";
import { groupRows, groupStatistics, INTERVENTIONS, rankAllGroups } from "../analysis/index.js";
import { statsText } from "../report/index.js";
import { DEFAULT_DB, defaultDb } from "../store/index.js";
import { EXIT, UsageError, writeJson } from "./io.js";
import { checkGroupKey, diagnosticLines, loadLabelInput } from "./label-input.js";

interface StatsOptions {
  by?: string;
  json?: boolean;
  db: string;
  annotator?: string;
  gold?: boolean;
  goldSource?: string;
  confidence?: string;
  interventions?: string;
}

export async function runStats(input: string, opts: StatsOptions): Promise<number> {
  const confidence = opts.confidence === undefined ? 0.95 : Number(opts.confidence);
  if (!(confidence > 0 && confidence < 1)) throw new UsageError(`--confidence must be between 0 and 1, got "${opts.confidence}"`);
  const top = opts.interventions === undefined ? 3 : Number(opts.interventions);
  if (!Number.isInteger(top) || top < 0) throw new UsageError(`--interventions must be a whole number, got "${opts.interventions}"`);
  const { load, source } = await loadLabelInput(input, {
    db: opts.db,
    annotator: opts.annotator,
    findingsAs: opts.gold || opts.goldSource ? "gold" : "diagnosis",
    goldSource: opts.goldSource,
    tracesAsGold: true,
  });
  checkGroupKey(load.rows, opts.by);
  const report = groupStatistics(load.rows, { by: opts.by, confidence });
  const buckets = groupRows(load.rows, opts.by);
  const interventions = rankAllGroups(report.groups, { rowsOf: (v) => buckets.get(v) });
  const errors = load.diagnostics.filter((d) => d.level === "error").length;
  if (opts.json)
    writeJson({
      input: { source, format: load.format, records: load.records, rows: load.rows.length, skipped: load.skipped },
      diagnostics: load.diagnostics,
      ...report,
      interventions,
      /** What each ranked intervention is: to build, why, evidence, guard. */
      catalogue: INTERVENTIONS,
    });
  else {
    for (const line of diagnosticLines(load.diagnostics)) process.stderr.write(`${line}\n`);
    if (load.rows.length === 0) {
      process.stderr.write(`faultline: no label rows in ${source}\n`);
      return EXIT.usage;
    }
    console.log(`${load.rows.length} traces from ${source} (${load.format ?? "unknown format"}; ${load.records} records, ${load.skipped} skipped)\n`);
    console.log(statsText(report, interventions, top));
  }
  if (load.rows.length === 0) return EXIT.usage;
  return errors > 0 || load.skipped > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("stats")
    .description("Failure statistics per group: prevalence with intervals, successful-vs-failed deltas, fatal/benign class, ranked interventions")
    .argument("<labels>", "findings.jsonl, a label CSV, MAST-Data records, a folder of them, trace files with gold labels, or a stored run id")
    .option("--by <key>", "group by this field (model, framework, benchmark, group, or a dot path such as reference.level)")
    .option("--json", "print the full report as JSON ({input, diagnostics, by, groups: [GroupStats], interventions, catalogue})")
    .option("--db <file|url>", "store to look a run id up in (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else " + DEFAULT_DB + ")", defaultDb())
    .option("--annotator <id>", "with a stored run: only this annotator's diagnoses")
    .option("--gold", "with findings.jsonl: use the dataset's gold labels carried in each line instead of faultline's diagnosis")
    .option("--gold-source <id>", "which gold label set (e.g. who_and_when, agentrx); implies --gold")
    .option("--confidence <level>", "confidence level of every interval", "0.95")
    .option("--interventions <n>", "how many ranked interventions to print per group (0: none)", "3")
    .addHelpText(
      "after",
      `
The label CSV header is exactly: trace_id,group,success,1.1,…,3.3 (success and modes 1, 0 or empty).
docs/statistics.md explains every statistic.

Examples:
  faultline stats out/findings.jsonl --by model
  faultline stats examples/labels.csv --by group --json | jq '.groups[0].predictors'
  faultline stats 9a1676a9 --by framework          # a run stored by faultline analyze`,
    )
    .action((input: string, opts: StatsOptions) => run(runStats(input, opts)));
}
