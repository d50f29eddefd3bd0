import type { Command } from "commander";
import { evaluateAgreement } from "../analysis/index.js";
import { agreementText } from "../report/index.js";
import { DEFAULT_DB, defaultDb } from "../store/index.js";
import { EXIT, UsageError, writeJson } from "./io.js";
import { diagnosticLines, loadLabelInput } from "./label-input.js";

interface EvalOptions {
  reference: string;
  predicted: string;
  json?: boolean;
  db: string;
  referenceAs: string;
  goldSource?: string;
  tolerance: string;
  annotator?: string;
}

export async function runEval(opts: EvalOptions): Promise<number> {
  if (!["gold", "diagnosis", "auto"].includes(opts.referenceAs)) throw new UsageError(`--reference-as must be gold, diagnosis or auto, got "${opts.referenceAs}"`);
  const tolerances = opts.tolerance.split(",").map((s) => Number(s.trim()));
  if (tolerances.some((k) => !Number.isInteger(k) || k < 0)) throw new UsageError(`--tolerance must list whole step counts, e.g. 1,3,5; got "${opts.tolerance}"`);
  // `auto` decides per input, not per line: a findings file whose lines carry gold labels is read as gold (a line
  // without gold is then a reported, unmatched reference — never its own diagnosis compared with itself).
  const readReference = (findingsAs: "gold" | "diagnosis") =>
    loadLabelInput(opts.reference, { db: opts.db, findingsAs, goldSource: opts.goldSource, tracesAsGold: true });
  let reference = await readReference(opts.referenceAs === "diagnosis" ? "diagnosis" : "gold");
  if (opts.referenceAs === "auto" && reference.load.format === "findings" && reference.load.rows.length === 0) reference = await readReference("diagnosis");
  const predicted = await loadLabelInput(opts.predicted, { db: opts.db, annotator: opts.annotator, findingsAs: "diagnosis" });
  const report = evaluateAgreement(reference.load.rows, predicted.load.rows, { tolerances });
  const side = (x: typeof reference) => ({ source: x.source, format: x.load.format, records: x.load.records, rows: x.load.rows.length, skipped: x.load.skipped, diagnostics: x.load.diagnostics });
  if (opts.json) writeJson({ reference: side(reference), predicted: side(predicted), ...report });
  else {
    for (const [name, x] of [["reference", reference], ["predicted", predicted]] as const)
      for (const line of diagnosticLines(x.load.diagnostics)) process.stderr.write(`${name}: ${line}\n`);
    const kinds = (x: typeof reference) => [...new Set(x.load.rows.map((r) => r.origin.format))].join(", ") || x.load.format || "unknown format";
    console.log(`Reference: ${reference.load.rows.length} traces from ${reference.source} (${kinds(reference)}; ${reference.load.skipped} records skipped)`);
    console.log(`Predicted: ${predicted.load.rows.length} traces from ${predicted.source} (${kinds(predicted)}; ${predicted.load.skipped} records skipped)\n`);
    console.log(agreementText(report));
  }
  if (reference.load.rows.length === 0 || predicted.load.rows.length === 0) {
    if (!opts.json) process.stderr.write("faultline: nothing to compare: one side has no label rows\n");
    return EXIT.usage;
  }
  const unmatched = report.matching.reference_only.length + report.matching.predicted_only.length;
  const errors = [...reference.load.diagnostics, ...predicted.load.diagnostics].some((d) => d.level === "error");
  return errors || unmatched > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("eval")
    .description("Agreement of predicted labels with reference labels: per-mode precision, recall, F1, Cohen's kappa, accuracy; attribution accuracy")
    .requiredOption("--reference <labels>", "reference labels: findings.jsonl (its gold labels), a label CSV, MAST-Data records, trace files with gold labels, or a stored run id")
    .requiredOption("--predicted <labels>", "predicted labels: findings.jsonl, a label CSV, MAST-Data records, or a stored run id")
    .option("--json", "print the full report as JSON")
    .option("--db <file|url>", "store to look run ids up in (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else " + DEFAULT_DB + ")", defaultDb())
    .option("--reference-as <how>", "how to read a findings.jsonl reference: gold (the dataset labels copied into each line), diagnosis (faultline's labels), or auto (gold when the file carries any, else diagnosis)", "auto")
    .option("--gold-source <id>", "which gold label set to use (e.g. who_and_when, agentrx)")
    .option("--tolerance <k,…>", "step tolerances for attribution accuracy within ±k", "1,3,5")
    .option("--annotator <id>", "with a stored predicted run: only this annotator's diagnoses")
    .addHelpText(
      "after",
      `
Traces are matched by id, then by a unique alias (a dataset's own id); every unmatched or ambiguous id is listed.
Exit status 2 when some traces could not be matched or some records could not be read.

Examples:
  faultline analyze ../corpus/who_and_when --out ww/
  faultline eval --reference ww/findings.jsonl --predicted ww/findings.jsonl     # gold vs the rules' first finding
  faultline eval --reference human.csv --predicted judge/findings.jsonl --json`,
    )
    .action((opts: EvalOptions) => run(runEval(opts)));
}
