/**
 * Judge benchmark (`npm run bench`, or `npx tsx bench/judge.ts`), writing the `judge` section of bench/RESULTS.md:
 *
 * 1. Input tokens per corpus trace: faultline's structured judge (all calls of the trace: windows, final pass) next to
 *    the official MAST annotator's single prompt for the same trace (its fixed instructions + the trace + the
 *    definitions and few-shot examples from ../shared/corpus/mast), and how much of each trace each one covers. The
 *    official code head-truncates the trace to 1,048,570 − len(examples) characters and has no chunking; faultline
 *    shows every character of every step in some window (a step larger than a window in parts); with
 *    `--max-field-chars` fields over the limit lose their middle (the *fields ≤ 50k* columns).
 * 2. Throughput and busy fraction of the concurrency pool against the local mock server with 1 s latency per request.
 *
 * Nothing here calls a real provider. Token counts are faultline's estimator (render.ts), the same for both sides.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readTraces } from "../src/formats/index.js";
import { judgeTraces, OpenAIChatModel, planCoverage, planJudgement, Pool, renderTrace, estimateTokens, type ChatModel } from "../src/judge/index.js";
import { startMockOpenAI } from "../src/judge/testing/mock-openai-server.js";
import { CORPUS, corpus } from "../src/testing/corpus.js";
import type { Trace } from "../src/trace/index.js";
import { machine, mdTable, ratio, writeGoals, writeSection } from "./results.js";

const started = performance.now();

// ---------------------------------------------------------------------------------------------------------------
// 1. Prompt size and coverage
// ---------------------------------------------------------------------------------------------------------------

/**
 * The official prompt's fixed text (instructions, answer template, worked example, section headings) in
 * mert-cemri/openevolve-mast openevolve/llm_judge.py, measured once: 2,564 characters, 693 estimated tokens. Only its
 * size is used here, not its text.
 */
const OFFICIAL_FIXED = { chars: 2564, tokens: 693 };
const OFFICIAL_MAX_CHARS = 1_048_570;
/** The context of the models the official annotator defaults to (o1, o4-mini). */
const OFFICIAL_CONTEXT = 200_000;
const OUR_CONTEXT = 128_000;

const definitions = readFileSync(corpus("mast", "definitions.txt"), "utf8");
const examples = readFileSync(corpus("mast", "examples.txt"), "utf8");
const officialOverheadTokens = OFFICIAL_FIXED.tokens + estimateTokens(definitions) + estimateTokens(examples);
const officialTraceBudget = OFFICIAL_MAX_CHARS - examples.length;

/** Plans without a provider: the model's settings are all a plan needs. */
const planModel: ChatModel = {
  model: "bench",
  settings: { temperature: 0, responseFormat: "json_schema", maxOutputTokens: 4096 },
  complete: () => Promise.reject(new Error("the bench plans only")),
};

/** A field limit (`--max-field-chars`, the default before fields were split across windows), to show what clipping trades for tokens. */
const WIDE_FIELDS = 50_000;

interface Row {
  folder: string;
  steps: number;
  chars: number;
  ours: number;
  calls: number;
  oursCoverage: number;
  wide: number;
  wideCalls: number;
  wideCoverage: number;
  official: number;
  officialCoverage: number;
  officialOverflow: boolean;
}

/** Share of the trace's step content some call shows (planCoverage: what `judge --dry-run --json` reports per trace). */
const coverage = (plan: ReturnType<typeof planJudgement>): number => planCoverage(plan).share;

const rows: Row[] = [];
for await (const ev of readTraces(CORPUS)) {
  if (ev.type !== "trace" || ev.trace.steps.length === 0) continue;
  const trace = ev.trace;
  const folder = trace.source.file.slice(CORPUS.length + 1).split("/")[0] ?? "?";
  // "The full trace" for the official prompt: every step as faultline renders it, nothing clipped. Raw formats (JSON
  // lines, logs) are larger, so this is the official prompt's lower bound.
  const full = renderTrace(trace, { maxFieldChars: Number.MAX_SAFE_INTEGER });
  const fullText = [full.preamble, ...full.steps.map((s) => s.block)].join("\n\n");
  const kept = Math.min(fullText.length, officialTraceBudget);
  const official = officialOverheadTokens + estimateTokens(fullText.slice(0, kept));
  const plan = planJudgement(trace, [], { model: planModel, contextTokens: OUR_CONTEXT });
  const wide = planJudgement(trace, [], { model: planModel, contextTokens: OUR_CONTEXT, render: { maxFieldChars: WIDE_FIELDS } });
  rows.push({
    folder,
    steps: trace.steps.length,
    chars: fullText.length,
    ours: plan.inputTokensEstimate,
    calls: plan.calls.length,
    oursCoverage: coverage(plan),
    wide: wide.inputTokensEstimate,
    wideCalls: wide.calls.length,
    wideCoverage: coverage(wide),
    official,
    officialCoverage: kept / fullText.length,
    officialOverflow: official > OFFICIAL_CONTEXT,
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : 0;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const pct = (x: number) => `${(x * 100).toFixed(x < 0.999 && x > 0.99 ? 1 : 0)}%`;
const k = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(0)}k` : x >= 1000 ? `${(x / 1000).toFixed(1)}k` : `${Math.round(x)}`);

/** Character-weighted coverage, and the worst trace. */
const covered = (rs: Row[], of: (r: Row) => number) =>
  `${pct(sum(rs.map((r) => r.chars * of(r))) / sum(rs.map((r) => r.chars)))} (min ${pct(Math.min(...rs.map(of)))})`;
const calls = (rs: Row[], of: (r: Row) => number) => `${(sum(rs.map(of)) / rs.length).toFixed(1)} / ${Math.max(...rs.map(of))}`;

function summaryRow(label: string, rs: Row[]): (string | number)[] {
  const official = sum(rs.map((r) => r.official));
  return [
    label,
    rs.length,
    k(median(rs.map((r) => r.chars))),
    k(median(rs.map((r) => r.official))),
    covered(rs, (r) => r.officialCoverage),
    rs.filter((r) => r.officialOverflow).length,
    k(median(rs.map((r) => r.ours))),
    (sum(rs.map((r) => r.ours)) / official).toFixed(2),
    calls(rs, (r) => r.calls),
    covered(rs, (r) => r.oursCoverage),
    k(median(rs.map((r) => r.wide))),
    (sum(rs.map((r) => r.wide)) / official).toFixed(2),
    calls(rs, (r) => r.wideCalls),
    covered(rs, (r) => r.wideCoverage),
  ];
}

const folders = [...new Set(rows.map((r) => r.folder))].sort();
const sizeTable = mdTable(
  [
    "corpus folder",
    "traces",
    "median trace chars",
    "official: median tokens",
    "official: covered",
    `official: prompt > ${OFFICIAL_CONTEXT / 1000}k`,
    "faultline: median tokens",
    "faultline ÷ official (Σ tokens)",
    "faultline: calls (mean / max)",
    "faultline: covered",
    `fields ≤ ${WIDE_FIELDS / 1000}k: median tokens`,
    `fields ≤ ${WIDE_FIELDS / 1000}k ÷ official`,
    `fields ≤ ${WIDE_FIELDS / 1000}k: calls`,
    `fields ≤ ${WIDE_FIELDS / 1000}k: covered`,
  ],
  [...folders.map((f) => summaryRow(f, rows.filter((r) => r.folder === f))), summaryRow("**all**", rows)],
);
const sizeSeconds = (performance.now() - started) / 1000;
{
  const chars = sum(rows.map((r) => r.chars));
  const shown = sum(rows.map((r) => r.chars * r.oursCoverage));
  const worst = Math.min(...rows.map((r) => r.oursCoverage));
  const tokens = sum(rows.map((r) => r.ours)) / sum(rows.map((r) => r.official));
  const perTrace = median(rows.map((r) => r.ours / r.official));
  writeGoals("judge", [
    {
      what: `judge: share of the trace's text the model is shown (${rows.length} traces)`,
      now: `${pct(shown / chars)} of characters, worst trace ${pct(worst)}`,
      ceiling: "every character (100 %)",
      ratio: ratio(shown / chars, 3),
      goal: "100 %, elisions reported in the dry-run JSON",
      holds: shown >= chars && worst >= 1,
    },
    {
      what: "judge input tokens vs the official MAST annotator prompt",
      now: `Σ ${k(sum(rows.map((r) => r.ours)))} tokens; per trace median ${ratio(perTrace)}`,
      ceiling: `official Σ ${k(sum(rows.map((r) => r.official)))} tokens`,
      ratio: ratio(tokens),
      goal: "≤ 0.4× while covering 100 %",
      holds: tokens <= 0.4 && shown >= chars,
    },
  ]);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Throughput and pool busy fraction against the mock server (1 s per request)
// ---------------------------------------------------------------------------------------------------------------

const LATENCY_MS = 1000;
const TRACES = 40;
const sample: Trace[] = [];
for await (const ev of readTraces(join(CORPUS, "tau-bench"))) {
  if (ev.type !== "trace" || ev.trace.steps.length === 0) continue;
  sample.push(ev.trace);
  if (sample.length >= TRACES) break;
}
const server = await startMockOpenAI({ latencyMs: LATENCY_MS });
const poolRows: (string | number)[][] = [];
try {
  for (const concurrency of [1, 4, 8]) {
    const pool = new Pool(concurrency);
    const model = new OpenAIChatModel({ baseURL: server.baseURL, model: "bench", maxAttempts: 1, timeoutMs: 30_000 }, { pool, env: {} });
    const before = server.requests.length;
    const t0 = performance.now();
    let failed = 0;
    for await (const j of judgeTraces(sample, { model, concurrency })) if (j.failed) failed++;
    const seconds = (performance.now() - t0) / 1000;
    const calls = server.requests.length - before;
    const s = pool.stats();
    const ideal = (calls * LATENCY_MS) / 1000 / concurrency;
    poolRows.push([concurrency, sample.length, calls, failed, seconds.toFixed(1), ideal.toFixed(1), (sample.length / seconds).toFixed(2), pct(s.busyFraction), s.maxActive]);
  }
} finally {
  await server.close();
}

const totalSeconds = (performance.now() - started) / 1000;
const text = [
  "## Judge (`npm run bench`)",
  "",
  `${machine()}; ${new Date().toISOString().slice(0, 10)}. \`bench/judge.ts\`, ${totalSeconds.toFixed(0)} s. No real provider is called.`,
  "",
  "### Input tokens per trace: faultline's structured judge next to the official MAST annotator prompt",
  "",
  `Every non-empty trace of \`../shared/corpus\` (${rows.length}), planned in ${sizeSeconds.toFixed(1)} s. **faultline**: all calls the trace needs`,
  `(one call when it fits, else overlapping windows plus a final whole-run pass), context ${OUR_CONTEXT / 1000}k, default settings,`,
  `no rule hints; the *fields ≤ ${WIDE_FIELDS / 1000}k* columns are the same with \`--max-field-chars ${WIDE_FIELDS}\`.`,
  "**official**: the single prompt of the MAST annotator (mert-cemri/openevolve-mast `llm_judge.py`) —",
  `its fixed text (${OFFICIAL_FIXED.chars} chars), the trace head-truncated to 1,048,570 − len(examples) = ${officialTraceBudget.toLocaleString("en-US")} chars,`,
  `\`definitions.txt\` and \`examples.txt\` (${officialOverheadTokens.toLocaleString("en-US")} tokens before any trace). "The trace" is every step as faultline`,
  "renders it with nothing clipped (raw JSON or log text is longer, so the official column is a lower bound). Tokens are",
  "faultline's estimate for both. *Covered*: share of the trace's characters the model is shown, weighted by size, and the",
  "worst trace (by default faultline shows every character, a step larger than a window in parts across windows; with a field limit it loses the middles of longer fields,",
  "each marked in the prompt and counted in the result; the official prompt silently loses the tail past its limit).",
  `*Prompt > ${OFFICIAL_CONTEXT / 1000}k*: traces whose official prompt exceeds the context of o1 / o4-mini, which the official code does not handle.`,
  "",
  sizeTable,
  "",
  `### Concurrency pool against the mock server (${LATENCY_MS / 1000} s per request)`,
  "",
  `${sample.length} tau-bench traces (one call each), judged through the real client and pool against \`src/judge/testing/mock-openai-server.ts\`.`,
  "*Ideal s* = calls × latency ÷ concurrency. *Busy* = time-weighted share of the pool's slots in use.",
  "",
  mdTable(["concurrency", "traces", "calls", "failed", "wall s", "ideal s", "traces/s", "busy", "max in flight"], poolRows),
].join("\n");
writeSection("judge", text);
console.log(text);
