import { evaluateAgreement, labelsFromRecords, rowFromTrace, type AgreementReport, type LabelRow } from "../src/analysis/index.js";
import { emptyRunCounts, diagnosedTraces } from "../src/pipeline/diagnosed.js";
import type { Diagnosis, Trace } from "../src/trace/index.js";
import { mast } from "../src/taxonomy/index.js";
import { loadDevSet, type DevRun } from "./dev-set.js";

/**
 * Diagnosis accuracy against careful annotators (the engine of `npm run bench:accuracy`):
 * 1. the labelled dev set (eval/dev-set.jsonl): per-mode precision / recall / F1 with support, micro-F1, Cohen's κ,
 *    the two annotation passes' agreement as the ceiling, and decisive-step attribution;
 * 2. the datasets' own labels: Who&When (agent / step), AgentRx (root-cause step, failure steps cited), MAST-Data
 *    human records (modes);
 * 3. the whole corpus: modes per failed trace and failed runs with no mode, per corpus source.
 * With `judge`, the dev set is also judged by that model (rule findings as hints, the combined record `analyze
 * --judge` writes) and scored on the same labels the same way.
 */
export interface AccuracyOptions {
  corpus: string;
  devSet: string;
  /** A second set labelled the same way and never used to develop rules (eval/holdout-set.jsonl); scored alone. */
  holdoutSet?: string;
  judge?: { baseURL: string; model: string; apiKeyEnv?: string; concurrency?: number; onProgress?: (done: number, total: number) => void };
}

export interface SourceTally {
  traces: number;
  failed: number;
  failedModes: number;
  failedNone: number;
  findings: Record<string, number>;
}

/** How the rules agree with one labelled set (the dev set, or the held-out set). */
export interface LabelledSetScore {
  runs: number;
  sources: Record<string, number>;
  /** Adjudicated positives per mode (measured or not). */
  positives: Record<string, number>;
  failed: number;
  failedNone: number;
  rules: AgreementReport;
  passes: AgreementReport;
}

export interface AccuracyReport {
  annotator: string;
  seconds: number;
  corpusTraces: number;
  readerErrors: number;
  dev: LabelledSetScore & { judge: AgreementReport | null; judgeName: string | null };
  /** The held-out set, rules only (absent when no held-out file is given). */
  holdout: LabelledSetScore | null;
  /** One row per dataset with labels: [reference, traces, faultline (rules), published baselines]. */
  datasets: { reference: string; traces: number; result: string; baseline: string; report: AgreementReport; cited?: { cited: number; total: number } }[];
  sources: Record<string, SourceTally>;
}

const BASELINES: Record<string, string> = {
  "who_and_when:algorithm-generated": "random 29.1 / 19.1; GPT-4o all-at-once 54.3 / 12.5; step-by-step 35.2 / 25.5 (paper, reported)",
  "who_and_when:hand-crafted": "random 12.0 / 4.2; GPT-4o all-at-once 55.2 / 5.3; step-by-step 34.5 / 7.0 (paper, reported)",
  agentrx: "AgentRx reports +23.6 % localisation over baselines (no single table cell)",
  "mast-data": "MAST o1 judge κ 0.77 on its own held-out set (paper, reported); κ 0.05 when re-run on these records (MAST issue #13)",
};

export const pct = (x: number | null | undefined) => (x === null || x === undefined ? "–" : `${(x * 100).toFixed(1)} %`);
export const f2 = (x: number | null | undefined) => (x === null || x === undefined ? "–" : x.toFixed(2));

export function attributionLine(report: AgreementReport): string {
  const a = report.attribution;
  if (!a) return "no reference attribution";
  const w = (k: number) => a.step.within.find((x) => x.k === k);
  return `agent ${a.agent.correct}/${a.agent.total} (${pct(a.agent.accuracy)}), step exact ${a.step.exact.correct}/${a.step.total} (${pct(a.step.exact.accuracy)}), ±1 ${pct(w(1)?.accuracy)}, ±3 ${pct(w(3)?.accuracy)}, ±5 ${pct(w(5)?.accuracy)}`;
}

async function rowsOf(ds: Diagnosis[]): Promise<LabelRow[]> {
  return (await labelsFromRecords(ds.map((value) => ({ value })), "predicted", { findingsAs: "diagnosis" })).rows;
}

export async function measureAccuracy(opts: AccuracyOptions): Promise<AccuracyReport> {
  const CORPUS = opts.corpus.replace(/\/$/, "");
  const dev = loadDevSet(opts.devSet);
  const holdout = opts.holdoutSet ? loadDevSet(opts.holdoutSet) : [];
  const overlap = holdout.filter((h) => dev.some((d) => d.trace_id === h.trace_id));
  if (overlap.length) throw new Error(`${opts.holdoutSet}: ${overlap.map((r) => r.id).join(", ")} also in ${opts.devSet}; a held-out run must not be in the dev set`);
  // dev runs are matched by corpus file and position (an id's "#n" suffix depends on what else was read)
  const devKey = (file: string, index: number) => `${file}#${index}`;
  const devByKey = new Map([...dev, ...holdout].map((r) => [devKey(r.file, r.index), r]));
  const devTraces = new Map<string, { trace: Trace; rules: Diagnosis }>();
  const predicted = new Map<string, Diagnosis>();
  const goldRefs: Record<string, LabelRow[]> = { "who_and_when:algorithm-generated": [], "who_and_when:hand-crafted": [], agentrx: [], "mast-data": [] };
  const agentrxFailures = new Map<string, number[]>();
  const bySource: Record<string, SourceTally> = {};
  const counts = emptyRunCounts();
  const t0 = Date.now();
  for await (const { trace, rules } of diagnosedTraces([CORPUS], {}, counts)) {
    const folder = trace.source.file.slice(CORPUS.length + 1).split("/")[0]!;
    const devRun = devByKey.get(devKey(trace.source.file.slice(CORPUS.length + 1), trace.source.index));
    if (devRun) devTraces.set(devRun.trace_id, { trace, rules: { ...rules, trace_id: devRun.trace_id } });
    // evidence quotes are not needed for the tables: keep the records small
    predicted.set(trace.id, { ...rules, findings: rules.findings.map((f) => ({ ...f, evidence: "" })) });
    const t = (bySource[folder] ??= { traces: 0, failed: 0, failedModes: 0, failedNone: 0, findings: {} });
    t.traces++;
    const present = rules.modes ? Object.entries(rules.modes).filter(([, v]) => v === 1).map(([k]) => k) : [];
    for (const m of present) t.findings[m] = (t.findings[m] ?? 0) + 1;
    if (rules.outcome.success === false) {
      t.failed++;
      t.failedModes += present.length;
      if (present.length === 0) t.failedNone++;
    }
    for (const g of trace.goldLabels ?? []) {
      const key = g.source === "who_and_when" ? (trace.id.includes(":hand-crafted:") ? "who_and_when:hand-crafted" : "who_and_when:algorithm-generated") : g.source.startsWith("mast-data") || g.source.startsWith("mad") ? "mast-data" : g.source;
      if (!goldRefs[key]) continue;
      const { row } = rowFromTrace(trace, { goldSource: g.source });
      if (row) goldRefs[key]!.push(row);
      if (key === "agentrx") agentrxFailures.set(trace.id, (g.failures ?? []).map((f) => f.step).filter((s): s is number => s !== undefined));
    }
  }
  const seconds = (Date.now() - t0) / 1000;

  const missing = [...dev, ...holdout].filter((r) => !devTraces.has(r.trace_id));
  if (missing.length) throw new Error(`labelled runs not found in ${CORPUS}: ${missing.map((r) => `${r.id} ${r.trace_id}`).join(", ")}`);
  const devScore = await scoreLabelled(dev, opts.devSet, devTraces);
  const reference = labelRows(dev, opts.devSet, (r) => r.labels, (r) => r.decisive);
  let judgeReport: AgreementReport | null = null;
  let judgeName: string | null = null;
  if (opts.judge) {
    const { judged, annotator } = await judgeDevSet(dev, devTraces, opts.judge);
    judgeName = annotator;
    judgeReport = evaluateAgreement(reference, await rowsOf(judged));
  }
  const datasets: AccuracyReport["datasets"] = [];
  const predictedRows = await rowsOf([...predicted.values()]);
  for (const [key, refs] of Object.entries(goldRefs)) {
    if (!refs.length) continue;
    const ids = new Set(refs.map((r) => r.trace_id));
    const report = evaluateAgreement(refs, predictedRows.filter((r) => ids.has(r.trace_id)));
    if (key === "mast-data") {
      datasets.push({ reference: key, traces: refs.length, result: `modes: micro-F1 ${f2(report.micro.f1)}, κ ${f2(report.micro.kappa)} (TP ${report.micro.tp}, FP ${report.micro.fp}, FN ${report.micro.fn})`, baseline: BASELINES[key]!, report });
      continue;
    }
    let cited: { cited: number; total: number } | undefined;
    if (key === "agentrx") {
      cited = { cited: 0, total: 0 };
      for (const [id, steps] of agentrxFailures) {
        const findingSteps = new Set(predicted.get(id)?.findings.flatMap((f) => f.steps) ?? []);
        cited.total += steps.length;
        cited.cited += steps.filter((s) => findingSteps.has(s)).length;
      }
    }
    const extra = cited ? `; annotated failure steps cited by a finding ${cited.cited}/${cited.total} (${pct(cited.total ? cited.cited / cited.total : null)})` : "";
    datasets.push({ reference: key, traces: refs.length, result: attributionLine(report) + extra, baseline: BASELINES[key] ?? "", report, ...(cited ? { cited } : {}) });
  }
  return {
    annotator: devTraces.get(dev[0]!.trace_id)!.rules.annotator,
    seconds,
    corpusTraces: counts.traces,
    readerErrors: counts.errors,
    dev: { ...devScore, judge: judgeReport, judgeName },
    holdout: holdout.length ? await scoreLabelled(holdout, opts.holdoutSet!, devTraces) : null,
    datasets,
    sources: bySource,
  };
}

/** A labelled set as reference rows (its adjudicated labels, or one pass's), with the decisive step as attribution. */
function labelRows(set: DevRun[], path: string, pick: (r: DevRun) => DevRun["labels"], decisive: (r: DevRun) => { step: number; agent: string | null } | null): LabelRow[] {
  return set.map((r, i) => {
    const d = decisive(r);
    return { trace_id: r.trace_id, fields: { source: r.corpus_source }, success: r.outcome, modes: pick(r), ...(d ? { attribution: { agent: d.agent, step: d.step } } : {}), origin: { file: path, line: i + 1, format: "trace-gold" as const } };
  });
}

/** The rules' agreement with one labelled set, the ceiling (the two passes' agreement), and its empty-vector count. */
async function scoreLabelled(set: DevRun[], path: string, traces: Map<string, { trace: Trace; rules: Diagnosis }>): Promise<LabelledSetScore> {
  const rules = evaluateAgreement(labelRows(set, path, (r) => r.labels, (r) => r.decisive), await rowsOf(set.map((r) => traces.get(r.trace_id)!.rules)));
  const passes = evaluateAgreement(labelRows(set, path, (r) => r.passes.A, (r) => r.passes_decisive.A), labelRows(set, path, (r) => r.passes.B, (r) => r.passes_decisive.B));
  const failed = set.filter((r) => r.outcome === false);
  const failedNone = failed.filter((r) => Object.values(traces.get(r.trace_id)!.rules.modes ?? {}).every((v) => v !== 1)).length;
  const sources: Record<string, number> = {};
  for (const r of set) sources[r.corpus_source] = (sources[r.corpus_source] ?? 0) + 1;
  const positives: Record<string, number> = Object.fromEntries(mast.codes.map((c) => [c, set.filter((r) => r.labels[c] === 1).length]));
  return { runs: set.length, sources, positives, failed: failed.length, failedNone, rules, passes };
}

async function judgeDevSet(dev: DevRun[], devTraces: Map<string, { trace: Trace; rules: Diagnosis }>, j: NonNullable<AccuracyOptions["judge"]>): Promise<{ judged: Diagnosis[]; annotator: string }> {
  const { OpenAIChatModel, Pool, judgeTrace } = await import("../src/judge/index.js");
  const { combineDiagnoses, judgeAnnotator, withDecisive } = await import("../src/pipeline/judge.js");
  const concurrency = Math.max(1, j.concurrency ?? 4);
  const pool = new Pool(concurrency);
  const model = new OpenAIChatModel({ baseURL: j.baseURL, model: j.model, apiKeyEnv: j.apiKeyEnv }, { pool, env: j.apiKeyEnv ? process.env : {} });
  const annotator = judgeAnnotator(j.model, true);
  const judged: Diagnosis[] = new Array(dev.length);
  let next = 0;
  let done = 0;
  async function worker() {
    for (let i = next++; i < dev.length; i = next++) {
      const { trace, rules } = devTraces.get(dev[i]!.trace_id)!;
      const jt = await judgeTrace(trace, rules.findings, { model, outcome: () => rules.outcome, taxonomy: mast });
      judged[i] = withDecisive(trace, combineDiagnoses(rules, jt, annotator, true, mast.codes));
      j.onProgress?.(++done, dev.length);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { judged, annotator };
}

function modeTable(report: AgreementReport, ceiling: AgreementReport, judge: AgreementReport | null, reference: Record<string, number>, mdTable: (h: string[], r: (string | number)[][]) => string): string {
  const rows = report.modes.map((m, i) => {
    const c = ceiling.modes[i]!;
    const jm = judge?.modes[i];
    // a mode no detector examined is "not measured": its reference positives are shown, never counted as misses
    if (m.n === 0) return [`${m.code} ${m.name}`, reference[m.code] ?? 0, "not measured", "", "", "", "", "", "", "", f2(c.kappa), ...(jm ? [f2(jm.f1), f2(jm.kappa)] : [])];
    return [`${m.code} ${m.name}`, m.tp + m.fn, m.tp + m.fp, m.tp, m.fp, m.fn, f2(m.precision), f2(m.recall), f2(m.f1), f2(m.kappa), f2(c.kappa), ...(jm ? [f2(jm.f1), f2(jm.kappa)] : [])];
  });
  const mi = report.micro;
  rows.push(["**micro (measured modes)**", mi.tp + mi.fn, mi.tp + mi.fp, mi.tp, mi.fp, mi.fn, f2(mi.precision), f2(mi.recall), `**${f2(mi.f1)}**`, f2(mi.kappa), f2(ceiling.micro.kappa), ...(judge ? [f2(judge.micro.f1), f2(judge.micro.kappa)] : [])]);
  rows.push(["macro (modes with data)", "", "", "", "", "", f2(report.macro.precision), f2(report.macro.recall), f2(report.macro.f1), f2(report.macro.kappa), f2(ceiling.macro.kappa), ...(judge ? [f2(judge.macro.f1), f2(judge.macro.kappa)] : [])]);
  return mdTable(["mode", "support", "claimed", "TP", "FP", "FN", "precision", "recall", "F1", "κ", "κ between passes (ceiling)", ...(judge ? ["judge F1", "judge κ"] : [])], rows);
}

/** Micro scores with every adjudicated positive of an unmeasured mode counted as a miss. */
export function strictMicro(report: AgreementReport, positives: Record<string, number>): { precision: number | null; recall: number | null; f1: number | null } {
  const tp = report.micro.tp;
  const fp = report.micro.fp;
  const fn = Object.values(positives).reduce((a, b) => a + b, 0) - tp;
  return { precision: tp + fp ? tp / (tp + fp) : null, recall: tp + fn ? tp / (tp + fn) : null, f1: 2 * tp + fp + fn ? (2 * tp) / (2 * tp + fp + fn) : null };
}

/** Section 1b: the held-out set, scored exactly like the dev set (rules only). */
function holdoutSection(h: LabelledSetScore, mdTable: (h: string[], rows: (string | number)[][]) => string): string {
  const strict = strictMicro(h.rules, h.positives);
  return `
## 1b. Held-out set: runs no rule was developed on

${h.runs} runs from ${Object.keys(h.sources).length} corpus sources (${Object.entries(h.sources).map(([s, n]) => `${s} ${n}`).join(", ")}), ${h.failed} failed, drawn and
labelled exactly like the dev set (eval/holdout-set.jsonl, eval/README.md "The held-out set") and never used to write
or tune a rule: the figure to expect on runs the rules have not seen.

${modeTable(h.rules, h.passes, null, h.positives, mdTable)}

- Strict micro (unmeasured modes' positives counted as misses): precision ${f2(strict.precision)}, recall ${f2(strict.recall)}, F1 ${f2(strict.f1)}.
- Failed held-out runs with no mode: ${h.failedNone}/${h.failed} (${pct(h.failed ? h.failedNone / h.failed : null)}).
- Decisive step vs the adjudicated one: ${attributionLine(h.rules)}.
- Between the two annotation passes: micro-F1 ${f2(h.passes.micro.f1)}, κ ${f2(h.passes.micro.kappa)}.
`;
}

/** The report as Markdown (bench/results/accuracy.md). */
export function accuracyMarkdown(r: AccuracyReport, machine: string, mdTable: (h: string[], rows: (string | number)[][]) => string): string {
  const dev = r.dev;
  const strict = strictMicro(dev.rules, dev.positives);
  const sourceRows = Object.entries(r.sources)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([src, t]) => [src, t.traces, t.failed, t.failed ? f2(t.failedModes / t.failed) : "–", t.failed ? `${pct(t.failedNone / t.failed)}${t.failed >= 50 ? (t.failedNone / t.failed <= 0.25 ? " ✓" : " ✗") : ""}` : "–", Object.entries(t.findings).sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true })).map(([m, n]) => `${m}:${n}`).join(" ")]);
  return `# Diagnosis accuracy

Written by \`npm run bench:accuracy\` (bench/accuracy.ts → eval/accuracy.ts). Machine: ${machine}. Annotator: ${r.annotator}.
Corpus read and diagnosed in ${r.seconds.toFixed(1)} s (${r.corpusTraces} traces, ${r.readerErrors} reader errors).

## 1. Dev set: agreement with adjudicated labels

${dev.runs} runs from ${Object.keys(dev.sources).length} corpus sources (${Object.entries(dev.sources).map(([s, n]) => `${s} ${n}`).join(", ")}), ${dev.failed} failed, labelled per
\`labelling-guideline.md\` in two independent passes and adjudicated (eval/dev-set.jsonl, eval/README.md). "support" =
adjudicated positives; "claimed" = runs where the rules claim the mode. The ceiling column is Cohen's κ between the two
annotation passes on the same runs. A mode no detector examines is "not measured" (null): left out of the micro scores,
never counted as a miss; the strict line below counts its positives as misses.${dev.judgeName ? ` Judge: \`${dev.judgeName}\` on the same runs.` : ""}

${modeTable(dev.rules, dev.passes, dev.judge, dev.positives, mdTable)}

- Strict micro (unmeasured modes' positives counted as misses): precision ${f2(strict.precision)}, recall ${f2(strict.recall)}, F1 ${f2(strict.f1)}.
- Failed dev-set runs with no mode: ${dev.failedNone}/${dev.failed} (${pct(dev.failed ? dev.failedNone / dev.failed : null)}).
- Decisive step vs the adjudicated one: ${attributionLine(dev.rules)}.
- Between the two annotation passes: micro-F1 ${f2(dev.passes.micro.f1)}, κ ${f2(dev.passes.micro.kappa)}; decisive ${attributionLine(dev.passes)}.
${dev.judge ? `- Judge: micro-F1 ${f2(dev.judge.micro.f1)}, κ ${f2(dev.judge.micro.kappa)}; decisive ${attributionLine(dev.judge)}.\n` : ""}${r.holdout ? holdoutSection(r.holdout, mdTable) : ""}
## 2. Datasets' own labels

Every labelled trace of the corpus, rules only (no LLM). Attribution = the record's decisive step and agent.

${mdTable(["reference", "traces", "faultline (rules)", "published baselines (agent % / step %)"], r.datasets.map((d) => [d.reference, d.traces, d.result, d.baseline]))}

## 3. Corpus: modes per failed trace, failed runs with no mode

Target: ≤ 25 % of failed runs with no mode for every source with ≥ 50 failed runs (✓ / ✗). The ITBench × MAST
study's expert annotators found 2.6–5.3 modes per failed trace.

${mdTable(["source", "traces", "failed", "modes per failed trace", "failed with no mode", "traces per mode"], sourceRows)}
`;
}
