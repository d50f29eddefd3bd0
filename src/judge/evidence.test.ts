import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { EvidenceIndex, quotePieces, verifyClaim } from "./evidence.js";
import { renderTrace } from "./render.js";

const index = () =>
  new EvidenceIndex(
    renderTrace(
      buildTrace({ id: "e", source: { file: "mem", format: "test", index: 0 } }, [
        { agent: "coder", role: "assistant", kind: "message", text: "I will run the   test suite\nnow and then submit." },
        { agent: "coder", role: "assistant", kind: "tool_call", tool: { name: "submit", args: { answer: "42" } } },
        { agent: "env", role: "tool", kind: "tool_result", tool: { name: "pytest", output: "FAILED tests/test_x.py::test_y - AssertionError", exitCode: 1 } },
        { agent: "coder", role: "assistant", kind: "message", text: "A".repeat(50) },
      ]),
      { maxFieldChars: 48 },
    ).steps,
  );

const claim = (steps: number[], evidence: string[]) => ({ mode: "2.6", steps, evidence, confidence: 0.8 });

describe("verifyClaim", () => {
  it("accepts a quote found in a cited step, with whitespace normalised", () => {
    const c = verifyClaim(claim([0, 1], ["I will run the test suite now"]), index());
    expect(c.accepted).toBe(true);
    expect(c.verified).toEqual([{ quote: "I will run the test suite now", step: 0 }]);
    expect(c.rejected).toEqual([]);
  });

  it("accepts an ellipsis inside a quote when the pieces occur in order", () => {
    expect(verifyClaim(claim([0], ["I will run ... and then submit"]), index()).accepted).toBe(true);
    expect(verifyClaim(claim([0], ["and then submit … I will run"]), index()).accepted).toBe(false);
    expect(quotePieces(' "run the…submit" ')).toEqual(["run the", "submit"]);
  });

  it("rejects a fabricated quote and a claim with no evidence, saying why", () => {
    const fab = verifyClaim(claim([2], ["all tests passed"]), index());
    expect(fab.accepted).toBe(false);
    expect(fab.rejected).toEqual([{ quote: "all tests passed", reason: "quote does not occur in the trace" }]);
    expect(fab.reason).toBe("no quote was found in the cited steps");
    const none = verifyClaim(claim([2], []), index());
    expect(none).toMatchObject({ accepted: false, reason: "no evidence quoted" });
  });

  it("rejects a real quote cited from the wrong step and names where it is", () => {
    const c = verifyClaim(claim([1], ["AssertionError"]), index());
    expect(c.accepted).toBe(false);
    expect(c.rejected[0]!.reason).toBe("quote is not in the cited steps [1] (it occurs in step 2)");
  });

  it("keeps verified quotes of a partly fabricated claim and counts the rest", () => {
    const c = verifyClaim(claim([2, 99], ["exit code 1", "exit code 0"]), index());
    expect(c.accepted).toBe(true);
    expect(c.verified).toEqual([{ quote: "exit code 1", step: 2 }]);
    expect(c.rejected).toHaveLength(1);
    expect(c.unknownSteps).toEqual([99]);
  });

  it("rejects quotes that are too short or span an elision marker", () => {
    expect(verifyClaim(claim([0], ["I"]), index()).rejected[0]!.reason).toMatch(/too short/);
    const body = index();
    // Step 3 was clipped; a quote across its marker matches the prompt text but not the trace.
    const shown = /A+\n\[… \d+ chars elided …\]\nA+/.exec(renderTrace(buildTrace({ id: "x", source: { file: "m", format: "t", index: 0 } }, [{ agent: "a", role: "assistant", kind: "message", text: "A".repeat(50) }]), { maxFieldChars: 48 }).steps[0]!.body)![0];
    const c = verifyClaim(claim([3], [shown]), body);
    expect(c.accepted).toBe(false);
    expect(c.rejected[0]!.reason).toBe("quote spans text that was elided from the prompt");
  });

  it("reports cited steps that do not exist", () => {
    const c = verifyClaim(claim([42], ["I will run"]), index());
    expect(c).toMatchObject({ accepted: false, unknownSteps: [42], reason: "no cited step exists in the trace (cited: [42])" });
  });
});
