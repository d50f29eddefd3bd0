/**
 * Analyze benchmark: the real CLI (`node bin/faultline.js analyze`, what a user runs) over the whole corpus next to
 * plain JSON.parse of the same trace files; where its time goes, stage by stage; peak RSS as the input grows to 3× and
 * 10× the corpus; and the reader next to AdaMAST's `load_trace_bundle` on the files AdaMAST reads. Writes the
 * `analyze` section of bench/RESULTS.md and bench/results/goals-analyze.json.
 *
 *   npx tsx bench/analyze.ts [--quick]     # --quick: no 10× run, one analyze pass
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readTraces, type FileSummary } from "../src/formats/index.js";
import { CORPUS } from "../src/testing/corpus.js";
import { measureOk } from "./measure.js";
import { machine, mdTable, median, plainParse, ratio, writeGoals, writeSection, type GoalRow } from "./results.js";

const quick = process.argv.includes("--quick");
const root = resolve(import.meta.dirname, "..");
const bin = join(root, "bin", "faultline.js");
const mb = (b: number) => b / 2 ** 20;
const tmp = mkdtempSync(join(tmpdir(), "faultline-bench-analyze-"));

let corpusTraces = 0;
async function traceFiles(inputs: string[]): Promise<FileSummary[]> {
  const files: FileSummary[] = [];
  for await (const ev of readTraces(inputs)) {
    if (ev.type === "file" && ev.file.role === "trace") files.push(ev.file);
    else if (ev.type === "trace") corpusTraces++;
  }
  return files;
}
const isJson = (f: FileSummary) => !/\.(eval|log|txt)$/.test(f.path);
const size = (fs: { path: string }[]) => fs.reduce((a, f) => a + statSync(f.path).size, 0);

/** Best wall time of `reps` passes of plain JSON.parse over the JSON files. */
function parseSeconds(files: FileSummary[], reps = 3): number {
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    for (const f of files) plainParse(f.path, f.format);
    best = Math.min(best, (performance.now() - t) / 1000);
  }
  return best;
}

let run = 0;
async function analyzeCli(inputs: string[], extra: string[] = []) {
  const id = `r${run++}`;
  const m = await measureOk(process.execPath, [bin, "analyze", ...inputs, "--out", join(tmp, id), "--db", join(tmp, `${id}.db`), "-q", ...extra]);
  rmSync(join(tmp, id), { recursive: true, force: true });
  rmSync(join(tmp, `${id}.db`), { force: true });
  return m;
}

// --- 1. analyze vs JSON.parse, whole corpus -----------------------------------------------------------------------
const files = await traceFiles([CORPUS]);
const bytes = size(files);
const json = files.filter(isJson);
const jsonMBs = mb(size(json)) / parseSeconds(json);
const passes = quick ? 1 : 3;
const runs = [];
for (let i = 0; i < passes; i++) runs.push(await analyzeCli([CORPUS]));
const secs = runs.map((r) => r.seconds);
const best = Math.min(...secs);
const analyzeMBs = mb(bytes) / best;
console.log(`analyze: ${secs.map((s) => s.toFixed(2)).join(", ")} s; JSON.parse ${jsonMBs.toFixed(1)} MB/s`);

// --- 2. stages, one process ---------------------------------------------------------------------------------------
const stages = JSON.parse(execFileSync(process.execPath, ["--import", "tsx", join(import.meta.dirname, "child-stages.ts"), CORPUS], { encoding: "utf8", maxBuffer: 1 << 20 })) as Record<string, number>;
const stageNames: [string, string][] = [["reading", "reading"], ["detectors", "detectors + outcome"], ["store", "store + findings"], ["replay", "guard replay"], ["reports", "reports"]];
const stageSum = stageNames.reduce((a, [k]) => a + stages[k]!, 0);
const stageText = stageNames.map(([k, label]) => `${label} ${Math.round((stages[k]! / stageSum) * 100)} %`).join(", ");
console.log(`stages: ${stageText}`);

// --- 3. peak RSS as the input grows -------------------------------------------------------------------------------
const scales = quick ? [1, 3] : [1, 3, 10];
const rss: { scale: number; mb: number; seconds: number; peak: number }[] = [];
for (const scale of scales) {
  const inputs: string[] = [];
  for (let i = 0; i < scale; i++) {
    if (scale === 1) {
      inputs.push(CORPUS);
      break;
    }
    // real copies: the walk reads each file (by device and inode) once, so links would not grow the input
    const copy = join(tmp, "scale", `copy-${i}`);
    if (!existsSync(copy)) cpSync(CORPUS, copy, { recursive: true });
    inputs.push(copy);
  }
  // 1×: the passes above (best time, highest peak); larger inputs: one pass each
  const m = scale === 1 ? { seconds: best, peakRssMB: Math.max(...runs.map((r) => r.peakRssMB)) } : await analyzeCli(inputs);
  rss.push({ scale, mb: mb(bytes) * scale, seconds: m.seconds, peak: m.peakRssMB });
  console.log(`${scale}×: ${m.seconds.toFixed(1)} s, peak RSS ${m.peakRssMB.toFixed(0)} MB`);
}
rmSync(join(tmp, "scale"), { recursive: true, force: true });

// --- 4. reading vs AdaMAST's load_trace_bundle ----------------------------------------------------------------------
const ADAMAST = process.env.ADAMAST_REPO ?? "/work/.mirror/multi-agent-systems-failure-taxonomy+AdaMAST/repo";
let ada: { files: string[]; bytes: number; traces: number; seconds: number } | undefined;
let adaNote = "";
try {
  const dir = join(tmp, "adamast");
  mkdirSync(dir);
  // AdaMAST's reader is one stdlib-only module; it is taken from a checkout outside this repository, never copied in
  writeFileSync(join(dir, "trace_formats.py"), execFileSync("git", ["--git-dir", join(ADAMAST, existsSync(join(ADAMAST, ".git")) ? ".git" : ""), "show", "HEAD:adamast/core/trace_formats.py"], { encoding: "utf8" }));
  const candidates = files.filter((f) => /\.(json|jsonl)$/i.test(f.path)).map((f) => f.path);
  ada = JSON.parse(execFileSync("python3", [join(import.meta.dirname, "adamast-read.py"), dir, "3"], { input: JSON.stringify(candidates), encoding: "utf8", maxBuffer: 1 << 26 }));
} catch (e) {
  adaNote = `AdaMAST not measured: ${(e as Error).message.split("\n")[0]}`;
}
let readRow: GoalRow;
if (ada?.files.length) {
  let readBest = Infinity;
  let ours = 0;
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    ours = 0;
    for await (const ev of readTraces(ada.files)) if (ev.type === "trace") ours++;
    readBest = Math.min(readBest, (performance.now() - t) / 1000);
  }
  const oursMBs = mb(ada.bytes) / readBest;
  const theirs = mb(ada.bytes) / ada.seconds;
  readRow = {
    what: `reading alone vs AdaMAST load_trace_bundle (the ${ada.files.length} files it reads, ${mb(ada.bytes).toFixed(1)} MB)`,
    now: `${oursMBs.toFixed(1)} MB/s (${ours} traces, full step model)`,
    ceiling: `AdaMAST ${theirs.toFixed(1)} MB/s (${ada.traces} traces; of the corpus's ${corpusTraces})`,
    ratio: ratio(oursMBs / theirs),
    goal: "≥ 1×",
    holds: oursMBs / theirs >= 1,
  };
} else readRow = { what: "reading alone vs AdaMAST load_trace_bundle", now: "n/a", ceiling: adaNote || "AdaMAST read no file", ratio: "n/a", goal: "≥ 1×", holds: null };
rmSync(tmp, { recursive: true, force: true });

const maxPeak = Math.max(...rss.map((r) => r.peak));
const rows: GoalRow[] = [
  {
    what: `analyze on ../shared/corpus (${mb(bytes).toFixed(1)} MB, ${corpusTraces} traces) vs JSON.parse of the same files`,
    now: `${analyzeMBs.toFixed(1)} MB/s (min/median of ${passes}: ${best.toFixed(2)} / ${median(secs).toFixed(2)} s)`,
    ceiling: `JSON.parse ${jsonMBs.toFixed(1)} MB/s`,
    ratio: ratio(analyzeMBs / jsonMBs, 3),
    goal: "≥ 0.33×",
    holds: analyzeMBs / jsonMBs >= 0.33,
  },
  { what: "where analyze time goes (one process, one trace at a time)", now: stageText, ceiling: `${stageSum.toFixed(2)} s in all`, ratio: "—", goal: "every stage measured", holds: true },
  readRow,
  {
    what: `peak RSS, ${scales.map((s) => `${s}×`).join(" → ")} the corpus`,
    now: rss.map((r) => `${r.peak.toFixed(0)}`).join(" → ") + " MB",
    ceiling: "300 MB",
    ratio: ratio(maxPeak / 300),
    goal: "flat, < 300 MB",
    holds: maxPeak < 300 && rss.every((r) => r.peak <= rss[0]!.peak * 1.15),
  },
];
writeGoals("analyze", rows);

const text = [
  `## Analyze (\`npm run bench\`)`,
  ``,
  `${machine()}; ${new Date().toISOString().slice(0, 10)}. \`node bin/faultline.js analyze\` over the corpus in a fresh process: reading, all rule`,
  `detectors, outcome scoring, guard replay, SQLite store and findings.jsonl, reports. Peak RSS = VmHWM of the process.`,
  `JSON.parse = plain \`JSON.parse\` of the same JSON trace files (per line for JSONL), best of 3, in the bench process.`,
  ``,
  mdTable(
    ["input", "MB", "analyze s", "analyze MB/s", "peak RSS MB", "JSON.parse MB/s", "analyze ÷ JSON.parse"],
    rss.map((r) => [`corpus × ${r.scale}`, r.mb.toFixed(1), r.seconds.toFixed(2), (r.mb / r.seconds).toFixed(1), r.peak.toFixed(0), jsonMBs.toFixed(1), ((r.mb / r.seconds) / jsonMBs).toFixed(3)]),
  ),
  ``,
  `Stages (\`bench/child-stages.ts\`, one process, one trace at a time): ${stageNames.map(([k, label]) => `${label} ${stages[k]!.toFixed(2)} s`).join(", ")}.`,
  ``,
  ada ? `AdaMAST \`load_trace_bundle\` (Python ${execFileSync("python3", ["--version"], { encoding: "utf8" }).trim().split(" ")[1]}) reads ${ada.files.length} of the corpus's ${files.length} trace files (${ada.traces} traces, the rest it rejects); ${readRow.now} vs ${readRow.ceiling}.` : adaNote,
].join("\n");
writeSection("analyze", text);
console.log(text);
