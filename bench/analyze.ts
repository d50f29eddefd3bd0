/**
 * Analyze benchmark: the main job (read → detect → outcome → store → findings.jsonl) over the whole corpus, next to
 * plain JSON.parse of the same trace files. Writes the `analyze` section of bench/RESULTS.md.
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { readTraces, type FileSummary } from "../src/formats/index.js";
import { CORPUS } from "../src/testing/corpus.js";
import { machine, mdTable, plainParse, writeSection } from "./results.js";

const mb = (b: number) => b / 2 ** 20;
const files: FileSummary[] = [];
for await (const ev of readTraces(CORPUS)) if (ev.type === "file" && ev.file.role === "trace") files.push(ev.file);
const bytes = files.reduce((a, f) => a + statSync(f.path).size, 0);
const json = files.filter((f) => !/\.(eval|log|txt)$/.test(f.path));
const jsonBytes = json.reduce((a, f) => a + statSync(f.path).size, 0);
const b0 = performance.now();
for (let r = 0; r < 3; r++) for (const f of json) plainParse(f.path, f.format);
const baseSeconds = (performance.now() - b0) / 1000 / 3;

const runs = [1, 2, 3].map(() => JSON.parse(execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "child-analyze.ts"), CORPUS], { encoding: "utf8", maxBuffer: 1 << 20 })));
const best = runs.sort((a, b) => a.seconds - b.seconds)[0];
const text = [
  `## Analyze (\`npm run bench\`)`,
  ``,
  `${machine()}; ${new Date().toISOString().slice(0, 10)}. \`analyze\` over the whole corpus in a fresh process (best of 3): reading, all rule`,
  `detectors, outcome scoring (ITBench ground truth, dataset rewards), guard replay, SQLite store and findings.jsonl. Peak RSS sampled in the process.`,
  ``,
  mdTable(
    ["input", "traces", "trace MB", "analyze s", "analyze MB/s", "traces/s", "peak RSS MB", "JSON.parse MB/s (same files)"],
    [["../shared/corpus", best.traces, mb(bytes).toFixed(1), best.seconds.toFixed(2), (mb(bytes) / best.seconds).toFixed(1), (best.traces / best.seconds).toFixed(0), best.maxRssMB.toFixed(0), (mb(jsonBytes) / baseSeconds).toFixed(1)]],
  ),
].join("\n");
writeSection("analyze", text);
console.log(text);
