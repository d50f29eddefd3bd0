import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import os from "node:os";

export const RESULTS = fileURLToPath(new URL("./RESULTS.md", import.meta.url));

/**
 * Replaces one section of bench/RESULTS.md (between `<!-- bench:<id> -->` markers), leaving the others intact, so
 * each benchmark script owns its own table.
 */
export function writeSection(id: string, markdown: string): void {
  const start = `<!-- bench:${id} -->`;
  const end = `<!-- /bench:${id} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  let doc = existsSync(RESULTS) ? readFileSync(RESULTS, "utf8") : "# Benchmark results\n\nWritten by `npm run bench` (and the scripts it names). Machine: see each section.\n";
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  doc = i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(RESULTS, doc);
}

export function mdTable(headers: string[], rows: (string | number)[][]): string {
  return [`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

export function machine(): string {
  return `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Plain JSON.parse of a file's bytes: per line for JSONL, whole otherwise (the lower bound of any JSON reader). */
export function plainParse(path: string, format: string): boolean {
  const text = readFileSync(path, "utf8");
  const t = text.trimStart();
  if (!(t.startsWith("{") || t.startsWith("["))) return false;
  const jsonl = format.includes("rollout") || path.endsWith(".jsonl") || (t.startsWith("{") && t.indexOf("\n") > 0 && t.indexOf("\n") < t.length - 2 && (() => { try { JSON.parse(t.slice(0, t.indexOf("\n"))); return true; } catch { return false; } })());
  if (jsonl) {
    for (const line of text.split("\n")) if (line.trim()) try { JSON.parse(line); } catch { /* counted by faultline, not here */ }
  } else {
    try { JSON.parse(text.replace(/\bNaN\b/g, "null")); } catch { return false; }
  }
  return true;
}


/** One row of the goals table: a figure next to its ceiling measured in the same run. */
export interface GoalRow {
  what: string;
  /** The figure as printed, e.g. `4.8 MB/s`. */
  now: string;
  /** What it is measured against in the same run, e.g. `JSON.parse 117 MB/s`. */
  ceiling: string;
  /** now ÷ ceiling (or the absolute figure where the goal is absolute), as printed. */
  ratio: string;
  goal: string;
  /** null: not measured in this run. */
  holds: boolean | null;
}

export const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

/** Writes bench/results/goals-<part>.json, the rows `bench/run.ts` assembles into the goals table. */
export function writeGoals(part: string, rows: GoalRow[]): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(`${RESULTS_DIR}goals-${part}.json`, `${JSON.stringify({ part, at: new Date().toISOString(), machine: machine(), load: os.loadavg()[0]!.toFixed(2), rows }, null, 1)}\n`);
}

export const ratio = (x: number, digits = 2) => `${x.toFixed(digits)}×`;
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
