import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-langfuse-"));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

describe("langfuse on the corpus (langfuse-export)", () => {
  it("reads the 3 traces of the MANIFEST", async () => {
    const { traces, files, diagnostics } = await readAll(corpus("langfuse-export"));
    expect(traces).toHaveLength(3);
    expect(files.filter((f) => f.format === "langfuse")).toHaveLength(3);
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    expect(traces.every((t) => t.model === "gpt-5")).toBe(true);
  });

  it("orders observations by the parent tree and start time, and links the tool call from the ingested attributes", async () => {
    const path = corpus("langfuse-export", "langfuse-3.json");
    const raw = JSON.parse(readFileSync(path, "utf8")) as { trace: { id: string; scores: { name: string; value: number }[] } };
    const { traces } = await readAll(path);
    const t = traces[0]!;
    expect(t.id).toBe(raw.trace.id);
    expect(t.task?.text).toBe("what is a dataset");
    expect(t.agents).toContain("QA-Chatbot");
    expect(t.steps.map((s) => s.kind)).toEqual(["message", "message", "message", "llm_call", "tool_call", "tool_result", "llm_call", "message"]);
    const call = t.steps[4]!;
    expect(call.tool).toMatchObject({ name: "searchLangfuseDocs", callId: "call_Wgy5Y139OQnSh7grDUUE0iil", resultIndex: 5 });
    expect(call.span?.spanId).toBe("a44bd80c743afa87"); // the first doStream generation
    expect(t.steps[5]!.span).toEqual({ traceId: raw.trace.id, spanId: "9a6a16a257c88b0a", parentSpanId: "31ccdfbd9381c993" });
    expect(t.steps[3]!.usage).toEqual({ input: 1115, output: 44, cachedInput: 0, reasoning: 0 });
    expect(t.steps.at(-1)!.text).toMatch(/^# What is a dataset in Langfuse\?/);
    expect(t.steps.at(-1)!.span?.spanId).toBe("31ccdfbd9381c993"); // the ai.streamText wrapper holds the answer text
  });

  it("takes helpfulness as the score and keeps every score in raw, without inventing success", async () => {
    const path = corpus("langfuse-export", "langfuse-3.json");
    const raw = JSON.parse(readFileSync(path, "utf8")) as { trace: { scores: { name: string; value: number; source: string }[] } };
    const { traces } = await readAll(path);
    const o = traces[0]!.outcome!;
    expect(o.score).toBe(raw.trace.scores.find((s) => s.name === "helpfulness")!.value);
    expect(o.score).toBe(0.2);
    expect(o.metric).toBe("langfuse:helpfulness");
    expect(o.success).toBeUndefined();
    const scores = (o.raw as { scores: { name: string; value: number; source: string }[] }).scores;
    expect(scores.map((s) => s.name)).toEqual(raw.trace.scores.map((s) => s.name));
    expect(scores.find((s) => s.name === "user-feedback")).toMatchObject({ value: 1, source: "API" });
  });

  it("keeps the streamed text of a tool-calling generation together with its tool call (langfuse-2)", async () => {
    const { traces } = await readAll(corpus("langfuse-export", "langfuse-2.json"));
    const t = traces[0]!;
    const i = t.steps.findIndex((s) => s.kind === "tool_call");
    expect(t.steps[i - 1]!.text).toMatch(/^I’ll look up the Langfuse docs/);
    expect(t.steps[i]!.tool?.callId).toBe(t.steps[i + 1]!.tool?.callId);
    expect(t.outcome?.score).toBe(0);
  });
});

describe("langfuse on synthetic input", () => {
  it("reads a JSON array of exports with AGENT/EVENT observations and an ERROR level, and reports a bad record", async () => {
    const exportOf = (id: string, observations: unknown[]) => ({ trace: { id, name: "bot", input: "hi", scores: [] }, observations });
    const p = file(
      "exports.json",
      JSON.stringify(
        [
          exportOf("tr-1", [
            { id: "o3", type: "TOOL", name: "lookup", parentObservationId: "o1", startTime: "2025-01-01T00:00:02Z", input: { q: "x" }, output: "nothing", level: "ERROR", statusMessage: "lookup failed" },
            { id: "o1", type: "AGENT", name: "planner", startTime: "2025-01-01T00:00:00Z" },
            { id: "o2", type: "GENERATION", name: "chat", parentObservationId: "o1", startTime: "2025-01-01T00:00:01Z", model: "openai/gpt-4o", input: [{ role: "user", content: "hi" }], output: { role: "assistant", content: "checking" }, usage: { input: 5, output: 2 } },
            { id: "o4", type: "EVENT", name: "user-feedback", parentObservationId: "o1", startTime: "2025-01-01T00:00:03Z", output: "thumbs down" },
          ]),
          { trace: { id: "broken" } },
        ],
        null,
        1,
      ),
    );
    const { traces, diagnostics } = await readAll(p);
    expect(traces).toHaveLength(1);
    const t = traces[0]!;
    expect(t.model).toBe("gpt-4o");
    expect(t.metadata.modelRaw).toBe("openai/gpt-4o");
    expect(t.outcome).toBeUndefined();
    expect(t.steps.map((s) => [s.kind, s.agent, s.span?.spanId])).toEqual([
      ["message", "user", "o2"],
      ["llm_call", "planner", "o2"],
      ["message", "planner", "o2"],
      ["tool_call", "planner", "o3"],
      ["tool_result", "planner", "o3"],
      ["error", "planner", "o3"],
      ["event", "planner", "o4"],
    ]);
    expect(t.steps[5]!.text).toBe("lookup failed");
    expect(t.steps[6]!.text).toBe("user-feedback: thumbs down");
    expect(t.steps[1]!.ref).toEqual({ line: expect.any(Number), pointer: "/0/observations/2" });
    const err = diagnostics.find((d) => d.level === "error");
    expect(err).toMatchObject({ file: p, skipped: "record" });
    expect(err!.line).toBeGreaterThan(1);
  });
});
