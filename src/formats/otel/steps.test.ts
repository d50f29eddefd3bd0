import { describe, expect, it } from "vitest";
import { buildTrace } from "../../trace/index.js";
import type { OtelSpan } from "./span.js";
import { spansToSteps } from "./steps.js";

const T = "0af7651916cd43dd8448eb211c80319c";
let n = 0;
/** A span with times in milliseconds from an arbitrary origin. */
function span(name: string, startMs: number, endMs: number, attributes: Record<string, unknown>, p: Partial<OtelSpan> = {}): OtelSpan {
  n++;
  return {
    traceId: T,
    spanId: p.spanId ?? n.toString(16).padStart(16, "0"),
    name,
    start: BigInt(1_700_000_000_000 + startMs) * 1_000_000n,
    end: BigInt(1_700_000_000_000 + endMs) * 1_000_000n,
    attributes,
    events: [],
    status: { code: 0 },
    ref: {},
    ...p,
  };
}
const chat = (output: unknown[], input: unknown[] = [], extra: Record<string, unknown> = {}) => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.request.model": "gpt-4o",
  "gen_ai.input.messages": JSON.stringify(input),
  "gen_ai.output.messages": JSON.stringify(output),
  ...extra,
});
const text = (role: string, content: string) => ({ role, parts: [{ type: "text", content }] });
const build = (spans: OtelSpan[], defaultAgent?: string) => {
  const m = spansToSteps(spans, { defaultAgent });
  return { m, t: buildTrace({ id: "x", source: { file: "f", format: "test", index: 0 } }, m.steps) };
};

describe("spansToSteps: order, pairing, ids", () => {
  it("walks the tree depth-first by start time, pairs tool spans with the calls the model made, and keeps span ids", () => {
    const root = span("invoke_agent planner", 0, 100, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" }, { spanId: "00000000000000aa" });
    const p = { parentSpanId: root.spanId };
    const tool = span("execute_tool search", 30, 40, { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.result": "3 hits" }, p);
    const first = span(
      "chat gpt-4o",
      10,
      20,
      chat([{ role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "search", arguments: { q: "otel" } }] }], [text("system", "Plan."), text("user", "Find OTel docs")]),
      p,
    );
    const second = span(
      "chat gpt-4o",
      50,
      60,
      chat([text("assistant", "Found them.")], [text("system", "Plan."), text("user", "Find OTel docs"), text("user", "Observation:\n3 hits"), text("user", "Be brief.")]),
      p,
    );
    // file order differs from time order
    const { t, m } = build([tool, second, root, first]);
    expect(t.steps.map((s) => `${s.kind}:${s.role}:${s.text ?? ""}`)).toEqual([
      "message:system:Plan.",
      "message:user:Find OTel docs",
      "llm_call:assistant:chat gpt-4o (gpt-4o)",
      'tool_call:assistant:search({"q":"otel"})',
      "tool_result:tool:3 hits",
      "message:user:Be brief.", // new context is kept; the repeated prompt and the "Observation:" mirror are not
      "llm_call:assistant:chat gpt-4o (gpt-4o)",
      "message:assistant:Found them.",
    ]);
    expect(t.steps.every((s) => s.span?.traceId === T && s.span.spanId)).toBe(true);
    const call = t.steps[3]!;
    const result = t.steps[4]!;
    expect(call.span?.spanId).toBe(first.spanId);
    expect(result.span).toEqual({ traceId: T, spanId: tool.spanId, parentSpanId: root.spanId });
    expect(result.tool).toMatchObject({ name: "search", callId: "c1", callIndex: 3 });
    expect(call.tool?.resultIndex).toBe(4);
    expect(result.tool?.durationMs).toBe(10);
    expect(t.steps[2]!.time).toBe("2023-11-14T22:13:20.010Z");
    expect(m.taskText).toBe("Find OTel docs");
    expect(m.model).toBe("gpt-4o");
  });

  it("gives an unmatched tool span its own call, with the span id as call id", () => {
    const tool = span("WeatherTool", 0, 1, { "openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": '{"city":"Rome"}', "output.value": "sunny" });
    const { t } = build([tool], "agent-x");
    expect(t.steps.map((s) => [s.kind, s.tool?.name, s.tool?.callId, s.agent])).toEqual([
      ["tool_call", "get_weather", tool.spanId, "agent-x"],
      ["tool_result", "get_weather", tool.spanId, "agent-x"],
    ]);
    expect(t.steps[0]!.tool?.args).toEqual({ city: "Rome" });
  });
});

describe("spansToSteps: agent attribution (gen_ai.agent.name > agent.name / graph.node.name > enclosing AGENT > default)", () => {
  it("applies the documented priority", () => {
    const outer = span("Supervisor.run", 0, 100, { "openinference.span.kind": "AGENT" });
    const inner = span("invoke_agent researcher", 10, 90, { "gen_ai.operation.name": "invoke_agent" }, { parentSpanId: outer.spanId });
    const own = span("chat", 20, 30, chat([text("assistant", "a")], [], { "gen_ai.agent.name": "critic", "agent.name": "ignored" }), { parentSpanId: inner.spanId });
    const node = span("chat", 31, 40, chat([text("assistant", "b")], [], { "graph.node.name": "router" }), { parentSpanId: inner.spanId });
    const byAncestor = span("chat", 41, 50, chat([text("assistant", "c")]), { parentSpanId: inner.spanId });
    const byOuter = span("chat", 91, 95, chat([text("assistant", "d")]), { parentSpanId: outer.spanId });
    const orphan = span("chat", 200, 210, chat([text("assistant", "e")]));
    const { t } = build([outer, inner, own, node, byAncestor, byOuter, orphan], "fallback");
    const agentOf = (txt: string) => t.steps.find((s) => s.kind === "message" && s.text === txt)?.agent;
    expect(["a", "b", "c", "d", "e"].map(agentOf)).toEqual(["critic", "router", "researcher", "Supervisor", "fallback"]);
  });

  it("falls back to the first AGENT span's name when the adapter gives none", () => {
    const agent = span("ToolCallingAgent.run", 0, 0, { "openinference.span.kind": "AGENT" });
    const llm = span("completion", 0, 5, { "openinference.span.kind": "LLM", "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "ok" });
    expect(build([agent, llm]).t.steps.map((s) => s.agent)).toEqual(["ToolCallingAgent", "ToolCallingAgent"]);
  });
});

describe("spansToSteps: errors", () => {
  it("turns status 2 and exception events into error steps, keeping a re-raised error once", () => {
    const agent = span("agent.run", 0, 50, { "openinference.span.kind": "AGENT" });
    const exc = (type: string, message: string) => ({ name: "exception", time: 1_700_000_000_040_000_000n, attributes: { "exception.type": type, "exception.message": message } });
    const llm = span("completion", 1, 40, { "openinference.span.kind": "LLM" }, { parentSpanId: agent.spanId, status: { code: 2, message: "RateLimitError" }, events: [exc("RateLimitError", "slow down")] });
    agent.events = [exc("RateLimitError", "slow down"), exc("AgentGenerationError", "Error while generating output")];
    agent.status = { code: 2, message: "AgentGenerationError" };
    const tool = span("t", 45, 49, { "openinference.span.kind": "TOOL", "tool.name": "calc" }, { parentSpanId: agent.spanId, status: { code: 2, message: "division by zero" } });
    const { t } = build([agent, llm, tool]);
    const errors = t.steps.filter((s) => s.kind === "error");
    expect(errors.map((s) => [s.text, s.span?.spanId, s.role])).toEqual([
      ["RateLimitError: slow down", llm.spanId, "assistant"],
      ["division by zero", tool.spanId, "tool"],
      ["AgentGenerationError: Error while generating output", agent.spanId, "assistant"],
    ]);
    expect(t.steps.find((s) => s.kind === "tool_result")?.tool?.isError).toBe(true);
  });
});

describe("spansToSteps: mirrors and wrappers", () => {
  it("merges a provider-level LLM span into the framework-level span of the same call", () => {
    const root = span("main", 0, 100, {});
    const agent = span("AgentExecutor", 1, 99, { "openinference.span.kind": "AGENT" }, { parentSpanId: root.spanId });
    const outer = span("ChatOpenAI", 10, 30, {
      "openinference.span.kind": "LLM",
      "llm.model_name": "gpt-4o",
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "tavily_search",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"query":"ai"}',
    }, { parentSpanId: agent.spanId, scope: "openinference.instrumentation.langchain" });
    // the OpenAI instrumentation lost the context and hangs off the root, inside the outer span's interval
    const inner = span("ChatCompletion", 11, 29, {
      "openinference.span.kind": "LLM",
      "llm.model_name": "gpt-4o-2024-08-06",
      "llm.token_count.prompt": "100",
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_kW83",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "tavily_search",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"query":"ai"}',
    }, { parentSpanId: root.spanId, scope: "openinference.instrumentation.openai" });
    const tool = span("tavily_search", 31, 40, { "openinference.span.kind": "TOOL", "tool.name": "tavily_search", "output.value": "results" }, { parentSpanId: agent.spanId });
    const { t, m } = build([root, agent, outer, inner, tool]);
    expect(t.steps.map((s) => s.kind)).toEqual(["llm_call", "tool_call", "tool_result"]);
    expect(t.steps[0]).toMatchObject({ span: { spanId: outer.spanId }, model: "gpt-4o", usage: { input: 100 }, agent: "AgentExecutor" });
    expect(t.steps[2]!.tool?.callId).toBe("call_kW83");
    expect(m.mirrors).toEqual([{ kept: outer.spanId, dropped: inner.spanId }]);
    expect(m.models.sort()).toEqual(["gpt-4o", "gpt-4o-2024-08-06"]);
    expect(m.framework).toBe("langchain");
  });

  it("treats an LLM span with LLM children as a wrapper that only adds output its children lack", () => {
    const wrap = span("ai.generateText", 0, 100, {
      "ai.operationId": "ai.generateText",
      "ai.model.id": "gpt-4o-mini",
      "ai.prompt": '{"prompt":"Weather in Rome?"}',
      "ai.response.text": "It is sunny in Rome.",
    });
    const p = { parentSpanId: wrap.spanId };
    const g1 = span("ai.generateText.doGenerate", 1, 20, {
      "ai.operationId": "ai.generateText.doGenerate",
      "ai.model.id": "gpt-4o-mini",
      "ai.prompt.messages": '[{"role":"user","content":[{"type":"text","text":"Weather in Rome?"}]}]',
      "ai.response.toolCalls": '[{"toolCallId":"t1","toolName":"weather","args":"{}"}]',
    }, p);
    const call = span("ai.toolCall", 21, 30, { "ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.id": "t1", "ai.toolCall.result": "sunny" }, p);
    const g2 = span("ai.generateText.doGenerate", 31, 99, { "ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini" }, p); // no text captured
    const { t } = build([wrap, g1, call, g2]);
    expect(t.steps.map((s) => `${s.kind}:${s.span?.spanId === wrap.spanId ? "wrap" : "child"}`)).toEqual([
      "message:child",
      "llm_call:child",
      "tool_call:child",
      "tool_result:child",
      "llm_call:child",
      "message:wrap",
    ]);
    expect(t.steps.at(-1)!.text).toBe("It is sunny in Rome.");
    expect(t.steps.filter((s) => s.kind === "message" && s.role === "user")).toHaveLength(1);
  });

  it("keeps a span id seen twice once and reports it", () => {
    const a = span("chat", 0, 1, chat([text("assistant", "x")]), { spanId: "1111111111111111" });
    const b = { ...a };
    const { m } = build([a, b]);
    expect(m.duplicateSpans).toEqual(["1111111111111111"]);
    expect(m.steps.filter((s) => s.kind === "llm_call")).toHaveLength(1);
  });
});
