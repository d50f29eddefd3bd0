/**
 * `npm run bench:accuracy`: how well the diagnosis agrees with careful annotators.
 *
 * 1. The labelled dev set (eval/dev-set.jsonl: runs from the corpus, each labelled in two independent passes per
 *    ../shared/reference/labelling-guideline.md and adjudicated): per-mode precision / recall / F1 with support,
 *    micro-F1, Cohen's κ, and the two annotation passes' own agreement as the ceiling; decisive-step attribution.
 * 2. The datasets' own labels: Who&When (agent / step), AgentRx (root-cause step, failure steps cited), MAST-Data
 *    human records (modes), with the published baselines beside them.
 * 3. The whole corpus: modes per failed trace and failed runs with no mode, per corpus source.
 *
 * Writes bench/results/accuracy.md (and .json). With `--judge --base-url URL --model NAME` the dev set is also
 * judged by that model (rules findings as hints, the combined record as `analyze --judge` writes it) and scored on
 * the same labels the same way.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { evaluateAgreement, labelsFromRecords, rowFromTrace, type AgreementReport, type LabelRow } from "../src/analysis/index.js";
import { emptyRunCounts, diagnosedTraces } from "../src/pipeline/diagnosed.js";
import type { Diagnosis, Trace } from "../src/trace/index.js";
import { mast } from "../src/taxonomy/index.js";
import { mdTable, machine } from "./results.js";
import { loadDevSet, type DevRun } from "../eval/dev-set.js";

const here = import.meta.dirname;
const repo = resolve(here, "..");
const CORPUS = resolve(repo, "../shared/corpus");
const OUT = join(here, "results");

const args = parseArgs({
  options: {
    judge: { type: "boolean", default: false },
    "base-url": { type: "string" },
    model: { type: "string" },
    "api-key-env": { type: "string" },
    concurrency: { type: "string", default: "4" },
    quiet: { type: "boolean", default: false },
  },
}).values;

const pct = (x: number | null | undefined) => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(1)} %`);
const f2 = (x: number | null | undefined) => (x === null || x === undefined ? "–" : x.toFixed(2));

// ---------------------------------------------------------------------------------------------------------------
// Read and diagnose the whole corpus once; keep only what the tables need.

const dev = loadDevSet(join(repo, "eval/dev-set.jsonl"));
const devIds = new Set(dev.map((r) => r.trace_id));
const devTraces = new Map<string, { trace: Trace; rules: Diagnosis }>();
const predicted = new Map<string, Diagnosis>();
const goldRefs: Record<string, LabelRow[]> = { "who_and_when:algorithm-generated": [], "who_and_when:hand-crafted": [], agentrx: [], "mast-data": [] };
const agentrxFailures = new Map<string, number[]>();
interface SourceTally { traces: number; failed: number; failedModes: number; failedNone: number; findings: Record<string, number> }
const bySource = new Map<string, SourceTally>();
const counts = emptyRunCounts();
const t0 = Date.now();
for await (const { trace, rules } of diagnosedTraces([CORPUS], {}, counts)) {
  const folder = trace.source.file.slice(CORPUS.length + 1).split("/")[0]!;
  if (devIds.has(trace.id)) devTraces.set(trace.id, { trace, rules });
  predicted.set(trace.id, { ...rules, findings: rules.findings.map((f) => ({ ...f, evidence: "" })) });
  const t = bySource.get(folder) ?? { traces: 0, failed: 0, failedModes: 0, failedNone: 0, findings: {} };
  t.traces++;
  const present = rules.modes ? Object.entries(rules.modes).filter(([, v]) => v === 1).map(([k]) => k) : [];
  for (const m of present) t.findings[m] = (t.findings[m] ?? 0) + 1;
  if (rules.outcome.success === false) {
    t.failed++;
    t.failedModes += present.length;
    if (present.length === 0) t.failedNone++;
  }
  bySource.set(folder, t);
  for (const g of trace.goldLabels ?? []) {
    const key = g.source === "who_and_when" ? (trace.id.includes(":hand-crafted:") ? "who_and_when:hand-crafted" : "who_and_when:algorithm-generated") : g.source.startsWith("mast-data") || g.source.startsWith("mad") ? "mast-data" : g.source;
    if (!goldRefs[key]) continue;
    const { row } = rowFromTrace(trace, { goldSource: g.source });
    if (row) goldRefs[key]!.push(row);
    if (key === "agentrx") agentrxFailures.set(trace.id, (g.failures ?? []).map((f) => f.step).filter((s): s is number => s !== undefined));
  }
}
const seconds = (Date.now() - t0) / 1000;

async function rowsOf(ds: Diagnosis[]): Promise<LabelRow[]> {
  return (await labelsFromRecords(ds.map((value) => ({ value })), "predicted", { findingsAs: "diagnosis" })).rows;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Dev set

const missing = dev.filter((r) => !devTraces.has(r.trace_id));
if (missing.length) throw new Error(`dev-set runs not found in ${CORPUS}: ${missing.map((r) => `${r.id} ${r.trace_id}`).join(", ")}`);
const refRows = (pick: (r: DevRun) => DevRun["labels"], decisive: (r: DevRun) => { step: number; agent: string | null } | null): LabelRow[] =>
  dev.map((r, i) => ({
    trace_id: r.trace_id,
    fields: { source: r.corpus_source },
    success: r.outcome,
    modes: pick(r),
    ...(decisive(r) ? { attribution: { agent: decisive(r)!.agent, step: decisive(r)!.step } } : {}),
    origin: { file: "eval/dev-set.jsonl", line: i + 1, format: "trace-gold" as const },
  }));
const reference = refRows((r) => r.labels, (r) => r.decisive);
const rulesReport = evaluateAgreement(reference, await rowsOf(dev.map((r) => devTraces.get(r.trace_id)!.rules)));
const passes = evaluateAgreement(refRows((r) => r.passes.A, (r) => r.passes_decisive.A), refRows((r) => r.passes.B, (r) => r.passes_decisive.B));

let judgeReport: AgreementReport | undefined;
let judgeName: string | undefined;
if (args.judge) {
  const { judged, annotator } = await judgeDevSet();
  judgeName = annotator;
  judgeReport = evaluateAgreement(reference, await rowsOf(judged));
}

const failedDev = dev.filter((r) => r.outcome === false);
const failedNone = failedDev.filter((r) => Object.values(devTraces.get(r.trace_id)!.rules.modes ?? {}).every((v) => v !== 1)).length;

function modeTable(report: AgreementReport, ceiling: AgreementReport, judge?: AgreementReport): string {
  const rows = report.modes.map((m, i) => {
    const c = ceiling.modes[i]!;
    const j = judge?.modes[i];
    return [`${m.code} ${m.name}`, m.tp + m.fn, m.tp + m.fp, m.tp, m.fp, m.fn, f2(m.precision), f2(m.recall), f2(m.f1), f2(m.kappa), f2(c.kappa), ...(j ? [f2(j.f1), f2(j.kappa)] : [])];
  });
  const mi = report.micro;
  rows.push(["**micro (all modes)**", mi.tp + mi.fn, mi.tp + mi.fp, mi.tp, mi.fp, mi.fn, f2(mi.precision), f2(mi.recall), `**${f2(mi.f1)}**`, f2(mi.kappa), f2(ceiling.micro.kappa), ...(judge ? [f2(judge.micro.f1), f2(judge.micro.kappa)] : [])]);
  rows.push(["macro (modes with data)", "", "", "", "", "", f2(report.macro.precision), f2(report.macro.recall), f2(report.macro.f1), f2(report.macro.kappa), f2(ceiling.macro.kappa), ...(judge ? [f2(judge.macro.f1), f2(judge.macro.kappa)] : [])]);
  return mdTable(["mode", "support", "claimed", "TP", "FP", "FN", "precision", "recall", "F1", "κ", "κ between passes (ceiling)", ...(judge ? [`judge F1`, `judge κ`] : [])], rows);
}

function attributionLine(report: AgreementReport): string {
  const a = report.attribution;
  if (!a) return "no reference attribution";
  const w = (k: number) => a.step.within.find((x) => x.k === k);
  return `agent ${a.agent.correct}/${a.agent.total} (${pct(a.agent.accuracy)}), step exact ${a.step.exact.correct}/${a.step.total} (${pct(a.step.exact.accuracy)}), ±1 ${pct(w(1)?.accuracy)}, ±3 ${pct(w(3)?.accuracy)}, ±5 ${pct(w(5)?.accuracy)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Dataset labels

const datasetRows: (string | number)[][] = [];
const BASELINES: Record<string, string> = {
  "who_and_when:algorithm-generated": "random 29.1 / 19.1; GPT-4o all-at-once 54.3 / 12.5; step-by-step 35.2 / 25.5 (paper, reported)",
  "who_and_when:hand-crafted": "random 12.0 / 4.2; GPT-4o all-at-once 55.2 / 5.3; step-by-step 34.5 / 7.0 (paper, reported)",
  agentrx: "AgentRx reports +23.6 % localisation over baselines (no single table cell)",
};
const allPredicted = [...predicted.values()];
const predictedRows = await rowsOf(allPredicted);
for (const [key, refs] of Object.entries(goldRefs)) {
  if (!refs.length) continue;
  const ids = new Set(refs.map((r) => r.trace_id));
  const report = evaluateAgreement(refs, predictedRows.filter((r) => ids.has(r.trace_id)));
  if (key === "mast-data") {
    datasetRows.push([key, refs.length, `modes: micro-F1 ${f2(report.micro.f1)}, κ ${f2(report.micro.kappa)} (TP ${report.micro.tp}, FP ${report.micro.fp}, FN ${report.micro.fn})`, "MAST o1 judge κ 0.77 on its own held-out set (paper, reported); κ 0.05 when re-run on these records (MAST issue #13)"]);
    continue;
  }
  let extra = "";
  if (key === "agentrx") {
    let cited = 0;
    let total = 0;
    for (const [id, steps] of agentrxFailures) {
      const d = predicted.get(id);
      const findingSteps = new Set(d?.findings.flatMap((f) => f.steps) ?? []);
      total += steps.length;
      cited += steps.filter((s) => findingSteps.has(s)).length;
    }
    extra = `; annotated failure steps cited by a finding ${cited}/${total} (${pct(total ? cited / total : null)})`;
  }
  datasetRows.push([key, refs.length, attributionLine(report) + extra, BASELINES[key] ?? ""]);
}

// ---------------------------------------------------------------------------------------------------------------
// 3. Corpus coverage

const sourceRows = [...bySource.entries()]
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([src, t]) => [src, t.traces, t.failed, t.failed ? f2(t.failedModes / t.failed) : "–", t.failed ? `${pct(t.failedNone / t.failed)}${t.failed >= 50 ? (t.failedNone / t.failed <= 0.25 ? " ✓" : " ✗") : ""}` : "–", Object.entries(t.findings).sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true })).map(([m, n]) => `${m}:${n}`).join(" ")]);

// ---------------------------------------------------------------------------------------------------------------

const bySrc = new Map<string, number>();
for (const r of dev) bySrc.set(r.corpus_source, (bySrc.get(r.corpus_source) ?? 0) + 1);
const md = `# Diagnosis accuracy

Written by \`npm run bench:accuracy\` (bench/accuracy.ts). Machine: ${machine()}. Annotator: ${dev.length ? devTraces.get(dev[0]!.trace_id)!.rules.annotator : "?"}.
Corpus read and diagnosed in ${seconds.toFixed(1)} s (${counts.traces} traces, ${counts.errors} reader errors).

## 1. Dev set: agreement with adjudicated labels

${dev.length} runs from ${bySrc.size} corpus sources (${[...bySrc.entries()].map(([s, n]) => `${s} ${n}`).join(", ")}), ${failedDev.length} failed, labelled per
\`labelling-guideline.md\` in two independent passes and adjudicated (eval/dev-set.jsonl). "support" = adjudicated
positives; "claimed" = runs where the rules claim the mode. The ceiling column is Cohen's κ between the two annotation
passes on the same runs.${judgeName ? ` Judge: \`${judgeName}\` on the same runs.` : ""}

${modeTable(rulesReport, passes, judgeReport)}

- Failed dev-set runs with no mode: ${failedNone}/${failedDev.length} (${pct(failedDev.length ? failedNone / failedDev.length : null)}).
- Decisive step vs the adjudicated one: ${attributionLine(rulesReport)}.
- Between the two annotation passes: micro-F1 ${f2(passes.micro.f1)}, κ ${f2(passes.micro.kappa)}; decisive ${attributionLine(passes)}.
${judgeReport ? `- Judge decisive step: ${attributionLine(judgeReport)}.\n` : ""}
## 2. Datasets' own labels

Every labelled trace of the corpus, rules only (no LLM). Attribution = the record's decisive step and agent.

${mdTable(["reference", "traces", "faultline (rules)", "published baselines (agent % / step %)"], datasetRows)}

## 3. Corpus: modes per failed trace, failed runs with no mode

Target: ≤ 25 % of failed runs with no mode for every source with ≥ 50 failed runs (✓ / ✗). The ITBench × MAST
study's expert annotators found 2.6–5.3 modes per failed trace.

${mdTable(["source", "traces", "failed", "modes per failed trace", "failed with no mode", "traces per mode"], sourceRows)}
`;

mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, "accuracy.md"), md);
writeFileSync(
  join(OUT, "accuracy.json"),
  JSON.stringify({ dev: { runs: dev.length, rules: rulesReport, passes, judge: judgeReport ?? null, judgeName: judgeName ?? null, failedNone, failed: failedDev.length }, datasets: datasetRows, sources: Object.fromEntries(bySource) }, null, 1),
);
if (!args.quiet) console.log(md);
console.error(`wrote ${join(OUT, "accuracy.md")}`);

// ---------------------------------------------------------------------------------------------------------------

async function judgeDevSet(): Promise<{ judged: Diagnosis[]; annotator: string }> {
  const { OpenAIChatModel, Pool, judgeTrace } = await import("../src/judge/index.js");
  const { combineDiagnoses, judgeAnnotator } = await import("../src/pipeline/judge.js");
  if (!args["base-url"] || !args.model) throw new Error("--judge needs --base-url URL and --model NAME (an OpenAI-compatible endpoint)");
  const concurrency = Math.max(1, Number(args.concurrency) || 4);
  const pool = new Pool(concurrency);
  const keyEnv = args["api-key-env"];
  const model = new OpenAIChatModel({ baseURL: args["base-url"], model: args.model, apiKeyEnv: keyEnv }, { pool, env: keyEnv ? process.env : {} });
  const annotator = judgeAnnotator(args.model, true);
  const judged: Diagnosis[] = [];
  let done = 0;
  const queue = [...dev];
  async function worker() {
    for (let r = queue.shift(); r; r = queue.shift()) {
      const { trace, rules } = devTraces.get(r.trace_id)!;
      const j = await judgeTrace(trace, rules.findings, { model, outcome: () => rules.outcome, taxonomy: mast });
      judged.push(combineDiagnoses(rules, j, annotator, true, mast.codes));
      process.stderr.write(`\rjudged ${++done}/${dev.length}`);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  process.stderr.write("\n");
  return { judged, annotator };
}
