import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-otelspans-"));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
};

describe("otel-spans on the Vercel AI SDK dump (otel-genai-vercel)", () => {
  it("reads 10 traces (one per trace id) and lists capture-results.json as supporting", async () => {
    const { traces, files, diagnostics } = await readAll(corpus("otel-genai-vercel"));
    expect(traces).toHaveLength(10);
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    expect(files.find((f) => f.path.endsWith("capture-results.json"))?.role).toBe("supporting");
    const raw = JSON.parse(readFileSync(corpus("otel-genai-vercel", "all-spans.json"), "utf8")) as { spanContext: { traceId: string; spanId: string } }[];
    expect(traces.map((t) => t.id)).toEqual(raw.map((s) => s.spanContext.traceId));
    expect(traces.every((t) => t.framework === "vercel-ai-sdk")).toBe(true);
  });

  it("maps doGenerate to an LLM call with the requested model, usage and answer", async () => {
    const { traces } = await readAll(corpus("otel-genai-vercel", "all-spans.json"));
    const t = traces.find((x) => x.id === "b3e700af9eab81e19f72f964d62a35af")!;
    expect(t.model).toBe("gpt-4o-mini");
    expect(t.metadata.models).toEqual(["gpt-4o-mini", "gpt-4o-mini-2024-07-18"]);
    expect(t.task?.text).toBe("Write a haiku about programming.");
    expect(t.steps.map((s) => s.kind)).toEqual(["message", "llm_call", "message"]);
    expect(t.steps[1]).toMatchObject({ agent: "test-generate-text", usage: { input: 14, output: 20 }, span: { spanId: "39d6e9b3ddec9996" }, time: "2026-02-03T15:19:52.242Z" });
    expect(t.steps[2]!.text).toMatch(/^Lines of code align,/);
    const embed = traces.find((x) => x.id === "045d21a7f69972edf509fe0ff911f3f5")!;
    expect(embed.model).toBe("text-embedding-3-small");
    expect(embed.steps).toMatchObject([{ kind: "event", tags: ["embedding"], usage: { input: 10 } }]);
    const multi = traces.find((x) => x.id === "edff2fc5854be6170e8cccccec0c82cf")!;
    expect(multi.steps.map((s) => `${s.role}:${s.kind}`)).toEqual(["system:message", "user:message", "assistant:message", "user:message", "assistant:llm_call", "assistant:message"]);
  });
});

describe("otel-spans on SMOLTRACE smolagents runs (smolagents-otel)", () => {
  it("reads 8 + 5 traces and lists the run files as supporting, with nothing refused", async () => {
    const { traces, files, diagnostics } = await readAll(corpus("smolagents-otel"));
    expect(traces).toHaveLength(13);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(files.filter((f) => f.role === "supporting").map((f) => f.path.split("/").pop()).sort()).toEqual(
      ["leaderboard_row.json", "leaderboard_row.json", "metadata.json", "metadata.json", "metrics.json", "metrics.json", "results.json", "results.json"],
    );
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
  });

  it("joins each trace to its results.json row: success (null stays unset), task id and prompt", async () => {
    const run = corpus("smolagents-otel", "test_results", "mistral_mistral-small-latest_tool_20251022_205434");
    const { traces } = await readAll(join(run, "traces.json"));
    const rows = JSON.parse(readFileSync(join(run, "results.json"), "utf8")) as Record<string, unknown>[];
    expect(traces).toHaveLength(rows.length);
    for (const row of rows) {
      const traceId = (JSON.parse(row.enhanced_trace_info as string) as { trace_id: string }).trace_id.slice(2);
      const t = traces.find((x) => x.id === traceId)!;
      expect(t.outcome?.success).toBe(row.success === null ? undefined : row.success);
      expect(t.task).toEqual({ id: row.test_id, text: row.prompt });
      expect(t.source.sidecars).toEqual([join(run, "results.json")]);
    }
    const weather = traces.find((t) => t.task?.id === "tool_weather_single")!;
    expect(weather.outcome?.success).toBe(false);
    expect(traces.find((t) => t.task?.id === "tool_time_single")!.outcome).toMatchObject({ raw: { success: null, tools_used: ["get_current_time"] } });
    expect(weather.model).toBe("mistral-small-latest");
    expect(weather.metadata.modelRaw).toBe("mistral/mistral-small-latest");
    expect(weather.framework).toBe("smolagents");
    // the tool span, its id padded back to 16 hex digits where Python's hex() dropped a leading zero
    const tool = weather.steps.find((s) => s.kind === "tool_call")!;
    expect(tool).toMatchObject({ agent: "ToolCallingAgent", tool: { name: "get_weather", args: { location: "Paris, France" } }, span: { spanId: "2990e63661e0805a" } });
    expect(weather.steps[tool.tool!.resultIndex!]!.text).toBe("20°C, Partly Cloudy");
    const errors = weather.steps.filter((s) => s.kind === "error");
    expect(errors.map((s) => s.span?.spanId)).toEqual(["07365973ca79f436", "912fb7e84e5776f5"]);
    expect(errors[0]!.text).toMatch(/^litellm\.exceptions\.RateLimitError: /);
  });

  it("reads the gpt-3.5 run, where every task failed on authentication", async () => {
    const run = corpus("smolagents-otel", "test_cost_debug", "gpt-3.5-turbo_tool_20251027_192408");
    const { traces } = await readAll(join(run, "traces.json"));
    expect(traces).toHaveLength(8);
    expect(traces.every((t) => t.outcome?.success === false && t.model === "gpt-3.5-turbo")).toBe(true);
    expect(traces[0]!.metadata.run_id).toBe("9bb7bf0a-6b14-42d7-bada-b4ae3b244648");
    expect(traces.every((t) => t.steps.some((s) => s.kind === "error" && s.text?.includes("AuthenticationError")))).toBe(true);
  });
});

describe("otel-spans on synthetic dumps", () => {
  it("reads OTel-Python to_json() spans (context, parent_id, ISO times) as JSONL", async () => {
    const span = (id: string, parent: string | null, name: string, start: string, attributes: Record<string, unknown>, status = { status_code: "UNSET" }) =>
      JSON.stringify({ name, context: { trace_id: "0x5b8efff798038103d269b633813fc60c", span_id: id, trace_state: "[]" }, kind: "SpanKind.INTERNAL", parent_id: parent, start_time: start, end_time: start, status, attributes, events: [], links: [], resource: { attributes: { "service.name": "crew" } } });
    const p = file(
      "py-spans.jsonl",
      [
        span("0x00000000000000b2", "0x00000000000000a1", "tool", "2024-05-01T10:00:02.000000Z", { "openinference.span.kind": "TOOL", "tool.name": "search", "output.value": "found it" }, { status_code: "ERROR" }),
        span("0x00000000000000a1", null, "Crew.kickoff", "2024-05-01T10:00:00.000000Z", { "openinference.span.kind": "AGENT", "agent.name": "researcher" }),
      ].join("\n"),
    );
    const { traces, files } = await readAll(p);
    expect(files[0]!.format).toBe("otel-spans");
    expect(traces[0]!.id).toBe("5b8efff798038103d269b633813fc60c");
    expect(traces[0]!.steps.map((s) => [s.kind, s.agent, s.span?.spanId, s.span?.parentSpanId])).toEqual([
      ["tool_call", "researcher", "00000000000000b2", "00000000000000a1"],
      ["tool_result", "researcher", "00000000000000b2", "00000000000000a1"],
      ["error", "researcher", "00000000000000b2", "00000000000000a1"],
    ]);
    expect(traces[0]!.steps[1]!.tool?.isError).toBe(true);
  });

  it("reports a record that is not a span, and a results.json row whose trace is missing", async () => {
    const good = { trace_id: "0xabc", spans: [{ trace_id: "0xabc", span_id: "0x1", parent_span_id: null, name: "completion", start_time: 1, end_time: 2, attributes: { "openinference.span.kind": "LLM", "llm.model_name": "m" }, events: [], status: { code: "OK" } }] };
    const bad = { trace_id: "0xdef", spans: [{ trace_id: "0xdef", name: "no span id", attributes: {} }] };
    const p = file("run/traces.json", JSON.stringify([good, bad], null, 1));
    file("run/results.json", JSON.stringify([{ test_id: "t1", success: true, trace_id: "0xabc" }, { test_id: "t2", success: false, trace_id: "0x999" }]));
    const { traces, diagnostics } = await readAll(p);
    expect(traces.map((t) => [t.id, t.outcome?.success, t.task?.id])).toEqual([["00000000000000000000000000000abc", true, "t1"]]);
    expect(diagnostics.find((d) => d.level === "error")).toMatchObject({ skipped: "record" });
    expect(diagnostics.find((d) => d.level === "error")!.message).toContain("/1/spans/0");
    expect(diagnostics.find((d) => d.level === "warning")).toMatchObject({ file: join(dir, "run", "results.json") });
    expect(diagnostics.find((d) => d.level === "warning")!.message).toContain("00000000000000000000000000000999");
  });
});
