import { describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { diagnoseTrace } from "../pipeline/index.js";
import { corpus } from "../testing/corpus.js";
import { argsText, displayFields, locateEvidence, locateQuote } from "../../web/evidence.js";

describe("locateQuote", () => {
  it("finds a quote whatever the whitespace, and maps it back to the displayed text", () => {
    const text = "first line\n  second   line\tthird";
    const r = locateQuote(text, "second line third")!;
    expect(text.slice(r.start, r.end)).toBe("second   line\tthird");
    expect(locateQuote(text, "fourth")).toBeNull();
    expect(locateQuote(text, "   ")).toBeNull();
  });

  it("finds compact JSON evidence inside pretty-printed arguments", () => {
    const args = { user_id: "ivan", flights: [{ n: "HAT097" }] };
    const shown = argsText(args)!;
    expect(shown).toContain("\n");
    const r = locateQuote(shown, JSON.stringify(args).slice(1, 30))!;
    expect(shown.slice(r.start, r.end).replace(/\s+/g, "")).toBe(JSON.stringify(args).slice(1, 30));
  });
});

describe("evidence on real traces", () => {
  // Every rules finding on the tau-bench and Who&When corpus must be found in one of the steps it cites, in a field
  // the viewer shows, or the viewer could not highlight it.
  it.each([["tau-bench"], ["who_and_when"]])("locates every finding's evidence in %s", async (folder) => {
    const { traces } = await readAll([corpus(folder)]);
    let findings = 0;
    const missing: string[] = [];
    for (const t of traces) {
      const d = await diagnoseTrace(t);
      for (const f of d.findings) {
        if (!f.evidence) continue;
        findings++;
        const hit = f.steps.some((s) => t.steps[s] && locateEvidence(t.steps[s]!, f.evidence));
        if (!hit) missing.push(`${t.id} ${f.mode} ${f.detector}: ${f.evidence.slice(0, 60)}`);
      }
    }
    expect(findings).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  it("shows a step's text, arguments and a distinct output, in that order", () => {
    expect(displayFields({ text: "ls()", tool: { name: "ls", args: { a: 1 }, output: "x" } }).map((f) => f.field)).toEqual(["text", "args", "output"]);
    expect(displayFields({ text: "same", tool: { name: "t", output: "same" } }).map((f) => f.field)).toEqual(["output"]);
  });
});
