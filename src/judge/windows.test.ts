import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { renderTrace, type RenderedStep } from "./render.js";
import { planWindows, wholeRunView } from "./windows.js";

function steps(n: number, textOf: (i: number) => string = (i) => `step number ${i} did some work on file_${i}.py and printed ok`): RenderedStep[] {
  const t = buildTrace(
    { id: "w", source: { file: "mem", format: "test", index: 0 } },
    Array.from({ length: n }, (_, i) => ({ agent: i % 2 ? "coder" : "tester", role: "assistant" as const, kind: "message" as const, text: textOf(i) })),
  );
  return renderTrace(t, { maxFieldChars: 1_000_000 }).steps;
}

describe("planWindows", () => {
  it("covers every step, overlaps consecutive windows, stays within budget and ends on the last step", () => {
    const s = steps(40);
    const per = s[10]!.tokens;
    const plan = planWindows(s, { budget: per * 8, overlapTokens: per * 2 });
    expect(plan.forcedCuts).toEqual([]);
    expect(plan.windows.length).toBeGreaterThan(4);
    const covered = new Set<number>();
    plan.windows.forEach((w, i) => {
      for (let p = w.start; p < w.end; p++) covered.add(p);
      expect(w.tokens).toBeLessThanOrEqual(per * 8);
      if (i > 0) {
        const prev = plan.windows[i - 1]!;
        expect(w.start).toBeGreaterThan(prev.start);
        expect(w.start).toBeLessThan(prev.end);
        expect(w.overlap).toBe(prev.end - w.start);
        expect(w.overlap).toBeGreaterThan(0);
      }
    });
    expect(covered.size).toBe(40);
    expect(plan.windows.at(-1)!.end).toBe(40);
  });

  it("puts a trace that fits into one window", () => {
    const s = steps(5);
    const total = s.reduce((n, x) => n + x.tokens, 0);
    const plan = planWindows(s, { budget: total });
    expect(plan.windows).toEqual([{ index: 0, start: 0, end: 5, tokens: total, overlap: 0 }]);
  });

  it("splits a step larger than the budget across windows: every character shown, nothing cut", () => {
    const giant = Array.from({ length: 400 }, (_, i) => `giant output line ${i}`).join("\n");
    const s = steps(6, (i) => (i === 3 ? giant : `small step ${i}`));
    const budget = 300;
    const plan = planWindows(s, { budget });
    expect(plan.forcedCuts).toEqual([]);
    const parts = plan.steps.filter((x) => x.index === 3);
    expect(parts.length).toBeGreaterThan(2);
    expect(plan.splits).toEqual([{ step: 3, parts: parts.length }]);
    parts.forEach((p, k) => {
      expect(p.part).toEqual({ n: k + 1, of: parts.length });
      expect(p.header).toBe(`${s[3]!.header} (part ${k + 1}/${parts.length})`);
      expect(p.tokens).toBeLessThanOrEqual(budget);
    });
    // the parts, in order, are the step's body exactly
    expect(parts.map((p) => p.body).join("")).toBe(s[3]!.body);
    expect(plan.steps.map((x) => x.body).join("")).not.toMatch(/chars elided/);
    // every position (every part of every step) is in some window, and no window is over budget
    const covered = new Set(plan.windows.flatMap((w) => Array.from({ length: w.end - w.start }, (_, k) => w.start + k)));
    expect(covered.size).toBe(plan.steps.length);
    for (const w of plan.windows) expect(w.tokens).toBeLessThanOrEqual(budget);
  });

  it("always moves forward even when the overlap could hold a whole window", () => {
    const s = steps(10);
    const per = s[5]!.tokens;
    const plan = planWindows(s, { budget: per * 2, overlapTokens: per * 10 });
    expect(plan.windows.at(-1)!.end).toBe(10);
    expect(plan.windows.length).toBeLessThanOrEqual(10);
  });
});

describe("wholeRunView", () => {
  it("shows everything in full when it fits", () => {
    const s = steps(5);
    const v = wholeRunView(s, 10_000);
    expect(v.tailFrom).toBe(0);
    expect(v.forcedCuts).toEqual([]);
    expect(v.text).toBe(s.map((x) => x.block).join("\n\n"));
  });

  it("keeps the tail in full and lists earlier steps as outline lines", () => {
    const s = steps(150, (i) => `step ${i}: `.concat("the agent read a file and printed a long report about it. ".repeat(4)));
    const v = wholeRunView(s, 6000);
    expect(v.tailFrom).toBeGreaterThan(0);
    expect(v.text).toContain(s[149]!.block);
    expect(v.text).toContain("[step 0] agent=tester");
    expect(v.forcedCuts).toEqual([]);
    expect(v.tokens).toBeLessThanOrEqual(6000);
  });

  it("records omitted outline lines when even headers do not fit", () => {
    const s = steps(2000);
    const v = wholeRunView(s, 2000);
    expect(v.outlineChars).toBe(0);
    const cut = v.forcedCuts.find((c) => c.kind === "outline-omitted");
    expect(cut).toBeDefined();
    expect(v.text).toContain(`[… outline of steps ${cut!.from}–${cut!.to} omitted`);
    // Head and tail of the run survive.
    expect(v.text).toContain("[step 0] ");
    expect(v.text).toContain(s[1999]!.block);
  });
});
