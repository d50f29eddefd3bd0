import { describe, expect, it } from "vitest";
import { ContextGuard, type ContextGuardOptions } from "./context-guard.js";
import { GuardSet } from "./pipeline.js";
import { ManualClock, type GuardEvent } from "./types.js";

const user = (text: string): GuardEvent => ({ type: "message", role: "user", text });
const say = (text: string, extra: Partial<Extract<GuardEvent, { type: "message" }>> = {}): GuardEvent => ({ type: "message", role: "assistant", text, ...extra });
const call = (name: string, args: unknown = {}): GuardEvent => ({ type: "tool_call", call: { name, args } });
const result = (name: string, output: string): GuardEvent => ({ type: "tool_result", result: { name, output } });

const namespace: ContextGuardOptions = {
  facts: [{ name: "namespace", pattern: String.raw`namespace[=:\s]+([a-z0-9-]+)`, argKeys: ["namespace", "ns"] }],
  tools: ["get_logs", "get_pods", "get_metrics"],
};

function run(opts: ContextGuardOptions, events: GuardEvent[]) {
  const guard = new ContextGuard(opts);
  return { guard, vs: new GuardSet([guard], { clock: new ManualClock() }).run(events) };
}

describe("ContextGuard: established facts (FM-1.4)", () => {
  it("flags a tool call that contradicts a fact the user gave", () => {
    const { vs } = run(namespace, [user("The cart is failing in namespace otel-demo."), call("get_pods", { namespace: "otel-demo" }), call("get_logs", { target: { ns: "default" } })]);
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "warn"]);
    expect(vs[2]!.primary).toMatchObject({ mode: "1.4", reason: 'get_logs uses namespace = "default", but "otel-demo" was established by the user at event 0' });
  });

  it("flags asking again for something already established", () => {
    const { vs } = run(namespace, [user("Check namespace: otel-demo please."), say("Before I start: which namespace should I look at?")]);
    expect(vs[1]!.primary).toMatchObject({ action: "warn", mode: "1.4" });
    expect(vs[1]!.primary?.message).toContain("namespace = otel-demo");
  });

  it("follows the user when they correct a fact, and ignores tool listings unless told to", () => {
    const { vs } = run(namespace, [
      user("Look at namespace staging."),
      user("Sorry, I meant namespace otel-demo."),
      result("get_pods", "namespace: kube-system coredns Running"),
      call("get_pods", { namespace: "otel-demo" }),
    ]);
    expect(vs.every((v) => v.action === "continue")).toBe(true);
  });

  it("can compare values stated in assistant messages", () => {
    const opts = { ...namespace, checkAssistantText: true };
    const { vs } = run(opts, [user("namespace otel-demo"), say("The pods in namespace default look healthy.")]);
    expect(vs[1]!.primary?.mode).toBe("1.4");
  });
});

describe("ContextGuard: stated versus executed (FM-2.6)", () => {
  it("flags a next call that differs from the announced one", () => {
    const { vs } = run(namespace, [say("Next I'll call get_logs for the cart service."), call("get_pods")]);
    expect(vs[1]!.primary).toMatchObject({ action: "warn", mode: "2.6", reason: "said it would use get_logs (event 0) but called get_pods" });
  });

  it("accepts a call that matches the announcement, and mentions that are not announcements", () => {
    const { vs } = run(namespace, [
      say("Let me check the pods with get_pods, then read logs with get_logs."),
      call("get_pods"),
      call("get_logs"),
      say("get_metrics showed nothing unusual earlier."),
      call("get_logs", { pod: "cart-2" }),
    ]);
    expect(vs.every((v) => v.action === "continue")).toBe(true);
  });

  it("flags ending the run right after announcing an action", () => {
    const { vs } = run(namespace, [say("First I will call get_pods to list the pods."), { type: "completion", text: "", claimsSuccess: false }]);
    expect(vs[1]!.primary).toMatchObject({ mode: "2.6" });
  });

  it("learns tool names from calls and compares same-turn calls reported before the text", () => {
    const { vs } = run({}, [
      call("describe_pod"),
      say("Now I will run describe_pod on cart-1.", { calls: [{ name: "describe_pod" }] }),
      say("Now I will run describe_pod on cart-2.", { calls: [{ name: "delete_pod" }] }),
    ]);
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "warn"]);
  });

  it("recognises tools named by plain words only when quoted or written as calls", () => {
    const opts = { tools: ["calculate", "get_flight"] };
    expect(run(opts, [say("I'll review the flights and calculate the total."), call("get_flight")]).vs.every((v) => v.action === "continue")).toBe(true);
    expect(run(opts, [say("I'll run `calculate` on the fares."), call("get_flight")]).vs[1]!.primary?.mode).toBe("2.6");
    expect(run(opts, [say("Let me call calculate(158 + 141)."), call("get_flight")]).vs[1]!.primary?.mode).toBe("2.6");
  });

  it("lets an announcement lapse when the user speaks before the next call", () => {
    const { vs } = run(namespace, [say("I'll call get_logs next, if you agree."), user("Actually, just list the pods."), call("get_pods")]);
    expect(vs.every((v) => v.action === "continue")).toBe(true);
  });

  it("ignores negated announcements", () => {
    const { vs } = run(namespace, [say("I will not call get_logs again; the pods tell enough."), call("get_pods")]);
    expect(vs.every((v) => v.action === "continue")).toBe(true);
  });
});

describe("ContextGuard: state summary hook", () => {
  it("offers a summary of task, facts, plan and recent results every N actions", () => {
    const { guard, vs } = run({ ...namespace, summaryEvery: 2 }, [
      user("The cart is failing in namespace otel-demo."),
      { type: "plan", items: [{ text: "list pods", status: "done" }, { text: "read cart logs" }] },
      call("get_pods", { namespace: "otel-demo" }),
      { type: "tool_result", result: { name: "get_pods", output: "cart CrashLoopBackOff", exitCode: 0 } },
      call("get_logs", { namespace: "otel-demo" }),
    ]);
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "continue", "continue", "continue"]);
    const summary = vs[4]!.messages[0];
    expect(summary).toContain("- Established: namespace = otel-demo (from user, event 0)");
    expect(summary).toContain("- Plan: [done] list pods; [pending] read cart logs");
    expect(summary).toContain("last 1 tool results: get_pods");
    expect(guard.stateSummary()).toBe(summary);
  });
});
