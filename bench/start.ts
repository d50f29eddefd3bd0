/**
 * Start-up and install benchmark: `node bin/faultline.js --version` (what `faultline` runs) next to a bare `node -e 0`
 * in the same run; with `--install`, `npm ci` on a fresh clone of this checkout's HEAD (minutes: the native SQLite
 * binding may compile). Writes the `start` section of bench/RESULTS.md and bench/results/goals-start.json.
 *
 *   npx tsx bench/start.ts [--install]
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measureOk } from "./measure.js";
import { machine, mdTable, median, ratio, writeGoals, writeSection, type GoalRow } from "./results.js";

const root = resolve(import.meta.dirname, "..");
const REPS = 7;

async function times(cmd: string, args: string[]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < REPS; i++) out.push((await measureOk(cmd, args, { cwd: root })).seconds);
  return out;
}

const bare = await times(process.execPath, ["-e", "0"]);
const cli = await times(process.execPath, [join(root, "bin", "faultline.js"), "--version"]);
const fromDist = existsSync(join(root, "dist", "cli", "main.js")) && existsSync(join(root, "dist", ".build-stamp"));
const rows: GoalRow[] = [
  {
    what: "process start (`node bin/faultline.js --version`)",
    now: `${Math.min(...cli).toFixed(2)} / ${median(cli).toFixed(2)} s (min/median of ${REPS}; ${fromDist ? "dist/ present" : "no build: tsx"})`,
    ceiling: `bare \`node -e 0\` ${Math.min(...bare).toFixed(2)} / ${median(bare).toFixed(2)} s`,
    ratio: `${ratio(median(cli) / median(bare))} of bare node; ${ratio(median(cli) / 0.3)} of 0.3 s`,
    goal: "< 0.3 s",
    holds: median(cli) < 0.3,
  },
];

const table: (string | number)[][] = [
  ["`node -e 0`", Math.min(...bare).toFixed(3), median(bare).toFixed(3)],
  ["`node bin/faultline.js --version`", Math.min(...cli).toFixed(3), median(cli).toFixed(3)],
];

if (process.argv.includes("--install")) {
  const dir = mkdtempSync(join(tmpdir(), "faultline-bench-install-"));
  try {
    execFileSync("git", ["clone", "-q", root, join(dir, "repo")]);
    const m = await measureOk("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: join(dir, "repo") });
    const sqlite = JSON.parse(readFileSync(join(dir, "repo", "package.json"), "utf8")).dependencies;
    rows.push({
      what: "`npm ci` on a fresh clone (npm cache warm)",
      now: `${m.seconds.toFixed(1)} s`,
      ceiling: "goal 30 s",
      ratio: `${ratio(m.seconds / 30)} of the goal`,
      goal: "< 30 s",
      holds: m.seconds < 30,
    });
    table.push([`\`npm ci\` (SQLite: ${Object.keys(sqlite).filter((k) => /sqlite|libsql/.test(k)).join(", ")})`, m.seconds.toFixed(1), "—"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else rows.push({ what: "`npm ci` on a fresh clone", now: "not run (`npx tsx bench/start.ts --install`)", ceiling: "goal 30 s", ratio: "n/a", goal: "< 30 s", holds: null });
writeGoals("start", rows);
const text = [
  "## Start-up (`npm run bench`)",
  "",
  `${machine()}; ${new Date().toISOString().slice(0, 10)}. Wall time of a fresh process, ${REPS} runs each (min and median).`,
  "",
  mdTable(["command", "min s", "median s"], table),
].join("\n");
writeSection("start", text);
console.log(text);
