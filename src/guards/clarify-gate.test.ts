import { describe, expect, it } from "vitest";
import { ClarifyGate, type ClarifyOptions } from "./clarify-gate.js";
import { GuardSet } from "./pipeline.js";
import { DEFAULT_MUTATING } from "./predicates.js";
import { ManualClock, type GuardEvent } from "./types.js";

const user = (text: string): GuardEvent => ({ type: "message", role: "user", text });
const say = (text: string): GuardEvent => ({ type: "message", role: "assistant", text });
const call = (name: string, args: unknown = {}): GuardEvent => ({ type: "tool_call", call: { name, args } });

const sre: ClarifyOptions = {
  rules: [
    { name: "namespace missing", description: "which Kubernetes namespace?", missing: String.raw`\bnamespace\b|\s-n\s+\S+` },
    { name: "several services named", description: "which service should change?", multiple: String.raw`\b(cart|checkout|frontend|payment)\s+service\b` },
  ],
  mutating: DEFAULT_MUTATING,
  clarifyTools: ["ask_user"],
};

function run(opts: ClarifyOptions, events: GuardEvent[]) {
  return new GuardSet([new ClarifyGate(opts)], { clock: new ManualClock() }).run(events);
}

describe("ClarifyGate (FM-2.2)", () => {
  it("goes read-only on an ambiguous request: reads pass, writes are blocked", () => {
    const vs = run(sre, [
      user("The checkout service and the cart service are slow, restart the broken one."),
      call("kubectl_get", { resource: "pods" }),
      call("restart_deployment", { name: "cart" }),
      call("shell", { command: "kubectl delete pod cart-1" }),
      call("shell", { command: "kubectl logs cart-1" }),
    ]);
    expect(vs.map((v) => v.action)).toEqual(["warn", "continue", "block", "block", "continue"]);
    expect(vs[0]!.primary?.message).toContain("- namespace missing: which Kubernetes namespace?");
    expect(vs[0]!.primary?.message).toContain("- several services named: which service should change?");
    expect(vs[2]!.primary).toMatchObject({ mode: "2.2", reason: 'mutating call restart_deployment while ambiguity "namespace missing", "several services named" is unresolved' });
  });

  it("lifts read-only mode once the agent asks and the user answers", () => {
    const vs = run(sre, [
      user("Restart the cart service."),
      call("restart_deployment", { name: "cart" }),
      say("Which namespace is the cart service in?"),
      user("otel-demo"),
      call("restart_deployment", { name: "cart", namespace: "otel-demo" }),
    ]);
    expect(vs.map((v) => v.action)).toEqual(["warn", "block", "continue", "continue", "continue"]);
  });

  it("accepts an answer through a clarify tool", () => {
    const vs = run(sre, [
      user("Restart the cart service."),
      call("ask_user", { question: "Which namespace?" }),
      { type: "tool_result", result: { name: "ask_user", output: "otel-demo" } },
      call("restart_deployment", { name: "cart" }),
    ]);
    expect(vs.map((v) => v.action)).toEqual(["warn", "continue", "continue", "continue"]);
  });

  it("does not count a statement or a user message without a question as a clarification", () => {
    const vs = run(sre, [user("Restart the cart service."), say("I will assume the default namespace."), user("Please hurry up, the shop is down."), call("restart_deployment", { name: "cart" })]);
    expect(vs.map((v) => v.action)).toEqual(["warn", "continue", "continue", "block"]);
  });

  it("leaves a clear request alone", () => {
    const vs = run(sre, [user("Restart the cart service in namespace otel-demo."), call("restart_deployment", { name: "cart", namespace: "otel-demo" })]);
    expect(vs.every((v) => v.action === "continue")).toBe(true);
  });

  it("treats every tool as mutating when no classification is given, except declared read-only tools", () => {
    const gate = { rules: [{ name: "vague target", matches: String.raw`\bfix it\b` }], readOnly: { toolPattern: "^(get|list)_" } };
    const vs = run(gate, [user("Something is wrong, fix it."), call("get_pods"), call("scale", { replicas: 3 })]);
    expect(vs.map((v) => v.action)).toEqual(["warn", "continue", "block"]);
  });

  it("rejects a rule that declares no or several conditions", () => {
    expect(() => new ClarifyGate({ rules: [{ name: "x" }] })).toThrow(/exactly one of/);
    expect(() => new ClarifyGate({ rules: [{ name: "x", matches: "a", missing: "b" }] })).toThrow(/exactly one of/);
  });
});
