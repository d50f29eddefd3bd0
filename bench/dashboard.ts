/**
 * Dashboard benchmark: a generated 10 000-trace store, then the JSON API (in-process and over HTTP) and the pages in
 * headless Chromium. Writes the `dashboard` section of bench/RESULTS.md.
 *
 * The store is built from the real tau-bench and Who&When traces of the corpus: each is diagnosed once by the rule
 * detectors, then copied under new ids into five synthetic models, each model drawing traces with findings at its own
 * rate, so the per-model statistics differ. Two such runs are stored (for the compare view).
 *   npx tsx bench/dashboard.ts [--traces N] [--keep]
 */
import { mkdtempSync, mkdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { RULES_ANNOTATOR } from "../src/detectors/index.js";
import { readAll } from "../src/formats/index.js";
import { diagnoseTrace } from "../src/pipeline/index.js";
import { createApp, startServer } from "../src/server/index.js";
import { storeOverviews } from "../src/server/overview.js";
import { SqliteStore, Store } from "../src/store/index.js";
import { corpus } from "../src/testing/corpus.js";
import type { Diagnosis, Trace } from "../src/trace/index.js";
import { machine, mdTable, ratio, writeGoals, writeSection } from "./results.js";

const args = process.argv.slice(2);
const N = Number(args[args.indexOf("--traces") + 1] ?? "") || 10_000;
const keep = args.includes("--keep");
const MODELS = ["model-a", "model-b", "model-c", "model-d", "model-e"];
const CHROMIUM = process.env.FAULTLINE_CHROMIUM ?? "/usr/bin/chromium";
// page.evaluate callbacks run in the browser; this file is type-checked for Node, so the page's global is declared here.
// biome-ignore lint/suspicious/noExplicitAny: the browser's document, declared for a Node-typed file
declare const document: any;

/** A small deterministic PRNG (mulberry32), so two runs of the benchmark build the same store. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const root = mkdtempSync(join(tmpdir(), "faultline-bench-dashboard-"));
const db = join(root, "dashboard.db");
const t0 = performance.now();
const { traces: originals } = await readAll([corpus("tau-bench"), corpus("who_and_when")]);
const diagnosed: { trace: Trace; diagnosis: Diagnosis }[] = [];
for (const trace of originals) diagnosed.push({ trace, diagnosis: await diagnoseTrace(trace) });
const withFindings = diagnosed.filter((d) => d.diagnosis.findings.length > 0);
const without = diagnosed.filter((d) => d.diagnosis.findings.length === 0);

const store = new Store(db);
async function generateRun(name: string, seed: number): Promise<string> {
  const all: Diagnosis[] = [];
  const rand = prng(seed);
  const runId = store.beginRun([`bench:${name}:${N}`], RULES_ANNOTATOR, "mast-v3");
  let batch: { trace: Trace; diagnosis: Diagnosis }[] = [];
  for (let i = 0; i < N; i++) {
    const m = i % MODELS.length;
    // model-a draws traces with findings 15% of the time … model-e 75%; run "b" shifts every model by 10 points.
    const rate = 0.15 + 0.15 * m + (name === "b" ? -0.1 : 0);
    const pool = rand() < rate && withFindings.length ? withFindings : without;
    const src = pool[Math.floor(rand() * pool.length)]!;
    const id = `bench:${String(i).padStart(5, "0")}:${src.trace.id}`;
    const model = MODELS[m]!;
    batch.push({
      trace: { ...src.trace, id, model, source: { ...src.trace.source, index: i } },
      diagnosis: { ...src.diagnosis, trace_id: id, model, source: { ...src.diagnosis.source, index: i } },
    });
    all.push(batch.at(-1)!.diagnosis);
    if (batch.length === 500) {
      store.saveBatch(runId, batch);
      batch = [];
    }
  }
  store.saveBatch(runId, batch);
  store.finishRun(runId, { traces: N, annotated: N });
  // as `analyze` does when it writes a run: the dashboard's statistics are computed now, not on first view
  await storeOverviews(new SqliteStore(store), runId, all);
  return runId;
}
const runA = await generateRun("a", 1);
const runB = await generateRun("b", 2);
const buildSeconds = (performance.now() - t0) / 1000;
const dbMB = statSync(db).size / 2 ** 20;

// ------------------------------------------------------------------------------------------------------------------
// API

const app = createApp(store);
const largest = store.db.prepare("SELECT trace_id FROM traces WHERE run_id = ? ORDER BY steps DESC LIMIT 1").get(runA) as { trace_id: string };
const endpoints: [string, string][] = [
  ["runs list", "/api/runs"],
  ["overview (statistics of 10 000 traces)", `/api/runs/${runA}/overview`],
  ["traces, page 1, with facets", `/api/runs/${runA}/traces?limit=50&facets=1`],
  ["traces, page 1", `/api/runs/${runA}/traces?limit=50`],
  ["traces, mode 1.3", `/api/runs/${runA}/traces?limit=50&mode=1.3`],
  ["traces, model + failed, by steps desc, page 11", `/api/runs/${runA}/traces?limit=50&model=model-c&outcome=failure&sort=steps&dir=desc&offset=500`],
  ["traces, text search (FTS5 word index)", `/api/runs/${runA}/traces?limit=50&q=reservation`],
  ["trace detail (largest trace)", `/api/trace?id=${encodeURIComponent(largest.trace_id)}&run=${runA}`],
  ["compare two runs", `/api/compare?a=${runA}&b=${runB}`],
];

async function timeRequest(fetcher: (path: string) => Promise<Response>, path: string): Promise<{ ms: number; bytes: number }> {
  let s = performance.now();
  // A keep-alive socket the server closed while idle surfaces as ECONNRESET on reuse: retry once on a fresh one.
  const res = await fetcher(path).catch(() => {
    s = performance.now();
    return fetcher(path);
  });
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}: ${Buffer.from(body).toString("utf8").slice(0, 200)}`);
  return { ms: performance.now() - s, bytes: body.byteLength };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const REPEAT = 7;
const apiRows: (string | number)[][] = [];
const goalTimes = new Map<string, { cold: number; warm: number }>();
const server = await startServer(store, { port: 0 });
for (const [label, path] of endpoints) {
  // The first call is cold (the overview and compare are cached per run after it).
  const cold = await timeRequest((p) => Promise.resolve(app.request(p)), path);
  const warm: number[] = [];
  for (let r = 0; r < REPEAT; r++) warm.push((await timeRequest((p) => Promise.resolve(app.request(p)), path)).ms);
  const http: number[] = [];
  for (let r = 0; r < REPEAT; r++) http.push((await timeRequest((p) => fetch(`${server.url}${p}`), path)).ms);
  goalTimes.set(label, { cold: cold.ms, warm: median(warm) });
  apiRows.push([label, cold.ms.toFixed(1), median(warm).toFixed(1), median(http).toFixed(1), (cold.bytes / 1024).toFixed(0)]);
  console.log(label, cold.ms.toFixed(1), median(warm).toFixed(1), median(http).toFixed(1));
}

{
  const ov = goalTimes.get("overview (statistics of 10 000 traces)")!;
  const search = goalTimes.get("traces, text search (FTS5 word index)")!;
  const page = goalTimes.get("traces, page 1")!;
  writeGoals("dashboard", [
    {
      what: `dashboard, ${N.toLocaleString("en-US")}-trace run: overview, cold (first request)`,
      now: `${ov.cold.toFixed(0)} ms`,
      ceiling: `same request warm ${ov.warm.toFixed(0)} ms; goal 500 ms`,
      ratio: `${ratio(ov.cold / 500)} of the goal`,
      goal: "< 0.5 s",
      holds: ov.cold < 500,
    },
    {
      what: `dashboard, ${N.toLocaleString("en-US")}-trace run: text search (warm median)`,
      now: `${search.warm.toFixed(0)} ms`,
      ceiling: `the same page without search ${page.warm.toFixed(0)} ms; goal 300 ms`,
      ratio: `${ratio(search.warm / 300)} of the goal`,
      goal: "< 0.3 s",
      holds: search.warm < 300,
    },
  ]);
}

// ------------------------------------------------------------------------------------------------------------------
// Pages

const pageRows: (string | number)[][] = [];
const profile = mkdtempSync(join(tmpdir(), "faultline-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1400, height: 900 },
});
const page = context.pages()[0] ?? (await context.newPage());
const firstMode13 = (store.db.prepare("SELECT trace_id FROM findings WHERE run_id = ? AND mode = '1.3' LIMIT 1").get(runA) as { trace_id: string }).trace_id;
const pages: [string, string, string][] = [
  ["runs", "runs", "/"],
  ["run overview", "overview", `/runs/${runA}`],
  ["traces list", "traces", `/runs/${runA}/traces`],
  ["traces filtered to mode 1.3", "traces", `/runs/${runA}/traces?mode=1.3`],
  ["traces, text search", "traces", `/runs/${runA}/traces?q=reservation`],
  ["trace viewer, evidence highlighted", "trace", `/traces/${encodeURIComponent(firstMode13)}?run=${runA}&mode=1.3`],
  ["trace viewer, largest trace", "trace", `/traces/${encodeURIComponent(largest.trace_id)}?run=${runA}`],
  ["compare two runs", "compare", `/compare?a=${runA}&b=${runB}`],
];
for (const [label, view, path] of pages) {
  const times: number[] = [];
  for (let r = 0; r < 5; r++) {
    const s = performance.now();
    await page.goto(`${server.url}${path}`);
    await page.waitForFunction((v) => document.body.dataset.view === v && document.getElementById("app")?.getAttribute("aria-busy") === "false", view);
    times.push(performance.now() - s);
  }
  const nodes: number = await page.evaluate(() => document.getElementsByTagName("*").length);
  pageRows.push([label, median(times).toFixed(0), Math.max(...times).toFixed(0), nodes]);
  console.log(label, median(times).toFixed(0));
}
await context.close();
await server.close();
const steps = store.db.prepare("SELECT steps FROM traces WHERE run_id = ? AND trace_id = ?").get(runA, largest.trace_id) as { steps: number };
store.close();
rmSync(profile, { recursive: true, force: true });
if (!keep) rmSync(root, { recursive: true, force: true });
else console.log(`store kept at ${db}`);

const text = [
  "## Dashboard (`bench/dashboard.ts`)",
  "",
  `${machine()}, load average ${loadavg()[0]!.toFixed(1)} at the end (the machine is shared); ${new Date().toISOString().slice(0, 10)}. A generated store: ${N.toLocaleString("en")} traces per run, two runs (${dbMB.toFixed(0)} MB SQLite, built in ${buildSeconds.toFixed(1)} s)`,
  `from the ${originals.length} tau-bench and Who&When corpus traces, copied under new ids into ${MODELS.length} models. The largest trace has ${steps.steps} steps.`,
  "",
  `API: cold = first call in-process (\`app.request\`; the overview is read from the aggregates stored when the run was written, compare is computed then and cached per run); warm = median of ${REPEAT}`,
  "in-process calls; HTTP = median over a real socket to the server on 127.0.0.1.",
  "",
  mdTable(["request", "cold ms", "warm ms", "HTTP ms", "response KiB"], apiRows),
  "",
  "Pages: headless Chromium, from navigation start until the view is drawn (median and max of 5 loads; each load fetches and",
  "bundles nothing new: the UI is one script). DOM nodes after drawing.",
  "",
  mdTable(["page", "median ms", "max ms", "DOM nodes"], pageRows),
].join("\n");
mkdirSync(join(import.meta.dirname), { recursive: true });
writeSection("dashboard", text);
console.log(text);
