/** `npm run bench`: every benchmark, each writing its own section of bench/RESULTS.md. */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dirname;
const only = process.argv.slice(2);
const scripts = ["ingest.ts", "analyze.ts", "judge.ts", "dashboard.ts"].filter((s) => existsSync(join(here, s)) && (!only.length || only.some((o) => s.startsWith(o))));
for (const s of scripts) {
  console.log(`\n== bench/${s}`);
  execFileSync(process.execPath, ["--import", "tsx", join(here, s)], { stdio: "inherit" });
}
