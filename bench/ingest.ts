/**
 * Ingestion benchmark: faultline's reader against plain JSON.parse of the same bytes, per corpus folder; and peak
 * memory as one input grows (streaming must keep it flat). Writes the `ingest` section of bench/RESULTS.md.
 */
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readTraces, type FileSummary } from "../src/formats/index.js";
import { CORPUS } from "../src/testing/corpus.js";
import { machine, mdTable, plainParse, writeSection } from "./results.js";

const mb = (b: number) => b / 2 ** 20;
/** The memory runs use a fixed V8 heap cap: completing under it shows the reader holds no input in memory. */
const HEAP_CAP_MB = 96;
const fmt = (x: number, d = 1) => x.toFixed(d);

async function timeFolder(folder: string) {
  const files: FileSummary[] = [];
  let traces = 0;
  const t0 = performance.now();
  for await (const ev of readTraces(folder)) {
    if (ev.type === "file") files.push(ev.file);
    else if (ev.type === "trace") traces++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const traceFiles = files.filter((f) => f.role === "trace");
  const bytes = traceFiles.reduce((a, f) => a + statSync(f.path).size, 0);
  // baseline on the JSON trace files only (text and zip formats have no JSON.parse equivalent)
  const jsonFiles = traceFiles.filter((f) => !/\.(eval|log|txt)$/.test(f.path));
  const jsonBytes = jsonFiles.reduce((a, f) => a + statSync(f.path).size, 0);
  const reps = 3;
  const b0 = performance.now();
  for (let r = 0; r < reps; r++) for (const f of jsonFiles) plainParse(f.path, f.format);
  const baseSeconds = (performance.now() - b0) / 1000 / reps;
  return { traces, bytes, seconds, jsonBytes, baseSeconds };
}

async function main() {
  const rows: (string | number)[][] = [];
  let totBytes = 0, totSec = 0, totJson = 0, totBase = 0, totTraces = 0;
  for (const name of readdirSync(CORPUS).sort()) {
    const folder = join(CORPUS, name);
    if (!statSync(folder).isDirectory()) continue;
    await timeFolder(folder); // warm-up (JIT, file cache)
    const r = await timeFolder(folder);
    totBytes += r.bytes; totSec += r.seconds; totJson += r.jsonBytes; totBase += r.baseSeconds; totTraces += r.traces;
    rows.push([name, r.traces, fmt(mb(r.bytes), 2), fmt(mb(r.bytes) / r.seconds), r.jsonBytes ? fmt(mb(r.jsonBytes) / r.baseSeconds) : "n/a", r.jsonBytes ? fmt(r.baseSeconds / r.seconds * (r.bytes / r.jsonBytes), 2) : "n/a"]);
  }
  rows.push(["**all**", totTraces, fmt(mb(totBytes), 2), fmt(mb(totBytes) / totSec), fmt(mb(totJson) / totBase), fmt((totBase / totSec) * (totBytes / totJson), 2)]);

  // memory: one growing input, read in a fresh process each time
  const dir = mkdtempSync(join(tmpdir(), "faultline-bench-"));
  const mem: (string | number)[][] = [];
  const line = (i: number) => JSON.stringify({ id: `conv-${i}`, model: "gpt-4o", messages: [{ role: "user", content: `task ${i} ${"lorem ipsum ".repeat(40)}` }, { role: "assistant", content: null, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "search", arguments: JSON.stringify({ q: `query ${i}` }) } }] }, { role: "tool", tool_call_id: `c${i}`, content: "result ".repeat(200) }, { role: "assistant", content: "done ".repeat(50) }] });
  for (const n of [5_000, 20_000, 80_000, 160_000]) {
    const path = join(dir, `conv-${n}.jsonl`);
    const out = createWriteStream(path);
    for (let i = 0; i < n; i++) if (!out.write(`${line(i)}\n`)) await new Promise<void>((r) => out.once("drain", () => r()));
    await new Promise<void>((r) => out.end(r));
    const size = statSync(path).size;
    const res = JSON.parse(execFileSync(process.execPath, [`--max-old-space-size=${HEAP_CAP_MB}`, "--import", "tsx", join(import.meta.dirname, "child-read.ts"), path], { encoding: "utf8", maxBuffer: 1 << 20 }));
    mem.push([fmt(mb(size), 0), res.traces, fmt(mb(size) / res.seconds), fmt(res.maxRssMB, 0)]);
    rmSync(path);
  }
  rmSync(dir, { recursive: true, force: true });

  const text = [
    `## Ingestion (\`npm run bench\`)`,
    ``,
    `${machine()}; ${new Date().toISOString().slice(0, 10)}. Corpus: \`../shared/corpus\`. faultline MB/s = bytes of trace files ÷ wall time of`,
    `\`readTraces\` over the folder (detection, streaming, mapping to canonical traces, validation). JSON.parse MB/s = the same JSON`,
    `files parsed with plain \`JSON.parse\` (per line for JSONL), the ceiling for any JSON reader. Small folders are dominated by per-file`,
    `costs (detection, sidecar look-ups).`,
    ``,
    mdTable(["corpus folder", "traces", "MB", "faultline MB/s", "JSON.parse MB/s", "faultline speed ÷ JSON.parse"], rows),
    ``,
    `### Peak memory while the input grows`,
    ``,
    `One JSONL file of chat conversations, read in a fresh process that keeps no trace (\`bench/child-read.ts\`), with the V8 heap capped`,
    `at ${HEAP_CAP_MB} MB: every size completes under the cap and peak RSS (most of it Node, tsx and the loaded code) stays flat as the`,
    `input grows, because records are streamed line by line. Without a cap V8 simply collects later and RSS drifts up.`,
    ``,
    mdTable(["input MB", "traces", "MB/s", "peak RSS MB"], mem),
  ].join("\n");
  writeSection("ingest", text);
  console.log(text);
}

await main();
