/** Child process of the memory benchmark: streams every trace of the inputs, keeps none, prints peak RSS. */
import { readTraces } from "../src/formats/index.js";

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
process.stdout.write(JSON.stringify({ traces, steps, seconds, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
