import { describe, expect, it } from "vitest";
import { MAST_CODES } from "../taxonomy/index.js";
import { vectorFromFindings, type Basis, type Finding } from "../trace/index.js";
import { evaluateAgreement } from "./agreement.js";
import { groupStatistics } from "./groups.js";
import { INTERVENTIONS, rankInterventions } from "./interventions.js";
import { independentVector, labelsFromText } from "./labels.js";
import type { LabelRow, ModeValue } from "./types.js";

/*
 * Honest vectors: a mode no detector or judge examined is null (not measured) and must be missing — never 0 — in
 * every statistic; and the failed-vs-successful comparison must not count findings made because the run failed.
 */

/** The rule detectors' coverage: every code but these is measured. */
const UNMEASURED = ["1.2", "2.2", "2.3", "2.4", "2.5"];
const MEASURED = MAST_CODES.filter((c) => !UNMEASURED.includes(c));

const finding = (mode: string, basis?: Basis[]): Finding => ({
  mode,
  confidence: 0.8,
  steps: [1],
  evidence: "quoted text",
  detector: `rules/${mode}`,
  ...(basis ? { basis } : {}),
});

function record(id: string, success: boolean | null, findings: Finding[], measured: readonly string[] = MEASURED) {
  return JSON.stringify({
    schema: "faultline.diagnosis/1",
    trace_id: id,
    source: { file: "runs/a.jsonl", format: "openai-chat", index: 0 },
    model: "m",
    framework: null,
    outcome: { success },
    taxonomy: "mast-v3",
    modes: vectorFromFindings(MAST_CODES, findings, measured),
    measured_by: Object.fromEntries(measured.map((c) => [c, [`rules/${c}`]])),
    findings,
    signals: {},
    annotator: "rules",
  });
}

const rowsOf = (lines: string[]) => {
  const load = labelsFromText(lines.join("\n"), "findings.jsonl");
  expect(load.diagnostics.filter((d) => d.level === "error")).toEqual([]);
  return load.rows;
};

describe("not measured (null) is missing, never 0", () => {
  // 4 traces from the rules (2.2 not measured) and 2 judged by an annotator that measured every mode, 2.2 found in one.
  const rows = rowsOf([
    record("r1", false, [finding("1.3")]),
    record("r2", false, []),
    record("r3", true, []),
    record("r4", true, [finding("1.3")]),
    record("j1", false, [finding("2.2")], MAST_CODES),
    record("j2", true, [], MAST_CODES),
  ]);
  const g = groupStatistics(rows).groups[0]!;
  const mode = (c: string) => g.modes.find((m) => m.code === c)!;

  it("the loader keeps null cells null", () => {
    expect(rows[0]!.modes!["2.2"]).toBeNull();
    expect(rows[0]!.modes!["1.1"]).toBe(0);
    expect(rows[4]!.modes!["2.2"]).toBe(1);
  });

  it("prevalence counts only the traces where the mode was measured", () => {
    // 2.2: 1 of 2 measured traces, not 1 of 6
    expect(mode("2.2").judged).toEqual({ all: 2, successful: 1, failed: 1 });
    expect(mode("2.2").prevalence.all).toBe(0.5);
    expect(mode("2.2").prevalence_ci.all.lo).toBeGreaterThan(0);
    // 1.3 was measured everywhere
    expect(mode("1.3").judged.all).toBe(6);
    // 2.3 was measured only on j1, j2
    expect(mode("2.3").judged.all).toBe(2);
  });

  it("a mode measured nowhere has no prevalence, no delta and no class beyond undetermined", () => {
    const only = groupStatistics(rows.slice(0, 4)).groups[0]!;
    const m = only.modes.find((x) => x.code === "2.2")!;
    expect(m.judged).toEqual({ all: 0, successful: 0, failed: 0 });
    expect(m.prevalence).toEqual({ all: null, successful: null, failed: null });
    expect(m.delta_pp.value).toBeNull();
    expect(m.p_value).toBeNull();
    expect(m.class).toBe("undetermined");
  });

  it("co-occurrence needs both modes measured; modes per failed trace counts found modes only", () => {
    const pair = g.cooccurrence.find((p) => p.a === "1.3" && p.b === "2.2");
    expect(pair).toBeUndefined(); // never together, and 2.2 is unmeasured on the 1.3 traces
    expect(g.modes_per_failed_trace).toMatchObject({ n: 3, mean: 2 / 3 }); // r1 1, r2 0, j1 1
  });

  it("roll-ups leave out member modes that no trace measured, and say so", () => {
    const only = groupStatistics(rows.slice(0, 4)).groups[0]!;
    const fc2 = only.rollups.find((r) => r.code === "FC2")!;
    // without the restriction FC2 would be null on every trace without 2.1 or 2.6 (judged on positives only)
    expect(fc2.judged.all).toBe(4);
    expect(fc2.counts.all).toBe(0);
    expect(fc2.name).toContain("any of 2.1, 2.6; 2.2, 2.3, 2.4, 2.5 not measured");
    const fc1 = only.rollups.find((r) => r.code === "FC1")!;
    expect(fc1.counts.all).toBe(2);
    expect(fc1.prevalence.all).toBe(0.5);
  });

  it("an intervention's unmeasured modes are said to be not measured, not unseen", () => {
    // clarify-or-read-only targets 2.2 (unmeasured here) and 1.1 (measured, never found)
    const only = groupStatistics(rows.slice(0, 4)).groups[0]!;
    const clarify = rankInterventions(only, { rows: rows.slice(0, 4) }).find((r) => r.id === "clarify-or-read-only")!;
    expect(clarify.leverage).toBe(0);
    expect(clarify.contributions.map((c) => [c.mode, c.not_measured])).toEqual([
      ["2.2", true],
      ["1.1", false],
    ]);
    expect(clarify.explanation).toContain("FM-2.2 not measured");
    expect(clarify.explanation).toContain("none of its measured modes (FM-1.1)");
    // a catalogue entry whose every target is unmeasured: leverage unknown, not absence
    const solo = rankInterventions(only, {
      catalogue: { ...INTERVENTIONS, interventions: [{ ...INTERVENTIONS.interventions.find((i) => i.id === "clarify-or-read-only")!, targets: [{ mode: "2.2", coverage: "primary" as const }] }] },
    })[0]!;
    expect(solo.explanation).toContain("were not measured");
    expect(solo.explanation).toContain("not evidence of absence");
  });
});

describe("circularity: the comparison counts outcome-independent evidence only", () => {
  // 3.1 found in 4 of 5 failed runs, but in 3 of them only through the outcome; in 1 of 5 successful runs on steps.
  const rows = rowsOf([
    record("f1", false, [finding("3.1", ["steps", "outcome"])]),
    record("f2", false, [finding("3.1", ["steps", "outcome"])]),
    record("f3", false, [finding("3.1", ["outcome"])]),
    record("f4", false, [finding("3.1", ["steps"]), finding("3.1", ["steps", "outcome"])]),
    record("f5", false, []),
    record("s1", true, [finding("3.1")]), // no basis: steps-only, the default
    record("s2", true, []),
    record("s3", true, []),
    record("s4", true, []),
    record("s5", true, []),
  ]);
  const g = groupStatistics(rows).groups[0]!;
  const m = g.modes.find((x) => x.code === "3.1")!;

  it("the loader carries, per mode, whether outcome-independent findings support it", () => {
    expect(rows[0]!.modes!["3.1"]).toBe(1);
    expect(rows[0]!.independent!["3.1"]).toBe(0); // found only through the outcome
    expect(rows[3]!.independent!["3.1"]).toBe(1); // one of its findings rests on the steps alone
    expect(rows[5]!.independent!["3.1"]).toBe(1);
    expect(rows[0]!.independent!["2.2"]).toBeNull(); // unmeasured stays unmeasured
    expect(independentVector(null, [])).toBeNull();
  });

  it("prevalence uses every finding", () => {
    expect(m.counts).toEqual({ all: 5, successful: 1, failed: 4 });
    expect(m.prevalence.failed).toBe(0.8);
  });

  it("delta, p and class use only outcome-independent findings", () => {
    expect(m.independent.counts).toEqual({ all: 2, successful: 1, failed: 1 });
    expect(m.delta_pp.value).toBeCloseTo(0, 12); // 1/5 − 1/5, not 4/5 − 1/5
    expect(m.p_value).toBeCloseTo(1, 12);
    expect(m.class).not.toBe("fatal");
    expect(m.reason).toContain("3 traces where it was found only through the outcome left out of the comparison");
    expect(g.predictors.map((p) => p.code)).not.toContain("3.1");
    // the circular figure is kept beside it, for reference
    expect(m.delta_pp_all_findings.value).toBeCloseTo(60, 10);
  });

  it("would have been called fatal on all findings (the circle this rule breaks)", () => {
    const naive: LabelRow[] = rows.map((r) => ({ ...r, independent: undefined }));
    const n = groupStatistics(naive).groups[0]!.modes.find((x) => x.code === "3.1")!;
    expect(n.delta_pp.value).toBeCloseTo(60, 10);
    expect(n.p_value!).toBeLessThan(0.21);
  });

  it("labels without basis (CSV, MAST-Data) are used as they are", () => {
    const csv = labelsFromText(`trace_id,group,success,1.1,1.2,1.3,1.4,1.5,2.1,2.2,2.3,2.4,2.5,2.6,3.1,3.2,3.3\na,g,0,0,,0,0,0,0,,0,0,0,0,1,0,0\n`, "l.csv").rows[0]!;
    expect(csv.independent).toBeUndefined();
    const s = groupStatistics([csv]).groups[0]!.modes.find((x) => x.code === "3.1")!;
    expect(s.independent.counts).toEqual(s.counts);
  });
});

describe("eval: an unmeasured prediction is never a negative", () => {
  const vec = (v: Record<string, ModeValue>): Record<string, ModeValue> => ({ ...Object.fromEntries(MAST_CODES.map((c) => [c, 0])), ...v });
  const row = (id: string, modes: Record<string, ModeValue>): LabelRow => ({ trace_id: id, fields: {}, success: false, modes, origin: { file: "t", format: "findings" } });
  const reference = [row("a", vec({ "2.2": 1, "1.3": 1 })), row("b", vec({ "2.2": 1 })), row("c", vec({}))];
  const predicted = [row("a", vec({ "2.2": null, "1.3": 1 })), row("b", vec({ "2.2": null })), row("c", vec({ "2.2": null }))];
  const r = evaluateAgreement(reference, predicted);
  const m = (c: string) => r.modes.find((x) => x.code === c)!;

  it("leaves the mode out of its confusion table and reports it as not measured", () => {
    expect(m("2.2")).toMatchObject({ n: 0, tp: 0, fp: 0, fn: 0, tn: 0, not_measured: 3, recall: null, precision: null });
    expect(r.not_measured).toEqual(["2.2"]);
    expect(m("1.3")).toMatchObject({ n: 3, tp: 1, tn: 2, not_measured: 0 });
    // the macro summary is over the measured modes only (with 2.2 counted as negatives, recall would drop to 0)
    expect(r.macro.modes).toBe(MAST_CODES.length - 1);
    expect(r.micro.fn).toBe(0);
  });

  it("scores roll-ups over the measured members only", () => {
    const fc2 = r.rollups.find((x) => x.code === "FC2")!;
    expect(fc2.name).toContain("2.2 not measured");
    expect(fc2).toMatchObject({ n: 3, tp: 0, fn: 0 });
  });
});

describe("diff: roll-ups over the modes both runs measured", () => {
  it("leaves a member out when one run never measured it", async () => {
    const { diffRuns } = await import("./diff.js");
    const vec = (found: string[], unmeasured: string[]): Record<string, ModeValue> =>
      Object.fromEntries(MAST_CODES.map((c) => [c, unmeasured.includes(c) ? null : found.includes(c) ? 1 : 0]));
    const row = (id: string, modes: Record<string, ModeValue>): LabelRow => ({ trace_id: id, fields: {}, success: false, modes, origin: { file: "t", format: "findings" } });
    // before: rules (2.2 unmeasured); after: a judge that found 2.2 in one of two traces
    const r = diffRuns([row("a", vec([], ["2.2"])), row("b", vec([], ["2.2"]))], [row("a", vec(["2.2"], [])), row("b", vec([], []))]);
    const fc2 = r.groups[0]!.rollups.find((x) => x.code === "FC2")!;
    expect(fc2.before.judged).toBe(2); // not 0: the unmeasured 2.2 does not make FC2 unknown
    expect(fc2.after.count).toBe(0); // 2.2 is not part of the compared roll-up
    expect(r.groups[0]!.modes.find((x) => x.code === "2.2")!.before.judged).toBe(0);
  });
});
