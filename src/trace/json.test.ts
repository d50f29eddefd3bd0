import { describe, expect, it } from "vitest";
import { parseJsonDeliverable } from "../formats/adapters/itbench-files.js";
import { extractJson } from "../judge/response.js";
import { repairJson } from "./json.js";

const answer = { summary: "s", taskSuccess: false, modes: { "1.3": { present: true } } };
// What models write around JSON, each with the repairs it needs.
const CASES: [string, string, string[]][] = [
  ["clean", JSON.stringify(answer), []],
  ["fenced", "Here you go:\n```json\n" + JSON.stringify(answer, null, 1) + "\n```\nDone.", ["removed markdown code fences"]],
  ["a string holding JSON", JSON.stringify(JSON.stringify(answer)), ["the JSON document was a string holding JSON"]],
  ["prose around it", `My verdict is ${JSON.stringify(answer)} as requested.`, ["dropped text around the JSON value"]],
  ["bracketed prose before the object", `[step 3] is where it failed: ${JSON.stringify(answer)}`, ["dropped text around the JSON value"]],
  ["trailing commas", '{"summary": "s", "modes": {"1.3": {"present": true,},},}', ["removed 3 trailing comma(s)"]],
  ["missing commas between lines", '{\n "summary": "s"\n "modes": {}\n}', ["added missing commas between values"]],
];

describe("repairJson: the one lenient JSON repairer (judge answers and ITBench deliverables)", () => {
  it.each(CASES)("%s", (_name, text, repairs) => {
    const r = repairJson(text);
    expect(r.ok).toBe(true);
    expect(r.repairs).toEqual(repairs);
  });

  it("fails with what went wrong first, for text with no JSON in it", () => {
    expect(repairJson("I think 1.3 is present.")).toMatchObject({ ok: false, error: expect.stringMatching(/^not valid JSON even after repairs \(Unexpected token/) });
    expect(repairJson("  ")).toMatchObject({ ok: false, error: "the text is empty" });
  });

  it("both callers read the same text the same way (the judge used to refuse trailing commas and missing commas)", () => {
    for (const [name, text] of CASES) {
      const judged = extractJson(text);
      const delivered = parseJsonDeliverable(text);
      expect(judged.ok, name).toBe(true);
      expect(judged.ok && judged.value, name).toEqual(delivered.value);
      expect(delivered.repairs, name).toEqual(repairJson(text).repairs);
    }
  });

  it("keeps the trace reader's leniency on each attempt when given its parser (deliverables: bare NaN)", () => {
    expect(parseJsonDeliverable('```json\n{"score": NaN,}\n```')).toEqual({
      value: { score: null },
      repairs: ["removed markdown code fences", "removed 1 trailing comma(s)", "replaced 1 bare NaN/Infinity value(s) with null"],
    });
  });
});
