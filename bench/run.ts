/**
 * `npm run bench`: every benchmark, each writing its own section of bench/RESULTS.md and its rows of the goals table
 * (bench/results/goals-*.json); then the goals table itself, printed and written to bench/results/goals.md.
 *
 *   npm run bench                     # all
 *   npm run bench -- analyze judge    # some (by script name prefix)
 *   npm run bench -- --quick          # analyze without the 10× run; start without the install
 *   npm run bench -- --install        # also time `npm ci` on a fresh clone
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mdTable, RESULTS_DIR, type GoalRow } from "./results.js";

const here = import.meta.dirname;
const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const scripts = ["start.ts", "analyze.ts", "judge.ts", "dashboard.ts", "ingest.ts"].filter((s) => existsSync(join(here, s)) && (!only.length || only.some((o) => s.startsWith(o))));
const started = new Date().toISOString();
for (const s of scripts) {
  console.log(`\n== bench/${s}`);
  const args = [...(s === "analyze.ts" && flags.includes("--quick") ? ["--quick"] : []), ...(s === "start.ts" && flags.includes("--install") ? ["--install"] : [])];
  execFileSync(process.execPath, ["--import", "tsx", join(here, s), ...args], { stdio: "inherit" });
}

// The goals table: every row as written by its script, with when it was measured (rows of this run say "this run").
const order = ["analyze", "start", "judge", "dashboard"];
const parts = readdirSync(RESULTS_DIR)
  .filter((f) => /^goals-.*\.json$/.test(f))
  .map((f) => JSON.parse(readFileSync(join(RESULTS_DIR, f), "utf8")) as { part: string; at: string; load: string; rows: GoalRow[] })
  .sort((a, b) => order.indexOf(a.part) - order.indexOf(b.part));
const mark = (h: boolean | null) => (h === null ? "not measured" : h ? "holds" : "**does not hold**");
const rows = parts.flatMap((p) => p.rows.map((r) => [r.what, r.now, r.ceiling, r.ratio, r.goal, mark(r.holds), p.at >= started ? "this run" : `${p.at.slice(0, 16)}Z`]));
const table = mdTable(["what", "now", "ceiling (same run)", "ratio", "goal", "", "measured"], rows);
const doc = `# Goals (\`npm run bench\`)\n\nWritten ${new Date().toISOString().slice(0, 16)}Z; load average at each part's end: ${parts.map((p) => `${p.part} ${p.load}`).join(", ")}.\n\n${table}\n`;
writeFileSync(join(RESULTS_DIR, "goals.md"), doc);
console.log(`\n${doc}`);
