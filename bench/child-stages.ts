/**
 * Child process of the analyze benchmark: the main job's stages, one trace at a time in one process, each stage timed
 * on its own (reading = waiting for the reader's next event; detectors = rules, outcome and decisive step; replay =
 * the guard replay; store + findings = findings.jsonl and the SQLite batches; reports = summary and reports at the end).
 * Prints the seconds of each stage as JSON.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RULES_ANNOTATOR } from "../src/detectors/index.js";
import { readTraces } from "../src/formats/index.js";
import { ReplayCollector } from "../src/pipeline/index.js";
import { diagnoseTrace, emptyRunCounts, RunWriter } from "../src/pipeline/index.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-bench-stages-"));
const inputs = process.argv.slice(2);
const s = { reading: 0, detectors: 0, replay: 0, store: 0, reports: 0 };
const counts = emptyRunCounts();
const replay = new ReplayCollector("default");
const writer = new RunWriter(inputs, { out: join(dir, "out"), db: join(dir, "store.db"), annotator: RULES_ANNOTATOR, taxonomy: "mast-v3" });
const t0 = performance.now();
const it = readTraces(inputs)[Symbol.asyncIterator]();
for (;;) {
  let t = performance.now();
  const next = await it.next();
  s.reading += performance.now() - t;
  if (next.done) break;
  const ev = next.value;
  if (ev.type !== "trace") continue;
  counts.traces++;
  t = performance.now();
  const d = await diagnoseTrace(ev.trace);
  s.detectors += performance.now() - t;
  t = performance.now();
  await writer.write(ev.trace, d, counts);
  s.store += performance.now() - t;
  t = performance.now();
  replay.add(ev.trace, d.modes === null && ev.trace.steps.length > 0 ? undefined : d.findings);
  s.replay += performance.now() - t;
}
let t = performance.now();
const summary = replay.summary();
s.replay += performance.now() - t;
t = performance.now();
await writer.complete(counts, "complete", { replay: summary });
s.reports += performance.now() - t;
await writer.close();
const total = (performance.now() - t0) / 1000;
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ total, traces: counts.traces, ...Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v / 1000])) }));
