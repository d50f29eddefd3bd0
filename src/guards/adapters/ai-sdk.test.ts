import { describe, expect, it } from "vitest";
import { ContextGuard } from "../context-guard.js";
import { LoopDetector } from "../loop-detector.js";
import { GuardSet } from "../pipeline.js";
import { TerminationController } from "../termination-controller.js";
import { ManualClock, type Guard } from "../types.js";
import { VerificationGate } from "../verification-gate.js";
import { AiSdkGuard, type AiSdkMessageLike, type AiSdkStepLike, type AiSdkToolLike } from "./ai-sdk.js";

interface ScriptedStep {
  text?: string;
  calls?: { name: string; input: unknown }[];
}

let ids = 0;
/**
 * A stand-in for AI SDK 5's generateText multi-step loop, calling the hooks in the SDK's order: prepareStep, model,
 * tool executes (in parallel), onStepFinish, then stop if there were no tool calls or a stop condition holds.
 */
async function generateTextLike(o: {
  script: ScriptedStep[];
  messages: AiSdkMessageLike[];
  tools: Record<string, AiSdkToolLike>;
  onStepFinish: (s: AiSdkStepLike) => void;
  prepareStep: (o: { messages: AiSdkMessageLike[] }) => { messages: AiSdkMessageLike[] } | undefined;
  stopWhen: (o: { steps: unknown[] }) => boolean;
}) {
  const steps: AiSdkStepLike[] = [];
  const sent: AiSdkMessageLike[][] = [];
  const messages = [...o.messages];
  for (const s of o.script) {
    sent.push(o.prepareStep({ messages })?.messages ?? messages);
    const toolCalls = (s.calls ?? []).map((c) => ({ toolCallId: `t${ids++}`, toolName: c.name, input: c.input }));
    const toolResults = await Promise.all(
      toolCalls.map(async (c) => ({ ...c, output: await o.tools[c.toolName]!.execute!(c.input, { toolCallId: c.toolCallId, messages }) })),
    );
    const step: AiSdkStepLike = { text: s.text ?? "", toolCalls, toolResults, finishReason: toolCalls.length ? "tool-calls" : "stop", usage: { inputTokens: 100, outputTokens: 20 } };
    steps.push(step);
    messages.push({ role: "assistant", content: s.text ?? "" });
    o.onStepFinish(step);
    if (toolCalls.length === 0 || o.stopWhen({ steps })) break;
  }
  return { steps, sent };
}

const setOf = (guards: Guard[]) => new GuardSet(guards, { clock: new ManualClock() });

function tools(log: string[], outputs: Record<string, unknown>): Record<string, AiSdkToolLike> {
  return Object.fromEntries(
    Object.entries(outputs).map(([name, out]) => [
      name,
      {
        description: name,
        execute: async () => {
          log.push(name);
          if (out instanceof Error) throw out;
          return out;
        },
      },
    ]),
  );
}

describe("AI SDK adapter", () => {
  it("blocks a repeated call before it executes and injects the warning into the next step", async () => {
    const guard = new AiSdkGuard(setOf([new LoopDetector({ repeatWarnAt: 2, repeatBlockAt: 3 })]));
    const log: string[] = [];
    const same = { calls: [{ name: "getAlerts", input: { service: "cart" } }] };
    const { steps, sent } = await generateTextLike({
      script: [same, same, same, { text: "The cart alert is firing." }],
      messages: [{ role: "user", content: "Why is the cart failing?" }],
      tools: guard.wrapTools(tools(log, { getAlerts: { alerts: ["CartFailure"] } })),
      onStepFinish: guard.onStepFinish,
      prepareStep: guard.prepareStep,
      stopWhen: guard.stopWhen,
    });
    expect(log).toEqual(["getAlerts", "getAlerts"]);
    expect(String(steps[2]!.toolResults![0]!.output)).toMatch(/^\[faultline guard\] Not executed \(loop-detector, MAST 1\.3\)/);
    expect(sent[2]!.at(-1)).toMatchObject({ role: "user", content: expect.stringMatching(/getAlerts has been called 2 times/) });
    expect(sent[3]!.at(-1)?.content).toMatch(/This call was not executed/);
    expect(guard.completed).toBe(true);
  });

  it("refuses an unverified completion and accepts it in the continued run once the evidence exists", async () => {
    const guard = new AiSdkGuard(setOf([new VerificationGate({ evidence: [{ name: "health check passed", match: { tool: "healthCheck" }, pass: { output: "healthy" } }] })]));
    const log: string[] = [];
    const t = guard.wrapTools(tools(log, { restart: "restarted", healthCheck: "cart: healthy" }));
    const hooks = { tools: t, onStepFinish: guard.onStepFinish, prepareStep: guard.prepareStep, stopWhen: guard.stopWhen };
    guard.input("Fix the cart service.");
    await generateTextLike({ ...hooks, messages: [], script: [{ calls: [{ name: "restart", input: {} }] }, { text: "Fixed: the cart service is restored." }] });
    expect(guard.refusedCompletion).toBe(true);
    const injected = guard.takeInjections();
    expect(injected[0]!.content).toContain("- health check passed: no result from healthCheck yet");
    await generateTextLike({ ...hooks, messages: injected, script: [{ calls: [{ name: "healthCheck", input: {} }] }, { text: "Verified: health check passes." }] });
    expect([guard.refusedCompletion, guard.completed]).toEqual([false, true]);
  });

  it("ends the loop through stopWhen when a guard says stop", async () => {
    const guard = new AiSdkGuard(setOf([new TerminationController({ maxSteps: 2 })]));
    const log: string[] = [];
    const { steps } = await generateTextLike({
      script: [{ calls: [{ name: "a", input: {} }] }, { calls: [{ name: "b", input: {} }] }, { calls: [{ name: "c", input: {} }] }, { calls: [{ name: "a", input: { x: 1 } }] }],
      messages: [],
      tools: guard.wrapTools(tools(log, { a: 1, b: 2, c: 3 })),
      onStepFinish: guard.onStepFinish,
      prepareStep: guard.prepareStep,
      stopWhen: guard.stopWhen,
    });
    expect(log).toEqual(["a", "b"]);
    expect(steps).toHaveLength(3);
    expect(guard.stopped).toBe(true);
  });

  it("reports unwrapped tools after the fact, including tool errors", () => {
    const set = setOf([new LoopDetector()]);
    const guard = new AiSdkGuard(set);
    guard.onStepFinish({
      text: "",
      toolCalls: [{ toolCallId: "1", toolName: "query", input: { q: "up" } }, { toolCallId: "2", toolName: "query", args: { q: "down" } }],
      toolResults: [{ toolCallId: "1", toolName: "query", output: { value: 1 } }],
      content: [{ type: "tool-error", toolCallId: "2", toolName: "query", error: new Error("timeout") }],
      usage: { promptTokens: 10, completionTokens: 2 },
    });
    expect(guard.log.map((v) => v.event)).toEqual([
      { type: "usage", input: 10, output: 2 },
      { type: "tool_call", call: { id: "1", name: "query", args: { q: "up" } } },
      { type: "tool_result", result: { callId: "1", name: "query", args: { q: "up" }, output: '{"value":1}' } },
      { type: "tool_call", call: { id: "2", name: "query", args: { q: "down" } } },
      { type: "tool_result", result: { callId: "2", name: "query", args: { q: "down" }, output: "timeout", isError: true } },
    ]);
  });

  it("compares a step's text with the calls the SDK already ran in that step", async () => {
    const guard = new AiSdkGuard(setOf([new ContextGuard({ tools: ["getLogs", "deletePod"] })]));
    const log: string[] = [];
    const t = guard.wrapTools(tools(log, { getLogs: "ok", deletePod: "deleted" }));
    const hooks = { tools: t, onStepFinish: guard.onStepFinish, prepareStep: guard.prepareStep, stopWhen: guard.stopWhen, messages: [] };
    await generateTextLike({ ...hooks, script: [{ text: "Let me read the logs with getLogs.", calls: [{ name: "getLogs", input: {} }] }, { text: "Let me read the logs with getLogs.", calls: [{ name: "deletePod", input: {} }] }, { text: "Stopping here." }] });
    // events per step: tool_call, tool_result, usage, then the text (with its calls): the 2nd text is event 7
    const mismatches = guard.log.filter((v) => v.primary?.mode === "2.6");
    expect(mismatches).toHaveLength(1);
    expect(mismatches[0]!.primary?.reason).toBe("said it would use getLogs (event 7) but called deletePod");
  });
});
