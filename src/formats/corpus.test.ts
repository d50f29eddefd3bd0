import { readFileSync } from "node:fs";
import { relative, sep } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readAll } from "./read.js";
import { CORPUS, corpus } from "../testing/corpus.js";
import type { Diagnostic, FileSummary } from "./types.js";
import type { Trace } from "../trace/index.js";

/**
 * The whole corpus, read the way a user would: every folder that CATALOG.md lists is detected and read with the
 * trace count the catalog states, nothing is refused, and every file is accounted for (trace, supporting, skipped).
 */
function catalogCounts(): Map<string, number> {
  const rows = readFileSync(corpus("CATALOG.md"), "utf8").split("\n").filter((l) => /^\|\s*`[\w-]+\/`/.test(l));
  return new Map(rows.map((l) => {
    const cells = l.split("|").map((c) => c.trim());
    return [cells[1]!.replace(/[`/]/g, ""), Number(cells[3])];
  }));
}

describe("the whole corpus", () => {
  let traces: Trace[];
  let diagnostics: Diagnostic[];
  let files: FileSummary[];
  beforeAll(async () => {
    ({ traces, diagnostics, files } = await readAll(CORPUS));
  });
  const folderOf = (p: string) => relative(CORPUS, p).split(sep)[0]!;

  it("reads every catalogued folder with the catalog's trace count", () => {
    const expected = catalogCounts();
    expect(expected.size).toBe(16);
    const got = new Map<string, number>();
    for (const t of traces) got.set(folderOf(t.source.file), (got.get(folderOf(t.source.file)) ?? 0) + 1);
    expect(Object.fromEntries(got)).toEqual(Object.fromEntries(expected));
    expect(traces).toHaveLength(734);
  });

  it("refuses nothing, and accounts for every file", () => {
    expect(diagnostics.filter((d) => d.level === "error")).toEqual([]);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    // only prose and licence texts are skipped; every JSON/JSONL/YAML file is a trace or a supporting file
    const skipped = files.filter((f) => f.role === "skipped").map((f) => f.path);
    for (const p of skipped) expect(p).toMatch(/\.(md|txt)$/);
  });

  it("gives every trace a unique id, a format, steps with 0-based indices and linked tool calls", () => {
    expect(new Set(traces.map((t) => t.id)).size).toBe(traces.length);
    for (const t of traces) {
      t.steps.forEach((s, i) => expect(s.index).toBe(i));
      for (const s of t.steps) {
        if (s.kind === "tool_result" && s.tool?.callIndex !== undefined) {
          const call = t.steps[s.tool.callIndex]!;
          expect(call.tool?.resultIndex).toBe(s.index);
          expect(call.index).toBeLessThan(s.index);
        }
      }
    }
  });

  it("finds outcomes and models where the catalog says the data has them", () => {
    const withOutcome = new Set(traces.filter((t) => t.outcome?.success !== undefined).map((t) => folderOf(t.source.file)));
    for (const f of ["tau2-bench", "tau-bench", "mini-swe-agent", "openhands", "inspect-ai", "smolagents-otel"]) expect(withOutcome).toContain(f);
    const withModel = new Set(traces.filter((t) => t.model).map((t) => folderOf(t.source.file)));
    for (const f of ["itbench", "tau2-bench", "tau-bench", "mini-swe-agent", "openhands", "inspect-ai", "claude-code", "otlp-openinference", "otel-genai-vercel", "smolagents-otel", "langfuse-export"]) expect(withModel).toContain(f);
    const labelled = new Set(traces.filter((t) => t.goldLabels?.length).map((t) => folderOf(t.source.file)));
    expect([...labelled].sort()).toEqual(["agentrx", "mast", "who_and_when"]);
  });
});
