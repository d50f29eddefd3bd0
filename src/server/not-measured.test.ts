import { afterAll, describe, expect, it } from "vitest";
import { Store } from "../store/index.js";
import { listTraces, runFacets } from "../store/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { buildTrace, type Basis, type Diagnosis, type Finding, type Trace } from "../trace/index.js";
import type { Overview, TracesResponse } from "./api-types.js";
import { createApp } from "./app.js";

/*
 * The store and the dashboard API keep "not measured" (null in the failure vector) apart from 0: in mode_count, the
 * trace list, the facets and the overview's statistics; and the overview's deltas rest on outcome-independent findings.
 */

import { partlyMeasured, UNMEASURED } from "../testing/report-fixtures.js";

const finding = (mode: string, basis?: Basis[]): Finding => ({ mode, confidence: 0.7, steps: [0], evidence: "hello", detector: `rules/${mode}`, ...(basis ? { basis } : {}) });

function item(id: string, success: boolean, findings: Finding[]): { trace: Trace; diagnosis: Diagnosis } {
  const trace = buildTrace(
    { id, source: { file: "t.jsonl", format: "faultline", index: 0 }, model: "m", outcome: { success } },
    [{ agent: "a", role: "assistant", kind: "message", text: "hello" }],
  );
  const diagnosis = partlyMeasured({ id, success, findings, source: trace.source, model: "m", annotator: "rules" });
  return { trace, diagnosis };
}

const store = new Store(":memory:");
const run = store.beginRun(["t.jsonl"], "rules", "mast-v3");
store.saveBatch(run, [
  item("f1", false, [finding("1.3"), finding("3.1", ["steps", "outcome"])]),
  item("f2", false, [finding("3.1", ["outcome"])]),
  item("s1", true, []),
  item("s2", true, [finding("1.3")]),
]);
store.finishRun(run, {});
afterAll(() => store.close());

describe("store: unmeasured modes stay null", () => {
  it("mode_count counts found modes; the trace list names the unmeasured ones apart", () => {
    const page = listTraces(store, run, { annotator: "rules", sort: "trace_id" });
    const f1 = page.rows.find((r) => r.trace_id === "f1")!;
    expect(f1.mode_count).toBe(2);
    expect(f1.modes).toEqual(["1.3", "3.1"]);
    expect(f1.unmeasured).toEqual(UNMEASURED);
    expect(page.rows.find((r) => r.trace_id === "s1")).toMatchObject({ mode_count: 0, modes: [], unmeasured: UNMEASURED });
    // the stored vector itself keeps null
    expect(store.diagnoses(run).find((d) => d.trace_id === "f1")!.modes!["2.2"]).toBeNull();
  });

  it("facets say, per mode, on how many annotated traces it was measured", () => {
    const f = runFacets(store, run, "rules");
    const cov = Object.fromEntries(f.coverage.map((c) => [c.code, c]));
    expect(cov["2.2"]).toEqual({ code: "2.2", measured: 0, annotated: 4 });
    expect(cov["1.3"]).toEqual({ code: "1.3", measured: 4, annotated: 4 });
    expect(f.coverage).toHaveLength(MAST_CODES.length);
  });
});

describe("dashboard API", () => {
  const app = createApp(store);
  const get = async <T>(path: string) => (await (await app.request(path)).json()) as T;

  it("the overview leaves unmeasured modes without denominators, and compares on outcome-independent findings", async () => {
    const ov = await get<Overview>(`/api/runs/${run}/overview`);
    const m = (c: string) => ov.all.modes.find((x) => x.code === c)!;
    expect(m("2.2").judged.all).toBe(0);
    expect(m("2.2").prevalence.all).toBeNull();
    expect(m("1.1").judged.all).toBe(4); // measured, never found: a real 0 %
    expect(m("1.1").prevalence.all).toBe(0);
    expect(m("3.1").counts.failed).toBe(2);
    expect(m("3.1").independent.counts.failed).toBe(0);
    expect(m("3.1").delta_pp.value).toBe(0);
    expect(m("3.1").delta_pp_all_findings.value).toBe(100);
    expect(ov.all.rollups.find((r) => r.code === "FC2")!.name).toContain("not measured");
  });

  it("the trace list carries the unmeasured codes and the facets their coverage", async () => {
    const body = await get<TracesResponse>(`/api/runs/${run}/traces?facets=1`);
    expect(body.rows.every((r) => r.unmeasured?.join() === UNMEASURED.join())).toBe(true);
    expect(body.facets!.coverage.filter((c) => c.measured === 0).map((c) => c.code)).toEqual(UNMEASURED);
  });
});
