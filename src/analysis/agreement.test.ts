import { describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { corpus } from "../testing/corpus.js";
import type { Trace } from "../trace/index.js";
import { evaluateAgreement, matchRows, scores } from "./agreement.js";
import { rowFromTrace } from "./labels.js";
import type { Attribution, LabelRow, ModeValue } from "./types.js";

function row(id: string, present: string[] | null, extra: Partial<LabelRow> = {}): LabelRow {
  const modes = present
    ? (Object.fromEntries(MAST_CODES.map((c) => [c, present.includes(c) ? 1 : 0])) as Record<string, ModeValue>)
    : null;
  return { trace_id: id, fields: {}, success: false, modes, origin: { file: "test", format: "csv" }, ...extra };
}

describe("scores", () => {
  it("Cohen's κ textbook example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → κ = 0.4", () => {
    // p_o = 35/50 = 0.7; p_e = (25·30 + 25·20)/50² = 0.5; κ = (0.7 − 0.5)/(1 − 0.5)
    const s = scores({ tp: 20, fn: 5, fp: 10, tn: 15 });
    expect(s.kappa).toBeCloseTo(0.4, 12);
    expect(s.accuracy).toBeCloseTo(0.7, 12);
    expect(s.precision).toBeCloseTo(20 / 30, 12);
    expect(s.recall).toBeCloseTo(20 / 25, 12);
    expect(s.f1).toBeCloseTo(40 / 55, 12);
  });

  it("leaves undefined scores null", () => {
    expect(scores({ tp: 0, fp: 0, fn: 0, tn: 10 })).toEqual({ precision: null, recall: null, f1: null, kappa: null, accuracy: 1 });
    expect(scores({ tp: 0, fp: 0, fn: 0, tn: 0 }).accuracy).toBeNull();
  });
});

describe("evaluateAgreement: per-mode, macro, micro", () => {
  // 10 traces. 1.1: reference on t0–t3, prediction on t0–t2 and t4 → tp 3, fn 1, fp 1, tn 5.
  // 3.3: reference never, prediction on t0 → fp 1, tn 9. The other 12 modes: 0 on both sides everywhere.
  const ref = Array.from({ length: 10 }, (_, i) => row(`t${i}`, i < 4 ? ["1.1"] : []));
  const pred = Array.from({ length: 10 }, (_, i) => row(`t${i}`, [...(i < 3 || i === 4 ? ["1.1"] : []), ...(i === 0 ? ["3.3"] : [])]));
  const r = evaluateAgreement(ref, pred);
  const m = (code: string) => r.modes.find((x) => x.code === code)!;

  it("scores one mode from its confusion table", () => {
    expect(m("1.1")).toMatchObject({ n: 10, tp: 3, fp: 1, fn: 1, tn: 5, precision: 0.75, recall: 0.75, f1: 0.75, accuracy: 0.8 });
    // p_e = (4·4 + 6·6)/100 = 0.52 → κ = (0.8 − 0.52)/0.48
    expect(m("1.1").kappa).toBeCloseTo(0.28 / 0.48, 12);
    expect(m("3.3")).toMatchObject({ tp: 0, fp: 1, fn: 0, tn: 9, precision: 0, recall: null, f1: 0, accuracy: 0.9, kappa: 0 });
    expect(m("2.1")).toMatchObject({ precision: null, recall: null, f1: null, kappa: null, accuracy: 1 });
  });

  it("averages defined scores for macro and pools tables for micro", () => {
    expect(r.macro.precision).toBeCloseTo((0.75 + 0) / 2, 12);
    expect(r.macro.recall).toBeCloseTo(0.75, 12);
    expect(r.macro.f1).toBeCloseTo(0.375, 12);
    expect(r.macro.kappa).toBeCloseTo((0.28 / 0.48 + 0) / 2, 12);
    expect(r.macro.accuracy).toBeCloseTo((0.8 + 0.9 + 12) / 14, 12);
    expect(r.macro.modes).toBe(14);
    // pooled: tp 3, fp 2, fn 1, tn 134 (n = 140); p_o = 137/140, p_e = (5·4 + 135·136)/140² → κ = 800/1220
    expect(r.micro).toMatchObject({ tp: 3, fp: 2, fn: 1, tn: 134 });
    expect(r.micro.precision).toBeCloseTo(0.6, 12);
    expect(r.micro.f1).toBeCloseTo(6 / 9, 12);
    expect(r.micro.kappa).toBeCloseTo(800 / 1220, 12);
    expect(r.attribution).toBeNull();
  });

  it("reports the merged verification flag", () => {
    const v = r.rollups.find((x) => x.code === "FC3-verification")!;
    expect(v).toMatchObject({ tp: 0, fp: 1, tn: 9 });
    expect(r.rollups.find((x) => x.code === "FC1")).toMatchObject({ tp: 3, fp: 1, fn: 1, tn: 5 });
  });
});

describe("matching", () => {
  it("lists unmatched, duplicate and ambiguous ids instead of dropping them", () => {
    const ref = [
      row("a", []),
      row("a", ["1.1"]), // duplicate: first copy used
      row("b", []),
      row("c", [], { aliases: ["q-c"] }),
      row("d", [], { aliases: ["q-d"] }),
      row("only-ref", []),
    ];
    const pred = [
      row("a", []),
      row("run:b", [], { aliases: ["b"] }), // matched through its alias
      row("x:q-c", [], { aliases: ["q-c"] }),
      row("y:q-d", [], { aliases: ["q-d"] }),
      row("z:q-d", [], { aliases: ["q-d"] }),
      row("only-pred", []),
    ];
    const { pairs, matching } = matchRows(ref, pred);
    expect(pairs.map(([r, p]) => `${r.trace_id}=${p.trace_id}`)).toEqual(["a=a", "b=run:b", "c=x:q-c"]);
    expect(matching).toEqual({
      matched: 3,
      matched_by_alias: 2,
      reference_only: ["d", "only-ref"],
      predicted_only: ["y:q-d", "z:q-d", "only-pred"],
      ambiguous: [{ reference: "d", candidates: ["y:q-d", "z:q-d"] }],
      duplicate_reference: ["a"],
      duplicate_predicted: [],
    });
  });

  it("counts pairs without a vector apart and skips unjudged cells", () => {
    const nullCell = row("b", ["1.1"]);
    nullCell.modes!["1.1"] = null;
    const r = evaluateAgreement([row("a", ["1.1"]), nullCell, row("c", null)], [row("a", null), row("b", ["1.1"]), row("c", [])]);
    expect(r.vectors).toEqual({ compared: 1, reference_without: 1, predicted_without: 1 });
    expect(r.modes.find((x) => x.code === "1.1")!.n).toBe(0);
    expect(r.modes.find((x) => x.code === "1.2")!.n).toBe(1);
  });
});

describe("attribution", () => {
  const att = (agent: string | null, step: number | null): Attribution => ({ agent, step });
  it("scores agent (case-insensitive) and step, exact and within ±k", () => {
    const ref = [
      row("a", null, { attribution: att("WebSurfer", 12) }),
      row("b", null, { attribution: att("Orchestrator", 9) }),
      row("c", null, { attribution: att("Coder", 5) }),
      row("d", null, { attribution: att(null, 0) }),
      row("e", null), // no attribution: not part of the attribution scores
    ];
    const pred = [
      row("a", [], { attribution: att("websurfer ", 12) }),
      row("b", [], { attribution: att("Assistant", 11) }),
      row("c", []),
      row("d", [], { attribution: att("Coder", 6) }),
      row("e", [], { attribution: att("Coder", 1) }),
    ];
    const a = evaluateAgreement(ref, pred).attribution!;
    expect(a.traces).toBe(4);
    expect(a.agent).toEqual({ total: 3, correct: 1, accuracy: 1 / 3, missing_prediction: 1 });
    expect(a.step.total).toBe(4);
    expect(a.step.exact).toEqual({ correct: 1, accuracy: 0.25 });
    expect(a.step.within).toEqual([
      { k: 1, correct: 1, accuracy: 0.25 },
      { k: 3, correct: 2, accuracy: 0.5 },
      { k: 5, correct: 2, accuracy: 0.5 },
    ]);
    expect(a.step.missing_prediction).toBe(1);
  });
});

describe("Who&When vs AgentRx on the corpus (the same Magentic-One runs, two gold label sets)", () => {
  it("reproduces the published disagreement between the two label sets", async () => {
    const whoAndWhen = await readAll(corpus("who_and_when", "Hand-Crafted"));
    const agentRx = await readAll(corpus("agentrx", "magentic_dataset"));
    const rows = (ts: Trace[]) => ts.flatMap((t) => rowFromTrace(t).row ?? []);
    const reference = rows(agentRx.traces);
    const predicted = rows(whoAndWhen.traces);
    expect(reference).toHaveLength(44); // AgentRx labels 44 of the 58 Magentic trajectories
    const r = evaluateAgreement(reference, predicted);
    // Ids differ (agentrx:<id> vs who_and_when:hand-crafted:<id>): every pair is made through the question id.
    expect(r.matching).toMatchObject({ matched: 44, matched_by_alias: 44, reference_only: [], ambiguous: [] });
    expect(r.matching.predicted_only).toHaveLength(14);
    // ground-truth-datasets.md §3: agent 26/43, step 15/43 — computed without trajectory 08cae58d, whose root cause
    // names its failure id as a string. The adapter resolves it (step 4, WebSurfer on both sides), so 44 pairs.
    expect(r.attribution!.agent).toMatchObject({ total: 44, correct: 27 });
    expect(r.attribution!.step.exact).toMatchObject({ correct: 16 });
    const within = r.attribution!.step.within.map((w) => w.correct);
    expect(within[0]).toBeGreaterThanOrEqual(16);
    expect(within).toEqual([...within].sort((a, b) => a - b)); // looser tolerance never scores fewer
  });
});
