import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "./analyze.js";
import { Store } from "../store/index.js";
import { DiagnosisSchema, quoteInSteps } from "../trace/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { readAll } from "../formats/index.js";
import { replaySummary } from "./replay.js";
import type { Trace } from "../trace/index.js";
import { diagnoseTrace } from "./diagnose.js";

/** Each trace with the findings of its rules diagnosis (outcome and contract included), as `faultline replay` runs it. */
const withFindings = async (traces: Trace[]) => Promise.all(traces.map(async (trace) => ({ trace, findings: (await diagnoseTrace(trace)).findings })));

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
      // 1 when a finding claims the mode, 0 when a detector examined it and found nothing, null when none examined it
      for (const c of MAST_CODES) expect(d.modes![c]).toBe(d.findings.some((f) => f.mode === c) ? 1 : d.measured_by?.[c] ? 0 : null);
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

  it("re-analysing the same input is a new run beside the first, with the same diagnoses", async () => {
    const first = new Store(db);
    const [earlier] = first.runs();
    first.close();
    const again = await analyze([EXAMPLES], { out: join(dir, "out2"), db });
    const store = new Store(db);
    try {
      expect(again.runId).not.toBe(earlier!.id);
      expect(store.runs().map((r) => r.id).sort()).toEqual([earlier!.id, again.runId].sort());
      expect(store.diagnoses(again.runId)).toHaveLength(31);
      const n = store.db.prepare("SELECT count(*) AS n FROM findings WHERE run_id = ?").get(again.runId) as { n: number };
      expect(n.n).toBe(again.diagnoses.reduce((a, d) => a + d.findings.length, 0));
      // the same inputs give the same diagnoses in both runs
      const vectors = (id: string) => Object.fromEntries(store.diagnoses(id).map((d) => [d.trace_id, d.modes]));
      expect(vectors(again.runId)).toEqual(vectors(earlier!.id));
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

  it("replays every trace through the guards with its rule findings: the same summary as `faultline replay`", async () => {
    const r = await analyze([EXAMPLES], { out: join(dir, "out4"), db });
    expect(r.replay.guards).toBe("default");
    expect(r.replay.totals.traces).toBe(r.counts.traces);
    // the standalone replay (`faultline replay`) diagnoses each trace itself; analyze hands over the findings it has
    const alone = replaySummary(await withFindings((await readAll([EXAMPLES])).traces));
    expect(r.replay).toEqual(alone);
    expect(r.replay.totals.intervened).toBeGreaterThan(0);
    // each replayed trace cites the findings of its diagnosis, nothing else
    const byId = new Map(r.diagnoses.map((d) => [`${d.source.file}#${d.source.index}`, d]));
    for (const t of r.replay.traces) {
      const d = byId.get(`${t.source.file}#${t.source.index}`)!;
      expect(t.findings).toEqual(d.findings.map((f) => ({ mode: f.mode, detector: f.detector, steps: f.steps })));
    }
  });

  it("passes --guards through, and refuses an unknown configuration before writing anything", async () => {
    const sre = await analyze([EXAMPLES], { out: join(dir, "out5"), db, guards: "itbench-sre" });
    expect(sre.replay.guards).toBe("itbench-sre");
    const { traces } = await readAll([EXAMPLES]);
    expect(sre.replay).toEqual(replaySummary(await withFindings(traces), "itbench-sre"));
    // the preset's deliverable check refuses completions that the default lets through
    const requires = (g: typeof sre.replay) => g.guards_summary.find((x) => x.guard === "termination-controller")!.decisions.require;
    expect(requires(sre.replay)).toBeGreaterThan(requires(replaySummary(traces)));
    const out = join(dir, "never");
    await expect(analyze([EXAMPLES], { out, db, guards: join(dir, "no-such-guards.json") })).rejects.toThrow(/no-such-guards\.json: cannot read guard config/);
    expect(existsSync(out)).toBe(false);
  });
});
