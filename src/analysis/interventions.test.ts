import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClarifyGate } from "../guards/clarify-gate.js";
import { ContextGuard } from "../guards/context-guard.js";
import { LoopDetector } from "../guards/loop-detector.js";
import { TerminationController } from "../guards/termination-controller.js";
import type { Guard } from "../guards/types.js";
import { VerificationGate } from "../guards/verification-gate.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { groupStats } from "./groups.js";
import { INTERVENTIONS, parseCatalogue, rankInterventions } from "./interventions.js";
import type { LabelRow } from "./types.js";

function row(id: string, success: boolean, present: string[]): LabelRow {
  return {
    trace_id: id,
    fields: {},
    success,
    modes: Object.fromEntries(MAST_CODES.map((c) => [c, present.includes(c) ? 1 : 0])),
    origin: { file: "test", format: "csv" },
  };
}

/*
 * 10 failed, 10 successful traces:
 *   3.3 in f0…f7 (8/10 failed) and no success   → fatal (Fisher p = 2·45/125970)
 *   3.2 in f0, f1 (2/10) and s0, s1 (2/10)       → undetermined (Wilson lower bound of 2/10 < 10 %)
 *   1.3 in f0…f5 (6/10) and s0…s5 (6/10)         → benign (lower bound of 6/10 = 31 %)
 *   1.5 in f7…f9 (3/10), no success              → undetermined (p = 0.21)
 */
const failed = Array.from({ length: 10 }, (_, i) =>
  row(`f${i}`, false, [...(i < 8 ? ["3.3"] : []), ...(i < 2 ? ["3.2"] : []), ...(i < 6 ? ["1.3"] : []), ...(i >= 7 ? ["1.5"] : [])]),
);
const successful = Array.from({ length: 10 }, (_, i) => row(`s${i}`, true, [...(i < 2 ? ["3.2"] : []), ...(i < 6 ? ["1.3"] : [])]));
const rows = [...failed, ...successful];
const group = groupStats(rows, "model", "m");

describe("rankInterventions", () => {
  const ranking = rankInterventions(group, { rows });
  const get = (id: string) => ranking.find((r) => r.id === id)!;

  it("uses the classes the group's own data gives", () => {
    const cls = (c: string) => group.modes.find((m) => m.code === c)!.class;
    expect([cls("3.3"), cls("3.2"), cls("1.3"), cls("1.5")]).toEqual(["fatal", "undetermined", "benign", "undetermined"]);
  });

  it("computes leverage = Σ coverage × fatality × failed prevalence, by hand", () => {
    // verification gate: 3.3 1×1×0.8 + 3.2 1×0.5×0.2 = 0.9
    expect(get("verification-gate").leverage).toBeCloseTo(0.9, 12);
    // termination: 1.5 1×0.5×0.3 + 3.1 0 = 0.15
    expect(get("termination-state-machine").leverage).toBeCloseTo(0.15, 12);
    // loop detector: 1.3 1×0.1×0.6 + 1.5 partial 0.5×0.5×0.3 = 0.06 + 0.075 = 0.135
    expect(get("loop-detector").leverage).toBeCloseTo(0.135, 12);
    expect(get("clarify-or-read-only").leverage).toBe(0);
    expect(get("context-hygiene").leverage).toBe(0);
    const partial = get("loop-detector").contributions.find((c) => c.mode === "1.5")!;
    expect(partial).toMatchObject({ coverage: "partial", coverage_weight: 0.5, class: "undetermined", fatality_weight: 0.5, failed: { count: 3, judged: 10 } });
  });

  it("ranks by leverage, ties in catalogue order, and counts reach over failed traces", () => {
    expect(ranking.map((r) => r.id)).toEqual(["verification-gate", "termination-state-machine", "loop-detector", "clarify-or-read-only", "context-hygiene"]);
    expect(ranking.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(get("verification-gate").reach).toEqual({ failed_traces: 8, annotated_failed: 10 });
    expect(get("loop-detector").reach).toEqual({ failed_traces: 9, annotated_failed: 10 }); // f0…f5 ∪ f7…f9
    expect(rankInterventions(group)[0]!.reach).toBeNull();
  });

  it("explains each recommendation with the group's own numbers", () => {
    const text = get("verification-gate").explanation;
    expect(text).toContain("FM-3.3");
    expect(text).toContain("fatal in m");
    expect(text).toContain("8 of 10 failed traces (80 %) vs 0 of 10 successful (0 %)");
    expect(text).toContain("+80 pp");
    expect(text).toContain("Leverage 0.90");
    expect(text).toContain("8 of 10 failed traces");
    expect(get("context-hygiene").explanation).toMatch(/none of its modes .* appears in the 10 failed traces/);
  });

  it("gives no leverage to a group without failed traces", () => {
    const ok = groupStats(successful, "model", "ok");
    const r = rankInterventions(ok);
    expect(r.every((x) => x.leverage === 0)).toBe(true);
    expect(r[0]!.explanation).toContain("no annotated failed traces");
  });
});

describe("the intervention catalogue", () => {
  it("is valid versioned data whose guards exist and cover each primary mode", () => {
    expect(INTERVENTIONS.version).toMatch(/^1\.\d+\.\d+$/);
    const guards: Guard[] = [new VerificationGate(), new TerminationController(), new LoopDetector(), new ClarifyGate({ rules: [] }), new ContextGuard()];
    const byName = new Map(guards.map((g) => [g.name, g]));
    for (const iv of INTERVENTIONS.interventions) {
      const guard = byName.get(iv.guard.id);
      expect(guard, `${iv.id}: guard ${iv.guard.id}`).toBeDefined();
      for (const t of iv.targets.filter((t) => t.coverage === "primary")) expect(guard!.modes, `${iv.id} → ${t.mode}`).toContain(t.mode);
      expect(readFileSync(join(import.meta.dirname, "..", "..", iv.guard.module), "utf8")).toContain(`"${iv.guard.id}"`);
    }
    // every mode a guard intervenes on is targeted by some intervention
    const targeted = new Set(INTERVENTIONS.interventions.flatMap((iv) => iv.targets.map((t) => t.mode)));
    for (const g of guards) for (const m of g.modes) expect(targeted.has(m), `${g.name} ${m}`).toBe(true);
  });

  it("rejects a catalogue with unknown modes, unknown sources or duplicate ids", () => {
    const base = JSON.parse(JSON.stringify(INTERVENTIONS));
    const bad = structuredClone(base);
    bad.interventions[0].targets.push({ mode: "9.9", coverage: "primary" });
    expect(() => parseCatalogue(bad)).toThrow(/9\.9/);
    const badSource = structuredClone(base);
    badSource.interventions[0].evidence[0].source = "hearsay";
    expect(() => parseCatalogue(badSource)).toThrow(/unknown source hearsay/);
    const dup = structuredClone(base);
    dup.interventions.push(dup.interventions[0]);
    expect(() => parseCatalogue(dup)).toThrow(/duplicate id/);
    expect(() => parseCatalogue({ ...base, schema: "other" })).toThrow(/schema/);
  });
});
