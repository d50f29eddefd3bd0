import { describe, expect, it } from "vitest";
import { MAST_CODES } from "../taxonomy/index.js";
import { classifyMode, fieldValue, groupStatistics, type ModeStats } from "./groups.js";
import type { LabelRow, ModeValue } from "./types.js";

function row(
  id: string,
  success: boolean | null,
  present: string[] | null,
  fields: Record<string, unknown> = {},
  firstStep?: Record<string, number>,
): LabelRow {
  const modes = present
    ? (Object.fromEntries(MAST_CODES.map((c) => [c, present.includes(c) ? 1 : 0])) as Record<string, ModeValue>)
    : null;
  return { trace_id: id, fields, success, modes, firstStep, origin: { file: "test", format: "csv" } };
}

// Group A, worked by hand in the comments below; group B is one clean success.
const rows: LabelRow[] = [
  row("t1", true, ["1.1", "1.3"], { model: "A" }, { "1.1": 2, "1.3": 5 }),
  row("t2", true, ["1.3"], { model: "A" }),
  row("t3", false, ["1.1", "1.3", "3.1"], { model: "A" }, { "1.1": 1, "1.3": 1, "3.1": 4 }),
  row("t4", false, ["3.1", "3.3"], { model: "A" }, { "3.1": 3, "3.3": 2 }),
  row("t5", false, ["3.1"], { model: "A" }),
  row("t6", null, ["2.6"], { model: "A" }),
  row("t7", false, null, { model: "A" }), // annotation failed: a trace, but no vector
  row("t8", true, [], { model: "B" }),
];

const byCode = (ms: ModeStats[], code: string) => ms.find((m) => m.code === code)!;

describe("groupStatistics on a hand-worked example", () => {
  const report = groupStatistics(rows, { by: "model" });
  const a = report.groups.find((g) => g.value === "A")!;

  it("splits by the key and counts outcomes", () => {
    expect(report.groups.map((g) => g.value)).toEqual(["A", "B"]);
    expect(a).toMatchObject({ traces: 7, annotated: 6, successes: 2, failures: 4, unknown_outcome: 1 });
    expect(a.success_rate.estimate).toBeCloseTo(2 / 6, 12);
    expect(a.success_rate.lo).toBeCloseTo(0.0968, 4); // Wilson 2/6
  });

  it("modes per failed trace: annotated failures t3 (3), t4 (2), t5 (1)", () => {
    // mean 2, s = 1, t(0.975, 2) = 4.3027 → 2 ± 2.4841
    expect(a.modes_per_failed_trace.n).toBe(3);
    expect(a.modes_per_failed_trace.mean).toBe(2);
    // 2 − 2.4841 < 0: a count of modes cannot be negative, so the interval is clipped to [0, 14]
    expect(a.modes_per_failed_trace.lo).toBe(0);
    expect(a.modes_per_failed_trace.hi).toBeCloseTo(2 + 4.302652729749462 / Math.sqrt(3), 8);
  });

  it("prevalence, delta and Fisher p per mode", () => {
    const m11 = byCode(a.modes, "1.1");
    expect(m11.counts).toEqual({ all: 2, successful: 1, failed: 1 });
    expect(m11.judged).toEqual({ all: 6, successful: 2, failed: 3 });
    expect(m11.delta_pp.value).toBeCloseTo(100 * (1 / 3 - 1 / 2), 10);
    expect(m11.p_value).toBeCloseTo(1, 12); // hypergeometric 0.1 / 0.6 / 0.3, observed 0.6

    const m13 = byCode(a.modes, "1.3");
    expect(m13.p_value).toBeCloseTo(0.4, 12); // tables 0.3 (observed) + 0.1
    expect(m13.class).toBe("benign"); // 2/2 successes, Wilson lower bound 0.342

    // 3.1: 3/3 failed vs 0/2 successful. Newcombe lower bound +13.5 pp (> 0) but Fisher p = 0.1:
    // the tests disagree, so the rule leaves it undetermined.
    const m31 = byCode(a.modes, "3.1");
    expect(m31.delta_pp.value).toBeCloseTo(100, 10);
    expect(m31.delta_pp.lo).toBeCloseTo(13.527884156571723, 6);
    expect(m31.p_value).toBeCloseTo(0.1, 12);
    expect(m31.class).toBe("undetermined");
    expect(m31.reason).toMatch(/disagree/);

    // 2.6 appears only in the unknown-outcome trace: counted among all, in neither comparison arm.
    const m26 = byCode(a.modes, "2.6");
    expect(m26.counts).toEqual({ all: 1, successful: 0, failed: 0 });
    expect(m26.prevalence.all).toBeCloseTo(1 / 6, 12);
    expect(m26.p_value).toBe(1);
    expect(m26.class).toBe("undetermined");

    expect(byCode(a.modes, "3.3").class).toBe("undetermined"); // 0/2 successes: too rare to call benign
  });

  it("rolls up categories and the merged verification flag", () => {
    expect(byCode(a.rollups, "FC1").counts).toEqual({ all: 3, successful: 2, failed: 1 });
    expect(byCode(a.rollups, "FC3").counts).toEqual({ all: 3, successful: 0, failed: 3 });
    expect(byCode(a.rollups, "FC3-verification").counts).toEqual({ all: 1, successful: 0, failed: 1 });
  });

  it("ranks predictors by the lower end of the delta interval", () => {
    expect(a.predictors.map((p) => p.code)).toEqual(["3.1", "3.3"]);
    expect(a.predictors[0]!.rank).toBe(1);
  });

  it("counts co-occurrence with lift", () => {
    expect(a.cooccurrence.map((c) => [c.a, c.b, c.both, Number(c.lift!.toFixed(4))])).toEqual([
      ["1.1", "1.3", 2, 2], // 6·2 / (2·3)
      ["3.1", "3.3", 1, 2], // 6·1 / (3·1)
      ["1.1", "3.1", 1, 1], // 6·1 / (2·3)
      ["1.3", "3.1", 1, 0.6667], // 6·1 / (3·3)
    ]);
  });

  it("finds cascades and root candidates from first steps", () => {
    expect(a.cascades.traces).toBe(3);
    const pair = (x: string, y: string) => a.cascades.pairs.find((p) => p.before === x && p.after === y);
    expect(pair("1.1", "1.3")).toEqual({ before: "1.1", after: "1.3", count: 1, reverse: 0, same_step: 1 });
    expect(pair("3.3", "3.1")).toEqual({ before: "3.3", after: "3.1", count: 1, reverse: 0, same_step: 0 });
    expect(a.cascades.roots).toEqual([
      { code: "1.1", first: 2, present: 2, share: 1 },
      { code: "3.3", first: 1, present: 1, share: 1 },
      { code: "1.3", first: 1, present: 2, share: 0.5 },
    ]);
  });

  it("gives nulls, not numbers, where a group cannot define them", () => {
    const b = report.groups.find((g) => g.value === "B")!;
    expect(b.modes_per_failed_trace).toEqual({ mean: null, lo: null, hi: null, n: 0 });
    const m = byCode(b.modes, "1.1");
    expect(m.prevalence.failed).toBeNull();
    expect(m.delta_pp).toEqual({ value: null, lo: null, hi: null });
    expect(m.p_value).toBeNull();
    expect(m.class).toBe("undetermined");
    expect(JSON.parse(JSON.stringify(b))).toEqual(b); // serialises losslessly (no NaN)
  });
});

describe("classifyMode", () => {
  it("calls a clear excess in failures fatal", () => {
    // 8/10 failed vs 1/10 successful: Fisher p = (450+10+10+450)/C(20,9) = 920/167960, Newcombe [+26.6, +86.5] pp
    const rs = [
      ...Array.from({ length: 10 }, (_, i) => row(`f${i}`, false, i < 8 ? ["3.1"] : [])),
      ...Array.from({ length: 10 }, (_, i) => row(`s${i}`, true, i < 1 ? ["3.1"] : [])),
    ];
    const m = byCode(groupStatistics(rs).groups[0]!.modes, "3.1");
    expect(m.p_value).toBeCloseTo(920 / 167960, 12);
    expect(m.delta_pp.lo).toBeCloseTo(26.582660970088623, 6);
    expect(m.class).toBe("fatal");
    expect(m.q_value).toBeCloseTo((14 * 920) / 167960, 12); // smallest of 14 p-values: q = 14·p
  });

  it("respects its thresholds", () => {
    const m = {
      counts: { all: 3, successful: 1, failed: 2 },
      judged: { all: 20, successful: 10, failed: 10 },
      delta_pp: { value: 10, lo: -20, hi: 35 },
      p_value: 1,
    };
    expect(classifyMode(m).class).toBe("undetermined"); // Wilson lower bound of 1/10 is 0.018
    expect(classifyMode(m, { benignMinSuccessPrevalence: 0.01 }).class).toBe("benign");
  });
});

describe("fieldValue", () => {
  it("reads dot paths and literal dotted keys", () => {
    expect(fieldValue({ reference: { level: "2" } }, "reference.level")).toBe("2");
    expect(fieldValue({ "a.b": 1, a: { b: 2 } }, "a.b")).toBe(1);
    expect(fieldValue({ a: 1 }, "a.b")).toBeUndefined();
  });

  it("puts rows without the key in a (none) group, last", () => {
    const r = groupStatistics([row("x", true, []), row("y", false, [], { model: "Z" })], { by: "model" });
    expect(r.groups.map((g) => g.value)).toEqual(["Z", "(none)"]);
  });
});
