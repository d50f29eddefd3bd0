/**
 * Recovers the bundled examples' injected failure modes: analyses examples/ with the rule detectors and prints
 * per-mode precision and recall against examples/labels.csv (the labels the generator injected), plus outcome
 * agreement. Run: `npx tsx scripts/check-examples.ts` (exit 1 when any injected mode is missed or invented).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evaluateAgreement, labelsFromRecords, loadLabels } from "../src/analysis/index.js";
import { analyze } from "../src/pipeline/index.js";

export async function checkExamples(examplesDir: string) {
  const dir = mkdtempSync(join(tmpdir(), "faultline-examples-"));
  try {
    const result = await analyze([examplesDir], { out: join(dir, "out"), db: join(dir, "store.db") });
    const reference = await loadLabels(join(examplesDir, "labels.csv"));
    const predicted = await labelsFromRecords(result.diagnoses.map((value) => ({ value })), "findings.jsonl");
    const report = evaluateAgreement(reference.rows, predicted.rows);
    const outcomes = reference.rows.map((r) => {
      const p = predicted.rows.find((x) => x.trace_id === r.trace_id);
      return { id: r.trace_id, expected: r.success, got: p?.success ?? null };
    });
    return { report, outcomes, traces: result.counts.traces };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { report, outcomes, traces } = await checkExamples(process.argv[2] ?? "examples");
  const pct = (x: number | null) => (x === null ? "  -  " : x.toFixed(2).padStart(5));
  console.log(`${traces} example traces; matched ${report.matching.matched} with labels.csv\n`);
  console.log("mode  name                                 tp  fp  fn  precision  recall");
  let bad = 0;
  for (const m of report.modes) {
    if (m.tp + m.fp + m.fn === 0) continue;
    bad += m.fp + m.fn;
    console.log(`${m.code.padEnd(5)} ${m.name.padEnd(36)} ${String(m.tp).padStart(2)}  ${String(m.fp).padStart(2)}  ${String(m.fn).padStart(2)}  ${pct(m.precision)}      ${pct(m.recall)}`);
  }
  const wrong = outcomes.filter((o) => o.expected !== o.got);
  console.log(`\nmicro precision ${pct(report.micro.precision)}, recall ${pct(report.micro.recall)}; outcomes agreeing: ${outcomes.length - wrong.length}/${outcomes.length}`);
  for (const w of wrong) console.log(`  outcome differs: ${w.id} expected ${w.expected} got ${w.got}`);
  process.exitCode = bad || wrong.length ? 1 : 0;
}
