/**
 * Child process of the memory benchmark: streams every trace of the inputs, keeps none, prints peak RSS.
 * Peak RSS is sampled here rather than read from getrusage: Linux carries ru_maxrss across exec, so a child would
 * report its parent's peak.
 */
import { readTraces } from "../src/formats/index.js";

let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const t0 = performance.now();
let traces = 0;
let steps = 0;
for await (const ev of readTraces(process.argv.slice(2))) {
  if (ev.type === "trace") {
    traces++;
    steps += ev.trace.steps.length;
  }
}
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
process.stdout.write(JSON.stringify({ traces, steps, seconds, maxRssMB: peak / 2 ** 20 }));
