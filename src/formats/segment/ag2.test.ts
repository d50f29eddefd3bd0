import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { segmentAG2 } from "./ag2.js";

const human = JSON.parse(readFileSync(corpus("mast", "mad_human_sample.json"), "utf8")) as Array<{ trace_id: number; trace: string }>;
const traceOf = (id: number) => human.find((r) => r.trace_id === id)!.trace;

describe("AG2 splitter", () => {
  it("splits MAD human record 7 (JSON trajectory): agent = name, proxy speaks as user, outcome from other_data", () => {
    const seg = segmentAG2(traceOf(7))!;
    expect(seg.steps.map((s) => [s.agent, s.role])).toEqual([
      ["mathproxyagent", "user"],
      ["assistant", "assistant"],
      ["mathproxyagent", "user"],
      ["assistant", "assistant"],
    ]);
    // the proxy ran the assistant's code and returned its output
    expect(seg.steps[2]!.text).toBe("29.0");
    expect(seg.steps[3]!.text).toBe("Great! So, the final answer is:\n\\boxed{29}. \n\nMiss Maria has 29 students.");
    expect(seg.outcome).toMatchObject({ success: false, metric: "other_data.correct" });
    expect(seg.task).toMatchObject({ id: "6891537b-54d7-5f49-b9e4-790b5e6a5de6" });
    expect(seg.task?.text).toMatch(/^Miss Maria is a middle school teacher/);
  });

  it("splits MAD human record 2 into its 10 turns and keeps the annotators' note", () => {
    const seg = segmentAG2(traceOf(2))!;
    expect(seg.steps).toHaveLength(10);
    expect(seg.steps.filter((s) => s.agent === "mathproxyagent").slice(1).every((s) => s.text!.startsWith("Continue. Please keep solving"))).toBe(true);
    expect(seg.outcome?.success).toBe(true);
    expect((seg.metadata.ag2Note as { text: string[] }).text[0]).toMatch(/keeps asking to continue/);
  });

  it("reads the YAML-like flattening as triplets, strict YAML, and Python reprs", () => {
    const flattened = [
      "problem_statement:",
      "  - What is 2 + 2?",
      "trajectory:",
      "content:",
      "    Let's use Python to solve a math problem.",
      "    Problem: What is 2 + 2?",
      "role: assistant",
      "name: mathproxyagent",
      "",
      "content:",
      "    The answer is \\boxed{4}.",
      "role: user",
      "name: assistant",
    ].join("\n");
    const seg = segmentAG2(flattened)!;
    expect(seg.steps.map((s) => [s.agent, s.role, s.text, s.ref?.line])).toEqual([
      ["mathproxyagent", "user", "Let's use Python to solve a math problem.\nProblem: What is 2 + 2?", 4],
      ["assistant", "assistant", "The answer is \\boxed{4}.", 10],
    ]);
    expect(seg.task?.text).toBe("What is 2 + 2?");

    const yaml = "trajectory:\n  - content:\n      - line one\n      - line two\n    role: assistant\n    name: user_proxy\n";
    expect(segmentAG2(yaml)!.steps).toEqual([{ agent: "user_proxy", role: "user", kind: "message", text: "line one\nline two", ref: { pointer: "/trajectory/0" } }]);

    const repr = "{'trajectory': [{'content': ['hi'], 'role': 'user', 'name': 'coder'}], 'other_data': {'correct': True}}";
    expect(segmentAG2(repr)).toMatchObject({ steps: [{ agent: "coder", role: "assistant", text: "hi" }], outcome: { success: true } });
    expect(segmentAG2("no trajectory here")).toBeUndefined();
  });
});
