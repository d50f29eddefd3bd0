import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { clipMiddle, clipStepToTokens, ELISION_RE, estimateTokens, renderStep, renderTrace } from "./render.js";

const trace = () =>
  buildTrace({ id: "t1", source: { file: "mem", format: "test", index: 0 }, task: { text: "Fix the parser." } }, [
    { agent: "user", role: "user", kind: "message", text: "Please fix the parser." },
    { agent: "coder", role: "assistant", kind: "tool_call", text: "Running the tests.", tool: { name: "bash", callId: "c1", args: { command: "pytest -q" } } },
    { agent: "env", role: "tool", kind: "tool_result", text: "2 failed", tool: { name: "bash", callId: "c1", output: "2 failed", exitCode: 1, isError: true } },
    { agent: "coder", role: "assistant", kind: "message", text: "x".repeat(10_000), tags: ["harness-retry"] },
  ]);

describe("renderTrace", () => {
  it("numbers steps with their canonical index and shows agent, role, kind, tool, args and exit code", () => {
    const r = renderTrace(trace());
    expect(r.steps.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(r.steps[1]!.block).toBe(
      '[step 1] agent=coder role=assistant kind=tool_call\ntool: bash\nargs: {"command":"pytest -q"}\nRunning the tests.',
    );
    // A tool result whose text repeats its output shows it once, with the status.
    expect(r.steps[2]!.body).toBe("tool: bash\nstatus: exit code 1, error\noutput:\n2 failed");
    expect(r.steps[3]!.body.startsWith("tags: harness-retry\n")).toBe(true);
    expect(r.preamble).toBe("Task: Fix the parser.\nAgents: user, coder, env\nSteps: 4 (numbered from 0)");
  });

  it("clips long fields in the middle with an explicit marker and records every clip", () => {
    const r = renderTrace(trace(), { maxFieldChars: 1000 });
    const body = r.steps[3]!.body;
    const marker = ELISION_RE.exec(body)?.[0];
    expect(marker).toBeDefined();
    const elided = Number(/\d+/.exec(marker!)![0]);
    expect(r.elisions).toEqual([{ step: 3, field: "text", chars: elided }]);
    // Kept + elided = original length, and the field stays within its limit.
    const kept = body.replace("tags: harness-retry\n", "").replace(marker!, "").replace(/\n/g, "").length;
    expect(kept + elided).toBe(10_000);
    expect(body.length - "tags: harness-retry\n".length).toBeLessThanOrEqual(1000);
  });

  it("does not clip fields within the limit", () => {
    expect(clipMiddle("short", 10)).toEqual({ text: "short", elided: 0 });
    expect(renderTrace(trace(), { maxFieldChars: 20_000 }).elisions).toEqual([]);
  });
});

describe("clipStepToTokens", () => {
  it("shrinks an oversize step below the token limit and records the forced elision", () => {
    const step = renderStep(trace().steps[3]!, { maxFieldChars: 20_000 });
    expect(step.tokens).toBeGreaterThan(200);
    const c = clipStepToTokens(step, 200);
    expect(c.step.tokens).toBeLessThanOrEqual(200);
    expect(c.elided).toBeGreaterThan(0);
    expect(c.step.elisions.at(-1)).toEqual({ step: 3, field: "step", chars: c.elided });
    expect(c.step.header).toBe(step.header);
  });
});

describe("estimateTokens", () => {
  it("matches BPE counts on short known strings", () => {
    // o200k/cl100k give 4 and 10 tokens for these.
    expect(estimateTokens("Hello, world!")).toBe(4);
    expect(estimateTokens("The quick brown fox jumps over the lazy dog.")).toBe(10);
    expect(estimateTokens("")).toBe(0);
  });

  it("grows with the text and counts digits in groups of three", () => {
    expect(estimateTokens("123456789")).toBe(3);
    expect(estimateTokens("word ".repeat(100))).toBeGreaterThan(estimateTokens("word ".repeat(10)) * 9);
  });
});
