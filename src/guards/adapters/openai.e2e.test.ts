import OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { afterEach, describe, expect, it } from "vitest";
import { startMockOpenAI, type MockReply, type MockServer } from "../../judge/testing/mock-openai-server.js";
import { guardSetFromConfig, type GuardConfig } from "../config.js";
import { ManualClock } from "../types.js";
import { OpenAIGuard, runGuardedChatLoop, type ChatAssistantMessage, type ChatMessage, type ChatToolCall } from "./openai.js";

/*
 * The OpenAI adapter end to end: a real HTTP server speaking chat completions (src/judge/testing/mock-openai-server.ts)
 * plays a scripted model that misbehaves, the official `openai` SDK talks to it, and the guards sit in the tool loop.
 * What the model is told (injected messages, refused tool calls) is read back from the requests the server received.
 */

const tools: ChatCompletionTool[] = [
  { type: "function", function: { name: "get_alerts", description: "Firing alerts as JSON {firing, alerts}", parameters: { type: "object", properties: { service: { type: "string" } } } } },
  { type: "function", function: { name: "restart_deployment", description: "Restart a deployment", parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } },
];

const calls = (name: string, args: Record<string, unknown>): MockReply => ({ kind: "answer", content: "", toolCalls: [{ name, arguments: args }] });
const says = (content: string): MockReply => ({ kind: "answer", content });

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs the guarded loop against the mock server with the real SDK; returns what ran and what the server saw. */
async function drive(script: MockReply[], config: GuardConfig, runTool: (c: ChatToolCall) => string) {
  server = await startMockOpenAI({ script });
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0 });
  const guard = new OpenAIGuard(guardSetFromConfig(config, { clock: new ManualClock() }));
  const executed: string[] = [];
  const messages: ChatMessage[] = [
    { role: "system", content: "You are an SRE agent." },
    { role: "user", content: "The cart service returns errors. Find the cause and fix it." },
  ];
  const result = await runGuardedChatLoop({
    guard,
    messages,
    complete: async (history) => {
      // the adapter's plain chat-completions objects are what the SDK sends and returns
      const r = await client.chat.completions.create({ model: "mock-sre", messages: history as ChatCompletionMessageParam[], tools });
      return { message: r.choices[0]!.message as ChatAssistantMessage, ...(r.usage ? { usage: r.usage } : {}) };
    },
    runTool: async (c) => {
      executed.push(c.function.name);
      return runTool(c);
    },
  });
  const sent = server.requests.map((r) => r.body.messages ?? []);
  return { result, guard, executed, messages, sent };
}

describe("OpenAI adapter against an OpenAI-compatible server, through the openai SDK", () => {
  it("warns about, then blocks, a tool call the model keeps repeating", async () => {
    const same = () => calls("get_alerts", { service: "cart" });
    const { result, guard, executed, sent } = await drive(
      [same(), same(), same(), same(), same(), says("Root cause identified: the CartFailure alert is firing.")],
      { loop: true },
      () => '{"firing": 1, "alerts": ["CartFailure"]}',
    );
    expect(result).toMatchObject({ ended: "completed", turns: 6 });
    expect(executed).toHaveLength(4); // the fifth identical call was not executed
    const verdicts = guard.log.filter((v) => v.event.type === "tool_call").map((v) => v.action);
    expect(verdicts).toEqual(["continue", "continue", "warn", "warn", "block"]);
    // request 4 (after the third call) carries the warning as a user message, right after the tool result
    const fourth = sent[3]!;
    expect(fourth.at(-2)).toMatchObject({ role: "tool", content: '{"firing": 1, "alerts": ["CartFailure"]}' });
    expect(fourth.at(-1)).toMatchObject({ role: "user" });
    expect(fourth.at(-1)!.content).toMatch(/^\[faultline guard\] get_alerts has been called 3 times with equivalent arguments/);
    // request 6 shows the model the refusal in place of the fifth result, answering that call's id
    const sixth = sent[5]!;
    const assistant = sixth.filter((m) => m.role === "assistant").at(-1) as { tool_calls: { id: string }[] };
    const refusal = sixth.find((m) => m.role === "tool" && m.tool_call_id === assistant.tool_calls[0]!.id);
    expect(refusal?.content).toMatch(/^\[faultline guard\] Not executed \(loop-detector, MAST 1\.3\)/);
  });

  it("refuses a claim of success without evidence and accepts it once a check passed", async () => {
    let restarted = false;
    const { result, guard, executed, sent, messages } = await drive(
      [calls("restart_deployment", { name: "cart" }), says("Done. The incident is resolved."), calls("get_alerts", {}), says("Verified: no alert is firing. The incident is resolved.")],
      {
        verification: { evidence: [{ name: "alert cleared", description: "get_alerts reports no firing alert", match: { tool: "get_alerts" }, pass: { json: { firing: 0 } } }] },
        termination: { maxSteps: 20 },
      },
      (c) => {
        if (c.function.name === "restart_deployment") restarted = true;
        return c.function.name === "get_alerts" ? JSON.stringify({ firing: restarted ? 0 : 1 }) : "deployment.apps/cart restarted";
      },
    );
    expect(result).toMatchObject({ ended: "completed", turns: 4 });
    expect(executed).toEqual(["restart_deployment", "get_alerts"]);
    expect(guard.log.filter((v) => v.event.type === "completion").map((v) => [v.action, v.primary?.mode])).toEqual([["block", "3.2"], ["continue", undefined]]);
    // the refusal reached the model: request 3 ends with the unverified claim and the guard's answer to it
    const third = sent[2]!;
    expect(third.at(-2)).toMatchObject({ role: "assistant", content: "Done. The incident is resolved." });
    expect(third.at(-1)!.content).toBe(
      "[faultline guard] Your claim is not backed by tool evidence yet. Before finishing, obtain:\n- alert cleared (get_alerts reports no firing alert): no result from get_alerts yet",
    );
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: "Verified: no alert is firing. The incident is resolved." });
  });

  it("stops at the step budget and still answers every tool call id the model sent", async () => {
    const { result, executed, messages } = await drive(
      [calls("get_alerts", { service: "cart" }), calls("get_alerts", { service: "checkout" }), calls("get_alerts", { service: "frontend" })],
      { termination: { maxSteps: 2, warnAtFraction: 0 } },
      () => '{"firing": 0}',
    );
    expect(result).toMatchObject({ ended: "stopped", turns: 3 });
    expect(executed).toEqual(["get_alerts", "get_alerts"]);
    const last = messages.at(-1);
    expect(last).toMatchObject({ role: "tool" });
    expect(String(last!.role === "tool" ? last!.content : "")).toMatch(/Not executed \(termination-controller, MAST 1\.5\)/);
  });
});

describe("the mock server's scripted tool calls", () => {
  it("streams them as tool-call deltas the SDK reassembles", async () => {
    server = await startMockOpenAI({ script: [calls("get_alerts", { service: "cart" })] });
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0 });
    const stream = client.chat.completions.stream({ model: "mock-sre", messages: [{ role: "user", content: "go" }], tools });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]).toMatchObject({ finish_reason: "tool_calls", message: { tool_calls: [{ type: "function", function: { name: "get_alerts", arguments: '{"service":"cart"}' } }] } });
  });
});
