import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

/*
 * The stage boundaries of docs/architecture.md, checked on the imports of every non-test source file: a stage is
 * reached through its index.ts; reports read results through canonical types; analysis is pure; only the store
 * knows SQLite; the guards are runtime code only.
 */

const SRC = import.meta.dirname;
/** The shared vocabulary every stage speaks: any of their modules may be imported. */
const VOCABULARY = new Set(["trace", "taxonomy"]);

interface Import {
  file: string; // relative to src/, with "/"
  from: string; // top-level folder of the importing file ("" for src/*.ts)
  spec: string;
  target?: string; // resolved, relative to src/, for relative imports
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [p] : [];
  });
}

function importsOf(file: string, text: string): Import[] {
  const rel = relative(SRC, file).split(sep).join("/");
  const from = rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : "";
  const out: Import[] = [];
  // static imports and re-exports (`import … from`, `export … from`), side-effect imports and dynamic import("…")
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g)) {
    const spec = m[1]!;
    const target = spec.startsWith(".") ? relative(SRC, resolve(dirname(file), spec)).split(sep).join("/") : undefined;
    out.push({ file: rel, from, spec, ...(target !== undefined ? { target } : {}) });
  }
  return out;
}

const all = sourceFiles(SRC).flatMap((f) => importsOf(f, readFileSync(f, "utf8")));
const folderOf = (target: string) => (target.includes("/") ? target.slice(0, target.indexOf("/")) : "");
const show = (i: Import) => `${i.file}: ${i.spec}`;

/** Imports into another stage's internals: anything but its index.ts (the shared vocabulary excepted). */
function boundaryViolations(imports: readonly Import[]): string[] {
  return imports
    .filter((i) => i.target !== undefined && !i.target.startsWith(".."))
    .filter((i) => {
      const to = folderOf(i.target!);
      return to !== "" && to !== i.from && !VOCABULARY.has(to) && i.target !== `${to}/index.js`;
    })
    .map(show);
}

describe("stage boundaries", () => {
  it("finds the imports it checks (the scan itself works)", () => {
    expect(all.length).toBeGreaterThan(500);
    expect(all.some((i) => i.file === "cli/analyze.ts" && i.target === "pipeline/index.js")).toBe(true);
    expect(boundaryViolations(importsOf(join(SRC, "report/x.ts"), 'import { a } from "../guards/replay.js";\nexport { b } from "../store/index.js";'))).toEqual([
      'report/x.ts: ../guards/replay.js',
    ]);
  });

  it("every stage is reached through its index.ts, never its internals", () => {
    expect(boundaryViolations(all)).toEqual([]);
  });

  it("reports read replay results through trace/ types, not the guards or the pipeline", () => {
    expect(all.filter((i) => i.from === "report" && /^(guards|pipeline)\//.test(i.target ?? "")).map(show)).toEqual([]);
  });

  it("the guards are runtime code: they import only their own folder and the shared vocabulary", () => {
    expect(all.filter((i) => i.from === "guards" && i.target !== undefined && !/^(guards|trace|taxonomy)\//.test(i.target)).map(show)).toEqual([]);
  });

  it("analysis is pure: no file system (label files are read through formats/)", () => {
    expect(all.filter((i) => i.from === "analysis" && /^(node:)?fs(\/promises)?$/.test(i.spec)).map(show)).toEqual([]);
  });

  it("only the store knows SQLite", () => {
    expect(all.filter((i) => i.spec === "better-sqlite3" && i.from !== "store").map(show)).toEqual([]);
  });
});
