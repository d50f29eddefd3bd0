/** Child process of the analyze benchmark: the full main job on the inputs; prints timings and sampled peak RSS. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { analyze } from "../src/pipeline/index.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-bench-analyze-"));
let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const t0 = performance.now();
const r = await analyze(process.argv.slice(2), { out: join(dir, "out"), db: join(dir, "store.db") });
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(JSON.stringify({ traces: r.counts.traces, files: r.counts.files, seconds, maxRssMB: Math.max(peak, process.memoryUsage().rss) / 2 ** 20 }));
