import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "./analyze.js";
import { Store } from "../store/index.js";
import { DiagnosisSchema, quoteInSteps } from "../trace/index.js";
import { MAST_CODES } from "../taxonomy/index.js";

const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

describe("analyze (ingest → detect → outcome → store)", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-analyze-"));
  const db = join(dir, "store.db");

  it("diagnoses the bundled examples into findings.jsonl and the store", async () => {
    const r = await analyze([EXAMPLES], { out: join(dir, "out"), db });
    expect(r.counts).toMatchObject({ traces: 31, annotated: 31, failed: 0, errors: 0, refused_files: 0 });
    const lines = readFileSync(r.findingsPath, "utf8").trim().split("\n").map((l) => DiagnosisSchema.parse(JSON.parse(l)));
    expect(lines).toHaveLength(31);
    for (const d of lines) {
      expect(Object.keys(d.modes!)).toEqual([...MAST_CODES]);
      // the vector is derived from the findings, nothing else
      for (const c of MAST_CODES) expect(d.modes![c]).toBe(d.findings.some((f) => f.mode === c) ? 1 : 0);
    }
    const store = new Store(db);
    try {
      const runs = store.runs();
      expect(runs).toHaveLength(1);
      expect(runs[0]!.trace_count).toBe(31);
      // every stored finding's quote is in the stored trace's cited steps
      for (const d of store.diagnoses(r.runId)) {
        const t = store.trace(r.runId, d.trace_id)!;
        for (const f of d.findings) expect(quoteInSteps(f.evidence, f.steps.map((i) => t.steps[i]!))).toBe(true);
      }
      // ITBench example runs are scored against the bundled ground truth
      const itbench = store.diagnoses(r.runId).filter((d) => d.source.format === "codex-rollout");
      expect(itbench).toHaveLength(15);
      expect(itbench.every((d) => d.outcome.metric === "root_cause_recall")).toBe(true);
    } finally {
      store.close();
    }
  });

  it("re-analysing the same input is idempotent", async () => {
    const again = await analyze([EXAMPLES], { out: join(dir, "out2"), db });
    const store = new Store(db);
    try {
      expect(store.runs()).toHaveLength(1);
      expect(store.diagnoses(again.runId)).toHaveLength(31);
      const n = store.db.prepare("SELECT count(*) AS n FROM findings WHERE run_id = ?").get(again.runId) as { n: number };
      expect(n.n).toBe(again.diagnoses.reduce((a, d) => a + d.findings.length, 0));
    } finally {
      store.close();
    }
  });

  it("a trace with no steps is not annotated: modes null and an error, never an all-zero vector", async () => {
    const { writeFileSync } = await import("node:fs");
    const f = join(dir, "empty.jsonl");
    writeFileSync(f, `${JSON.stringify({ schema: "faultline.trace/1", id: "nothing", source: { file: "x", format: "y", index: 0 }, agents: [], steps: [] })}\n`);
    const r = await analyze([f], { out: join(dir, "out3"), db });
    expect(r.counts).toMatchObject({ traces: 1, annotated: 0, failed: 1 });
    expect(r.diagnoses[0]).toMatchObject({ trace_id: "nothing", modes: null, error: "the trace has no steps: nothing to annotate" });
  });
});
