import { describe, expect, it } from "vitest";
import { MAST_CODES } from "../taxonomy/index.js";
import { diffRuns } from "./diff.js";
import type { LabelRow } from "./types.js";

/** A row with the given present modes (every other code judged 0), or no vector when `modes` is null. */
function row(id: string, group: string, present: string[] | null, success: boolean | null = false): LabelRow {
  return {
    trace_id: id,
    fields: { model: group },
    success,
    modes: present === null ? null : Object.fromEntries(MAST_CODES.map((c) => [c, present.includes(c) ? 1 : 0])),
    origin: { file: "test", format: "csv" },
  };
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("diffRuns", () => {
  // Group A: the same 10 traces in both runs. 1.3 present in a0…a5 before, a0…a1 after (4 fell, none rose);
  // 3.1 absent before, present in a0…a6 after (7 rose).
  const beforeA = ids("a", 10).map((id, i) => row(id, "A", i < 6 ? ["1.3"] : []));
  const afterA = ids("a", 10).map((id, i) => row(id, "A", [...(i < 2 ? ["1.3"] : []), ...(i < 7 ? ["3.1"] : [])]));
  // Group B: different traces in each run (comparable, not the same): 1.5 in 0/4 before, 4/4 after.
  const beforeB = ids("b", 4).map((id) => row(id, "B", []));
  const afterB = ids("c", 4).map((id) => row(id, "B", ["1.5"]));
  const report = diffRuns([...beforeA, ...beforeB], [...afterA, ...afterB], { by: "model" });
  const group = (v: string) => report.groups.find((g) => g.value === v)!;
  const mode = (v: string, code: string) => group(v).modes.find((m) => m.code === code)!;

  it("measures a group of the same traces on the pairs, with the exact McNemar test", () => {
    const g = group("A");
    expect(g.pairs).toBe(10);
    expect(g.test).toBe("mcnemar-exact");
    const fell = mode("A", "1.3");
    expect(fell.paired).toMatchObject({ pairs: 10, both: 2, rose: 0, fell: 4, neither: 4 });
    expect(fell.delta_pp).toBeCloseTo(-40, 10); // 2/10 − 6/10
    expect(fell.p_value).toBeCloseTo(2 / 16, 14); // 2·(½)^4
    expect(fell.direction).toBe("fell");
    expect(fell.significant).toBe(false);
    const rose = mode("A", "3.1");
    expect(rose.paired).toMatchObject({ rose: 7, fell: 0 });
    expect(rose.delta_pp).toBeCloseTo(70, 10);
    expect(rose.p_value).toBeCloseTo(2 / 128, 14); // 2·(½)^7
    expect(rose.significant).toBe(true);
    expect(rose.paired!.delta_pp.lo!).toBeGreaterThan(0);
    expect(g.rose).toEqual(["3.1"]);
    expect(g.fell).toEqual([]);
    // the unpaired comparison is reported beside it
    expect(fell.unpaired.delta_pp.estimate).toBeCloseTo(-40, 10);
    expect(fell.before).toEqual({ count: 6, judged: 10, prevalence: 0.6 });
    expect(fell.after).toEqual({ count: 2, judged: 10, prevalence: 0.2 });
  });

  it("compares a group of different traces as independent samples with Fisher's exact test", () => {
    const g = group("B");
    expect(g.pairs).toBe(0);
    expect(g.test).toBe("fisher-exact");
    const m = mode("B", "1.5");
    expect(m.paired).toBeNull();
    expect(m.delta_pp).toBeCloseTo(100, 10);
    expect(m.p_value).toBeCloseTo(2 / 70, 14); // [[4,0],[0,4]]: 2/C(8,4)
    expect(m.significant).toBe(true);
    expect(g.rose).toEqual(["1.5"]);
    // Benjamini–Hochberg over the 14 modes: only 1.5 has p < 1, so q = p·14/1 (capped at 1)
    expect(m.q_value).toBeCloseTo(Math.min(1, (2 / 70) * 14), 12);
  });

  it("lists every unmatched trace and every trace that changed label", () => {
    expect(report.matching.matched).toBe(10);
    expect(report.matching.before_only.sort()).toEqual(ids("b", 4));
    expect(report.matching.after_only.sort()).toEqual(ids("c", 4));
    // a0, a1: +3.1; a2…a5: +3.1 −1.3; a6: +3.1; a7…a9 unchanged
    expect(report.changed.map((c) => [c.trace_id, c.added, c.removed])).toEqual([
      ["a0", ["3.1"], []],
      ["a1", ["3.1"], []],
      ["a2", ["3.1"], ["1.3"]],
      ["a3", ["3.1"], ["1.3"]],
      ["a4", ["3.1"], ["1.3"]],
      ["a5", ["3.1"], ["1.3"]],
      ["a6", ["3.1"], []],
    ]);
    expect(report.unchanged).toBe(3);
  });

  it("reports outcome changes, vectors gained or lost, and traces that moved group", () => {
    const r = diffRuns(
      [row("x", "A", [], false), row("y", "A", null), row("z", "A", ["2.2"])],
      [row("x", "A", [], true), row("y", "A", ["1.1"]), row("z", "B", ["2.2"])],
      { by: "model" },
    );
    expect(r.matching.regrouped).toBe(1);
    expect(r.changed).toEqual([
      { trace_id: "x", group: { before: "A", after: "A" }, added: [], removed: [], outcome: { before: false, after: true } },
      { trace_id: "y", group: { before: "A", after: "A" }, added: [], removed: [], vector: "gained", outcome: { before: false, after: false } },
    ]);
    // z moved from A to B: no pair in either group, so neither is compared on pairs
    expect(r.groups.find((g) => g.value === "B")!.pairs).toBe(0);
    expect(r.groups.find((g) => g.value === "A")!.before.traces).toBe(3);
  });

  it("without --by compares everything as one group and keeps the roll-ups", () => {
    const r = diffRuns(beforeA, afterA);
    expect(r.groups).toHaveLength(1);
    expect(r.groups[0]).toMatchObject({ key: "all", value: "all", pairs: 10 });
    const fc3 = r.groups[0]!.rollups.find((m) => m.code === "FC3")!;
    expect(fc3.paired).toMatchObject({ rose: 7, fell: 0 });
  });
});
