import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { segmentMetaGPT } from "./metagpt.js";

const human = JSON.parse(readFileSync(corpus("mast", "mad_human_sample.json"), "utf8")) as Array<{ trace_id: number; trace: string }>;
const traceOf = (id: number) => human.find((r) => r.trace_id === id)!.trace;

describe("MetaGPT splitter", () => {
  it("splits the communication log of MAD human record 16 into FROM and NEW MESSAGES turns", () => {
    const seg = segmentMetaGPT(traceOf(16))!;
    expect(seg.segmentation).toBe("framework");
    const turns = seg.steps.filter((s) => s.kind === "message");
    expect(turns.map((s) => s.agent)).toEqual(["Human", "SimpleCoder", "SimpleTester", "SimpleReviewer", "SimpleTester", "SimpleReviewer"]);
    expect(turns[0]).toMatchObject({ role: "user", time: "2025-03-27T01:21:03" });
    expect(turns[0]!.text).toMatch(/^ACTION: metagpt\.actions\.add_requirement\.UserRequirement\nCONTENT:\nThe following are multiple choice questions/);
    expect(seg.task?.text).toMatch(/^The following are multiple choice questions/);
    expect(turns[1]!.text).toMatch(/^def find_answer\(\):/);
    expect(turns[1]!.text).not.toContain("-----");
    expect(seg.steps.at(-1)).toMatchObject({ kind: "termination", text: "=== Communication Log Ended at 2025-03-27 01:21:47 ===" });
  });

  it("splits the loguru log inside the JSON wrapper of MAD human record 4; agent = the role's profile", () => {
    const seg = segmentMetaGPT(traceOf(4))!;
    expect(seg.task?.text).toBe("develop a program that detects palindromes in a text file");
    expect(seg.metadata).toMatchObject({ runId: 21, cost: 0.039 });
    expect(seg.steps.map((s) => s.agent)).toEqual(["SimpleCoder", "SimpleTester", "SimpleReviewer", "SimpleTester", "SimpleReviewer"]);
    expect(seg.steps[0]!.text).toMatch(/^Alice\(SimpleCoder\): to do SimpleWriteCode\(SimpleWriteCode\)\n```python\ndef detect_palindromes/);
    expect(seg.steps[0]).toMatchObject({ time: "2025-01-17T11:40:27.872", ref: { pointer: "/content#L1" } });
    // the reviewer wrote nothing but its action line
    expect(seg.steps[2]!.text).toBe("Charlie(SimpleReviewer): to do SimpleWriteReview(SimpleWriteReview)");
  });

  it("keeps two messages of one NEW MESSAGES block apart, and refuses text that is not MetaGPT", () => {
    const text = [
      "=== MetaGPT Agent Communication Log - Started at 2025-01-01 00:00:00 ===",
      "[2025-01-01 00:00:01] NEW MESSAGES:",
      "",
      "Alice: first",
      "--------------------------------------------------------------------------------",
      "Bob: second",
      "line two",
      "--------------------------------------------------------------------------------",
    ].join("\n");
    const seg = segmentMetaGPT(text)!;
    expect(seg.steps.filter((s) => s.kind === "message").map((s) => [s.agent, s.text, s.ref?.line])).toEqual([
      ["Alice", "first", 4],
      ["Bob", "second\nline two", 6],
    ]);
    expect(segmentMetaGPT("hello\nworld")).toBeUndefined();
    expect(segmentMetaGPT('{"content": "not a log"}')).toBeUndefined();
  });
});
