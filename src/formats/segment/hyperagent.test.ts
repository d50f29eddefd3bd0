import { describe, expect, it } from "vitest";
import { mastExample } from "../../testing/corpus.js";
import { segmentHyperAgent } from "./hyperagent.js";


describe("HyperAgent splitter", () => {
  it("splits the HyperAgent excerpts of MAST's few-shot examples: repeated Navigator turns stay separate steps", () => {
    const seg = segmentHyperAgent(mastExample("Step repetition", 0))!;
    expect(seg.segmentation).toBe("framework");
    expect(seg.task?.id).toBe("astropy__astropy-12907");
    const navigator = seg.steps.filter((s) => s.agent === "Navigator");
    expect(navigator).toHaveLength(3);
    expect(new Set(navigator.map((s) => s.text)).size).toBe(1);
    expect(navigator[0]!.text).toMatch(/^Inner-Navigator-Assistant's Response: Thought: The `_separable` function/);

    const handoffs = segmentHyperAgent(mastExample("Step repetition", 1))!.steps.filter((s) => s.kind === "handoff");
    expect(handoffs.map((s) => s.agent)).toEqual(["Navigator", "Navigator", "Navigator"]);
  });

  it("marks boot lines as events and the Planner as an agent (the Conversation Reset example)", () => {
    const seg = segmentHyperAgent(mastExample("Conversation Reset"))!;
    const kinds = seg.steps.map((s) => `${s.agent}:${s.kind}`);
    expect(kinds.filter((k) => k === "system:event")).toHaveLength(6);
    expect(kinds.filter((k) => k === "Planner:message")).toHaveLength(2);
  });

  it("reads the JSON form (one log line per trajectory item) and the tool calls in Action blocks", () => {
    const inst = "scikit-learn__scikit-learn-25570";
    const hdr = (m: string) => `HyperAgent_${inst} - INFO - ${m}`;
    const doc = {
      instance_id: inst,
      problem_statement: ["ColumnTransformer fails with no features"],
      trajectory: [
        hdr("Initialized tools"),
        hdr("Planner's Response: Thought: I need to locate the ColumnTransformer."),
        "Intern Name: Codebase Navigator",
        "Subgoal: find the class",
        hdr("Inner-Navigator-Assistant's Response: Thought: Searching."),
        "Action:",
        "```python",
        'result = code_search._run(names=["ColumnTransformer"])',
        "```",
        hdr("Navigator->Planner: The class lives in compose/_column_transformer.py."),
      ],
    };
    const seg = segmentHyperAgent(JSON.stringify(doc))!;
    expect(seg.task).toEqual({ id: inst, text: "ColumnTransformer fails with no features" });
    expect(seg.steps.map((s) => [s.agent, s.kind, s.ref?.pointer])).toEqual([
      ["system", "event", "/trajectory/0"],
      ["Planner", "message", "/trajectory/1"],
      ["Navigator", "message", "/trajectory/4"],
      ["Navigator", "tool_call", "/trajectory/4"],
      ["Navigator", "handoff", "/trajectory/9"],
    ]);
    expect(seg.steps[1]!.text).toContain("Intern Name: Codebase Navigator\nSubgoal: find the class");
    expect(seg.steps[3]!.tool).toEqual({ name: "code_search", args: 'names=["ColumnTransformer"]' });
    expect(segmentHyperAgent("Planner: hello")).toBeUndefined();
  });
});
