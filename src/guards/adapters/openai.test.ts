import { describe, expect, it } from "vitest";
import { ClarifyGate } from "../clarify-gate.js";
import { LoopDetector } from "../loop-detector.js";
import { GuardSet } from "../pipeline.js";
import { TerminationController } from "../termination-controller.js";
import { ManualClock, type Guard } from "../types.js";
import { VerificationGate } from "../verification-gate.js";
import { OpenAIGuard, runGuardedChatLoop, type ChatAssistantMessage, type ChatMessage, type ChatToolCall } from "./openai.js";

let n = 0;
const toolCall = (name: string, args: unknown): ChatToolCall => ({ id: `call_${n++}`, type: "function", function: { name, arguments: JSON.stringify(args) } });
const calls = (...c: ChatToolCall[]): ChatAssistantMessage => ({ role: "assistant", content: null, tool_calls: c });
const text = (content: string): ChatAssistantMessage => ({ role: "assistant", content });

/** A model that plays back a script, one assistant message per turn, recording what it was sent. */
function scripted(script: ChatAssistantMessage[]) {
  const seen: ChatMessage[][] = [];
  let i = 0;
  return {
    seen,
    complete: async (messages: ChatMessage[]) => {
      seen.push(structuredClone(messages));
      const message = script[i++];
      if (!message) throw new Error("script exhausted");
      return { message: structuredClone(message), usage: { prompt_tokens: 100, completion_tokens: 10 } };
    },
  };
}

/** Every assistant tool call is answered by exactly one tool message right after it, as the API requires. */
function expectValidTranscript(messages: ChatMessage[]) {
  messages.forEach((m, i) => {
    if (m.role !== "assistant" || !m.tool_calls?.length) return;
    const answered: string[] = [];
    for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) answered.push((messages[j] as { tool_call_id: string }).tool_call_id);
    expect(answered.sort()).toEqual(m.tool_calls.map((c) => c.id).sort());
  });
}

const guardOf = (guards: Guard[]) => new OpenAIGuard(new GuardSet(guards, { clock: new ManualClock() }));

describe("OpenAI chat-completions adapter", () => {
  it("warns about, then blocks, a call the model keeps repeating, and keeps the transcript valid", async () => {
    const same = () => calls(toolCall("get_alerts", { service: "cart" }));
    const model = scripted([same(), same(), same(), same(), same(), text("Root cause identified: cart alert is firing.")]);
    const executed: string[] = [];
    const messages: ChatMessage[] = [{ role: "user", content: "Why is the cart failing?" }];
    const r = await runGuardedChatLoop({
      guard: guardOf([new LoopDetector()]),
      messages,
      complete: model.complete,
      runTool: async (c) => {
        executed.push(c.function.name);
        return '{"alerts":["CartFailure"]}';
      },
    });
    expect(r.ended).toBe("completed");
    expect(executed).toHaveLength(4); // the 5th identical call was blocked
    expectValidTranscript(messages);
    const blocked = messages.find((m) => m.role === "tool" && String(m.content).includes("Not executed"));
    expect(blocked?.content).toMatch(/^\[faultline guard\] Not executed \(loop-detector, MAST 1\.3\)/);
    // the warning after the 3rd call reached the model before its 4th turn
    const injected = model.seen[3]!.at(-1)!;
    expect(injected).toMatchObject({ role: "user" });
    expect(String(injected.content)).toMatch(/^\[faultline guard\] get_alerts has been called 3 times/);
  });

  it("refuses an unverified claim, then accepts it once the evidence is in", async () => {
    const model = scripted([
      calls(toolCall("restart_deployment", { name: "cart" })),
      text("Done. The incident is resolved."),
      calls(toolCall("get_alerts", {})),
      text("Verified: no alerts are firing. The incident is resolved."),
    ]);
    const guard = guardOf([new VerificationGate({ evidence: [{ name: "alert cleared", match: { tool: "get_alerts" }, pass: { json: { firing: 0 } } }] })]);
    const messages: ChatMessage[] = [{ role: "user", content: "Fix the cart outage." }];
    const r = await runGuardedChatLoop({ guard, messages, complete: model.complete, runTool: async (c) => (c.function.name === "get_alerts" ? '{"firing": 0}' : "restarted") });
    expect(r).toMatchObject({ ended: "completed", turns: 4 });
    const refusal = model.seen[2]!.at(-1)!;
    expect(String(refusal.content)).toContain("- alert cleared: no result from get_alerts yet");
    expect(guard.log.filter((v) => v.event.type === "completion").map((v) => v.action)).toEqual(["block", "continue"]);
  });

  it("stops at the step budget and answers the calls it will not run", async () => {
    const model = scripted([calls(toolCall("a", {}), toolCall("b", {})), calls(toolCall("c", {}), toolCall("d", {}), toolCall("e", {}))]);
    const executed: string[] = [];
    const messages: ChatMessage[] = [{ role: "user", content: "go" }];
    const r = await runGuardedChatLoop({
      guard: guardOf([new TerminationController({ maxSteps: 3 })]),
      messages,
      complete: model.complete,
      runTool: async (c) => {
        executed.push(c.function.name);
        return "ok";
      },
    });
    expect(r).toMatchObject({ ended: "stopped", turns: 2 });
    expect(executed).toEqual(["a", "b", "c"]);
    expectValidTranscript(messages);
  });

  it("blocks mutating calls while the request is ambiguous and hands a question to the user", async () => {
    const guard = guardOf([new ClarifyGate({ rules: [{ name: "namespace missing", missing: "namespace" }], mutating: { toolVerbs: ["restart"] } })]);
    guard.input({ role: "user", content: "Restart the cart service." });
    const review = guard.assistant(calls(toolCall("get_pods", {}), toolCall("restart_deployment", { name: "cart" })));
    expect(review.calls.map((c) => c.allowed)).toEqual([true, false]);
    expect(review.blockedResults).toHaveLength(1);
    expect(review.blockedResults[0]!.content).toMatch(/MAST 2\.2/);
    expect(guard.takeInjections()[0]!.content).toMatch(/The request is ambiguous/);
    const ask = guard.assistant(text("Which namespace is the cart service in?"));
    expect(ask).toMatchObject({ awaitingUser: true, end: false, completed: false });
    guard.input({ role: "user", content: "otel-demo" });
    expect(guard.assistant(calls(toolCall("restart_deployment", { name: "cart" }))).calls[0]!.allowed).toBe(true);
  });

  it("reports usage, reasoning and result facts to the guards", () => {
    const set = new GuardSet([new TerminationController({ maxTokens: 150 })], { clock: new ManualClock() });
    const guard = new OpenAIGuard(set, { injectRole: "system", prefix: "[guard]" });
    const first = guard.assistant({ role: "assistant", content: "", reasoning_content: "Check pods.", tool_calls: [toolCall("get_pods", {})] }, { prompt_tokens: 100, completion_tokens: 30 });
    expect(first.verdicts.map((v) => v.event.type)).toEqual(["usage", "message", "tool_call"]);
    expect(first.action).toBe("warn"); // 130 of 150 tokens
    const v = guard.toolResult({ role: "tool", tool_call_id: first.calls[0]!.call.id, content: "cart Running" }, { exitCode: 0 });
    expect(v.event).toMatchObject({ type: "tool_result", result: { name: "get_pods", args: {}, output: "cart Running", exitCode: 0 } });
    expect(guard.takeInjections()).toEqual([{ role: "system", content: "[guard] 130 of 150 tokens used. Wrap up: make sure the deliverable exists, then finish." }]);
    expect(guard.takeInjections()).toEqual([]);
    expect(guard.assistant(text("All done."), { prompt_tokens: 40 })).toMatchObject({ stopped: true, end: true, completed: false });
  });
});
