import { describe, expect, it } from "vitest";
import { segmentPlain } from "./plain.js";

describe("plain-text fallback splitter", () => {
  it("splits on speaker separator lines (AutoGen / Magentic-One console output)", () => {
    const text = ["pip install noise", "---------- user ----------", "Find the paper.", "---------- WebSurfer ----------", "I typed 'paper' into the search box.", "", "More."].join("\n");
    const seg = segmentPlain(text);
    expect(seg).toMatchObject({ segmentation: "heuristic", splitter: "plain:separators", metadata: { segmentation: "heuristic" } });
    expect(seg.steps.map((s) => [s.agent, s.role, s.text, s.ref?.line])).toEqual([
      ["unknown", "user", "pip install noise", 1],
      ["user", "user", "Find the paper.", 2],
      ["WebSurfer", "assistant", "I typed 'paper' into the search box.\n\nMore.", 4],
    ]);
  });

  it("splits on speaker prefixes, but not on ordinary `Thought:` lines", () => {
    const text = ["user_proxy (to assistant):", "Solve x + 1 = 2.", "assistant (to user_proxy):", "Thought: subtract 1.", "Answer: x = 1"].join("\n");
    const seg = segmentPlain(text);
    expect(seg.splitter).toBe("plain:speakers");
    expect(seg.steps.map((s) => [s.agent, s.text])).toEqual([
      ["user_proxy", "Solve x + 1 = 2."],
      ["assistant", "Thought: subtract 1.\nAnswer: x = 1"],
    ]);
  });

  it("falls back to timestamped log lines, then to blank-line blocks", () => {
    const log = "2025-03-01 10:00:00.1 | INFO | app.agent.toolcall:think:81 - Manus's thoughts: look\n  detail\n2025-03-01 10:00:02.5 | INFO | app.tool - done";
    expect(segmentPlain(log).steps.map((s) => s.text)).toEqual([
      "2025-03-01 10:00:00.1 | INFO | app.agent.toolcall:think:81 - Manus's thoughts: look\n  detail",
      "2025-03-01 10:00:02.5 | INFO | app.tool - done",
    ]);
    const seg = segmentPlain("first block\nstill first\n\n\nsecond block");
    expect(seg.splitter).toBe("plain:blocks");
    expect(seg.steps.map((s) => [s.text, s.ref?.line])).toEqual([
      ["first block\nstill first", 1],
      ["second block", 5],
    ]);
  });
});
