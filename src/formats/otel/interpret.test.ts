import { describe, expect, it } from "vitest";
import { dialectOf, frameworkOfScope, interpretSpan } from "./interpret.js";
import type { OtelSpan } from "./span.js";

const span = (p: Partial<OtelSpan>): OtelSpan => ({ traceId: "t", spanId: "s", name: "x", attributes: {}, events: [], status: { code: 0 }, ref: {}, ...p });

describe("dialectOf", () => {
  it("follows the scope name first", () => {
    expect(dialectOf({ scope: "openinference.instrumentation.langchain", attributes: { "gen_ai.system": "openai" } })).toBe("openinference");
    expect(dialectOf({ scope: "opentelemetry.instrumentation.openai_v2", attributes: { "llm.model_name": "m" } })).toBe("genai");
    expect(dialectOf({ scope: "ai", attributes: { "gen_ai.system": "openai" } })).toBe("vercel");
  });
  it("falls back to attribute prefixes", () => {
    expect(dialectOf({ attributes: { "openinference.span.kind": "LLM" } })).toBe("openinference");
    expect(dialectOf({ attributes: { "ai.operationId": "ai.toolCall", "gen_ai.system": "x" } })).toBe("vercel");
    expect(dialectOf({ attributes: { "gen_ai.operation.name": "chat" } })).toBe("genai");
    expect(dialectOf({ attributes: { "traceloop.span.kind": "workflow" } })).toBe("genai");
    expect(dialectOf({ scope: "quotient.sdk.python", attributes: { "app.name": "x" } })).toBe("none");
  });
});

describe("interpretSpan", () => {
  it("reads GenAI current names: operation, agent, model, usage, JSON messages", () => {
    const v = interpretSpan(
      span({
        name: "chat gpt-4o",
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.agent.name": "planner",
          "gen_ai.request.model": "gpt-4o",
          "gen_ai.response.model": "gpt-4o-2024-08-06",
          "gen_ai.provider.name": "openai",
          "gen_ai.usage.input_tokens": 12,
          "gen_ai.usage.output_tokens": 3,
          "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Plan well." }]),
          "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Go" }] }]),
          "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "Done" }], finish_reason: "stop" }]),
        },
      }),
    );
    expect(v).toMatchObject({ category: "llm", agentName: "planner", model: "gpt-4o", responseModel: "gpt-4o-2024-08-06", provider: "openai", usage: { input: 12, output: 3 } });
    expect(v.input.map((m) => [m.role, m.text])).toEqual([["system", "Plan well."], ["user", "Go"]]);
    expect(v.output.map((m) => [m.role, m.text])).toEqual([["assistant", "Done"]]);
  });

  it("reads GenAI deprecated names: gen_ai.system, indexed prompt/completion, prompt_tokens/completion_tokens", () => {
    const v = interpretSpan(
      span({
        attributes: {
          "gen_ai.system": "openai",
          "gen_ai.request.model": "gpt-3.5-turbo",
          "gen_ai.prompt.0.role": "user",
          "gen_ai.prompt.0.content": "Add 2 and 3",
          "gen_ai.completion.0.role": "assistant",
          "gen_ai.completion.0.tool_calls.0.id": "call_9",
          "gen_ai.completion.0.tool_calls.0.name": "add",
          "gen_ai.completion.0.tool_calls.0.arguments": '{"a":2,"b":3}',
          "gen_ai.usage.prompt_tokens": 20,
          "gen_ai.usage.completion_tokens": 5,
        },
      }),
    );
    expect(v.category).toBe("llm");
    expect(v.provider).toBe("openai");
    expect(v.usage).toEqual({ input: 20, output: 5 });
    expect(v.input).toEqual([{ role: "user", text: "Add 2 and 3", toolCalls: [] }]);
    expect(v.output[0]!.toolCalls).toEqual([{ id: "call_9", name: "add", args: { a: 2, b: 3 } }]);
  });

  it("reads deprecated GenAI message events", () => {
    const v = interpretSpan(
      span({
        attributes: { "gen_ai.operation.name": "chat" },
        events: [
          { name: "gen_ai.user.message", attributes: { content: "hello" } },
          { name: "gen_ai.choice", attributes: { message: JSON.stringify({ content: "hi there" }), finish_reason: "stop" } },
        ],
      }),
    );
    expect(v.input).toEqual([{ role: "user", text: "hello", toolCalls: [] }]);
    expect(v.output).toEqual([{ role: "assistant", text: "hi there", toolCalls: [] }]);
  });

  it("reads execute_tool spans and OpenInference TOOL spans (smolagents kwargs unwrapped)", () => {
    const g = interpretSpan(span({ name: "execute_tool get_weather", attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": '{"city":"Oslo"}', "gen_ai.tool.call.result": "snow" } }));
    expect(g).toMatchObject({ category: "tool", tool: { name: "get_weather", callId: "c1", args: { city: "Oslo" }, output: "snow" } });
    const oi = interpretSpan(
      span({
        name: "WeatherTool",
        attributes: { "openinference.span.kind": "TOOL", "tool.name": "get_weather", "input.value": '{"args": [], "sanitize_inputs_outputs": true, "kwargs": {"location": "Paris, France"}}', "output.value": "20°C" },
      }),
    );
    expect(oi.tool).toEqual({ name: "get_weather", callId: undefined, args: { location: "Paris, France" }, output: "20°C" });
  });

  it("reads Vercel AI SDK spans: doGenerate as an LLM call, ai.toolCall as a tool", () => {
    const llm = interpretSpan(
      span({
        name: "ai.generateText.doGenerate",
        attributes: {
          "ai.operationId": "ai.generateText.doGenerate",
          "ai.model.id": "gpt-4o-mini",
          "gen_ai.request.model": "gpt-4o-mini",
          "ai.response.model": "gpt-4o-mini-2024-07-18",
          "ai.prompt.messages": '[{"role":"user","content":[{"type":"text","text":"Hi"}]}]',
          "ai.response.toolCalls": '[{"toolCallType":"function","toolCallId":"t1","toolName":"weather","args":"{\\"city\\":\\"Rome\\"}"}]',
          "ai.usage.promptTokens": 14,
          "ai.usage.completionTokens": 20,
          "ai.telemetry.functionId": "fn",
        },
      }),
    );
    expect(llm).toMatchObject({ category: "llm", model: "gpt-4o-mini", responseModel: "gpt-4o-mini-2024-07-18", usage: { input: 14, output: 20 }, fallbackAgent: "fn", framework: "vercel-ai-sdk" });
    expect(llm.output[0]!.toolCalls).toEqual([{ id: "t1", name: "weather", args: { city: "Rome" } }]);
    const tool = interpretSpan(span({ name: "ai.toolCall", attributes: { "ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.id": "t1", "ai.toolCall.result": '{"t":20}' } }));
    expect(tool.tool).toMatchObject({ name: "weather", callId: "t1", output: '{"t":20}' });
  });

  it("names frameworks from scopes", () => {
    expect(frameworkOfScope("openinference.instrumentation.langchain")).toBe("langchain");
    expect(frameworkOfScope("openinference.instrumentation.openai")).toBeUndefined(); // a provider, not an agent framework
    expect(frameworkOfScope("strands.telemetry.tracer")).toBe("strands");
  });
});
