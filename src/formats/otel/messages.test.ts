import { describe, expect, it } from "vitest";
import { messagesFrom, messageFrom, toolCallFrom } from "./messages.js";
import { unflatten } from "./values.js";

describe("messagesFrom", () => {
  it("reads rebuilt OpenInference messages, multimodal contents and tool calls", () => {
    const attrs = {
      "llm.input_messages.0.message.role": "system",
      "llm.input_messages.0.message.contents.0.message_content.type": "text",
      "llm.input_messages.0.message.contents.0.message_content.text": "Be brief.",
      "llm.input_messages.1.message.role": "user",
      "llm.input_messages.1.message.contents.0.message_content.type": "image",
      "llm.input_messages.1.message.contents.1.message_content.type": "text",
      "llm.input_messages.1.message.contents.1.message_content.text": "What is this?",
      "llm.input_messages.2.message.role": "assistant",
      "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "lookup",
      "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"q":"cat"}',
      "llm.input_messages.3.message.role": "tool",
      "llm.input_messages.3.message.tool_call_id": "call_1",
      "llm.input_messages.3.message.content": "a cat",
    };
    const msgs = messagesFrom(unflatten(attrs, "llm.input_messages"));
    expect(msgs).toEqual([
      { role: "system", text: "Be brief.", toolCalls: [] },
      { role: "user", text: "[image]\nWhat is this?", toolCalls: [] },
      { role: "assistant", toolCalls: [{ id: "call_1", name: "lookup", args: { q: "cat" } }] },
      { role: "tool", text: "a cat", toolCallId: "call_1", toolCalls: [] },
    ]);
  });

  it("reads OTel GenAI parts (text, tool_call, tool_call_response, reasoning)", () => {
    const input = JSON.stringify([
      { role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] },
      { role: "assistant", parts: [{ type: "reasoning", content: "need a tool" }, { type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Paris" } }] },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "rainy" }] },
    ]);
    const [u, a, t] = messagesFrom(input);
    expect(u).toEqual({ role: "user", text: "Weather in Paris?", toolCalls: [] });
    expect(a).toEqual({ role: "assistant", reasoning: "need a tool", toolCalls: [{ id: "c1", name: "get_weather", args: { city: "Paris" } }] });
    expect(t).toEqual({ role: "tool", text: "rainy", toolCallId: "c1", toolCalls: [] });
  });

  it("reads Vercel AI SDK prompts: {system, messages} with tool-call / tool-result parts, and {prompt}", () => {
    const prompt = {
      system: "You help.",
      messages: [
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "t1", toolName: "search", input: { query: "x" } }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "t1", toolName: "search", output: { type: "text", value: "found" } }] },
      ],
    };
    expect(messagesFrom(JSON.stringify(prompt))).toEqual([
      { role: "system", text: "You help.", toolCalls: [] },
      { role: "assistant", toolCalls: [{ id: "t1", name: "search", args: { query: "x" } }] },
      { role: "tool", text: "found", toolCallId: "t1", toolCalls: [] },
    ]);
    expect(messagesFrom('{"prompt":"Write a haiku about programming."}')).toEqual([{ role: "user", text: "Write a haiku about programming.", toolCalls: [] }]);
  });

  it("reads OpenAI completions and plain text with the fallback role", () => {
    expect(messagesFrom({ choices: [{ message: { role: "assistant", content: "hi", tool_calls: [{ id: "x", function: { name: "f", arguments: "{}" } }] } }] })).toEqual([
      { role: "assistant", text: "hi", toolCalls: [{ id: "x", name: "f", args: {} }] },
    ]);
    expect(messagesFrom("done", "assistant")).toEqual([{ role: "assistant", text: "done", toolCalls: [] }]);
    expect(messagesFrom(null)).toEqual([]);
  });

  it("maps role aliases and rejects non-messages", () => {
    expect(messageFrom({ role: "human", content: "q" })?.role).toBe("user");
    expect(messageFrom({ role: "model", content: "a" })?.role).toBe("assistant");
    expect(messageFrom({ role: "developer", content: "s" })?.role).toBe("system");
    expect(messageFrom({ foo: 1 })).toBeUndefined();
    expect(toolCallFrom({ arguments: "{}" })).toBeUndefined();
  });
});
