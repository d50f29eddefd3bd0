import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mast, MAST_V3, Taxonomy } from "../taxonomy/index.js";
import { corpus } from "../testing/corpus.js";
import { finalMessages, finalPassCodes, mastMessages, promptVersion, systemPrompt, windowMessages } from "./prompt.js";
import { estimateTokens } from "./render.js";
import { parseMastAnswer } from "./response.js";

const shingles = (text: string, n = 8): Set<string> => {
  const words = text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").split(/\s+/).filter(Boolean);
  const out = new Set<string>();
  for (let i = 0; i + n <= words.length; i++) out.add(words.slice(i, i + n).join(" "));
  return out;
};

describe("structured prompt", () => {
  it("carries every mode's code, name and our definition", () => {
    const sys = systemPrompt(mast);
    for (const m of mast.modes) expect(sys).toContain(`${m.code} ${m.name} (${m.category}`), expect(sys).toContain(m.definition);
  });

  it("leaves 1.5, 3.1, 3.2 and 3.3 to the final whole-run pass", () => {
    expect(finalPassCodes(mast)).toEqual(["1.5", "3.1", "3.2", "3.3"]);
  });

  it("places position, running summary, hints, steps and the codes to judge in the user message", () => {
    const [sys, user] = windowMessages({
      taxonomy: mast,
      traceId: "t9",
      preamble: "Task: do it",
      stepsText: "[step 5] agent=a role=assistant kind=message\nhello",
      summary: "Earlier the agent read the file.",
      codes: ["1.1", "1.3"],
      hints: [{ mode: "1.3", confidence: 0.9, steps: [5], evidence: "hello", detector: "rules/step-repetition" }],
      deferredCodes: ["3.2"],
      window: { index: 1, count: 3, firstStep: 5, lastStep: 9, overlapSteps: 2, totalSteps: 20 },
    });
    expect(sys!.role).toBe("system");
    const u = user!.content;
    expect(u).toContain("window 2 of 3: steps 5–9 of 20. The first 2 of them repeat the end of the previous window.");
    expect(u).toContain("Your summary of the run before step 5 (from earlier windows):\nEarlier the agent read the file.");
    expect(u).toContain('- 1.3 from rules/step-repetition, steps 5, confidence 0.9: "hello"');
    expect(u).toContain("Judge these codes: 1.1, 1.3.");
    expect(u).toContain("Do not judge 3.2 here");
    expect(u.indexOf("Hints")).toBeLessThan(u.indexOf("[step 5]"));
  });

  it("final pass shows the summary and the whole-run view", () => {
    const [, user] = finalMessages({ taxonomy: mast, traceId: "t", preamble: "P", viewText: "VIEW", summary: "SUM", codes: ["3.1"], hints: [] });
    expect(user!.content).toMatch(/SUM\n\nVIEW\n\nJudge these codes: 3\.1\./);
  });
});

describe("MAST-compatible prompt", () => {
  it("keeps the official order in one user message: instructions, template, example, trace, definitions, examples", () => {
    const ms = mastMessages(mast, "TRACE-TEXT-HERE");
    expect(ms).toHaveLength(1);
    expect(ms[0]!.role).toBe("user");
    const c = ms[0]!.content;
    const order = ["Below is the execution trace", "A. <one-sentence summary", "An example answer", "TRACE-TEXT-HERE", "Definitions of the failure modes:", "Examples of the failure modes:"].map((s) => c.indexOf(s));
    expect(order.every((x) => x >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    for (const m of mast.modes) expect(c).toContain(`${m.code} ${m.name}: yes or no`);
  });

  it("has a worked example that uses only taxonomy codes and reads back with the strict parser", () => {
    const c = mastMessages(mast, "T")[0]!.content;
    const example = c.slice(c.indexOf("An example answer"), c.indexOf("The trace:"));
    expect(example).not.toMatch(/^(1\.6|2\.7) /m);
    const parsed = parseMastAnswer(example, mast.codes);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(Object.entries(parsed.value.modes).filter(([, v]) => v === 1).map(([k]) => k)).toEqual(["2.5", "3.2"]);
  });

  it("is written in our words: no 8-word run of the official definitions or examples, and far shorter", () => {
    const officialDefs = readFileSync(corpus("mast", "definitions.txt"), "utf8");
    const officialEx = readFileSync(corpus("mast", "examples.txt"), "utf8");
    const official = new Set([...shingles(officialDefs), ...shingles(officialEx)]);
    for (const text of [mastMessages(mast, "")[0]!.content, systemPrompt(mast)]) {
      const reused = [...shingles(text)].filter((s) => official.has(s));
      expect(reused).toEqual([]);
    }
    // The official annotator appends ~80 KB of definitions and examples; ours is a small fraction of that.
    const officialTokens = estimateTokens(officialDefs) + estimateTokens(officialEx);
    const ours = estimateTokens(mastMessages(mast, "")[0]!.content);
    expect(officialTokens).toBeGreaterThan(15_000);
    expect(ours).toBeLessThan(officialTokens / 5);
  });
});

describe("promptVersion", () => {
  it("is stable, differs per mode, and changes when a definition changes", () => {
    const v = promptVersion(mast, "structured");
    expect(v).toMatch(/^s1-[0-9a-f]{12}$/);
    expect(promptVersion(mast, "structured")).toBe(v);
    expect(promptVersion(mast, "mast-compatible")).toMatch(/^m1-[0-9a-f]{12}$/);
    const changed = new Taxonomy({ ...MAST_V3, modes: MAST_V3.modes.map((m) => (m.code === "1.3" ? { ...m, definition: `${m.definition} Reworded.` } : m)) });
    expect(promptVersion(changed, "structured")).not.toBe(v);
  });
});
