import { describe, expect, it } from "vitest";
import { GuardSet } from "./pipeline.js";
import { TerminationController, type TerminationOptions } from "./termination-controller.js";
import { intervene, ManualClock, proceed, type Guard, type GuardEvent } from "./types.js";

const call = (name: string, args: unknown = {}): GuardEvent => ({ type: "tool_call", call: { name, args } });
const result = (name: string, output: string, args: unknown = {}, exitCode = 0): GuardEvent => ({ type: "tool_result", result: { name, args, output, exitCode } });
const done = (text = "Root cause identified: flagd-config enables cartFailure."): GuardEvent => ({ type: "completion", text, claimsSuccess: true });

const deliverable: TerminationOptions["exitConditions"] = [
  { name: "agent_output.json written", description: "write the diagnosis to agent_output.json", match: { tool: "write_file", args: { path: "agent_output.json" } } },
];

function setOf(opts: TerminationOptions, clock = new ManualClock(), extra: Guard[] = []) {
  const tc = new TerminationController(opts);
  return { tc, set: new GuardSet([tc, ...extra], { clock }), clock };
}

describe("TerminationController budgets (FM-1.5)", () => {
  it("warns near the step budget and stops the action that exceeds it, then every later action", () => {
    const { set, tc } = setOf({ maxSteps: 10 });
    const vs = set.run(Array.from({ length: 13 }, (_, i) => call(`t${i}`)));
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "continue", "continue", "continue", "continue", "continue", "warn", "continue", "continue", "stop", "stop", "stop"]);
    expect(vs[10]!.primary).toMatchObject({ mode: "1.5", reason: "step budget of 10 spent" });
    expect(tc.state).toBe("exhausted");
  });

  it("measures time with the injected clock and with recorded event times", () => {
    const { set, clock } = setOf({ maxDurationMs: 60_000, warnAtFraction: 0 });
    expect(set.observe(call("a")).action).toBe("continue");
    clock.advance(59_000);
    expect(set.observe(call("b")).action).toBe("continue");
    clock.advance(2_000);
    expect(set.observe(call("c")).primary?.reason).toMatch(/time budget of 60000 ms spent \(61000 ms elapsed\)/);

    const recorded = setOf({ maxDurationMs: 60_000, warnAtFraction: 0 });
    const t0 = Date.parse("2026-01-15T14:12:52Z");
    const vs = recorded.set.run([{ ...call("a"), at: t0 }, { ...call("b"), at: t0 + 30_000 }, { ...call("c"), at: t0 + 90_000 }]);
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "stop"]);
  });

  it("counts tokens from usage events", () => {
    const { set } = setOf({ maxTokens: 10_000 });
    const vs = set.run([
      { type: "usage", input: 4000, output: 500 },
      { type: "usage", input: 4000, output: 500 },
      { type: "usage", input: 1000, output: 200 },
    ]);
    expect(vs.map((v) => v.action)).toEqual(["continue", "warn", "stop"]);
    expect(vs[2]!.primary?.reason).toBe("token budget of 10000 spent (10200 used)");
  });

  it("raises no alarm for a long but productive run inside its budget", () => {
    const { set, tc } = setOf({ maxSteps: 500, maxTokens: 2_000_000 });
    const events: GuardEvent[] = [];
    for (let i = 0; i < 200; i++) events.push({ type: "usage", input: 3000, output: 200 }, call(`read_${i}`), result(`read_${i}`, `data ${i}`));
    events.push(done("Finished the inventory."));
    const vs = set.run(events);
    expect(vs.filter((v) => v.action !== "continue")).toEqual([]);
    expect(tc.state).toBe("finished");
  });
});

describe("TerminationController exit conditions", () => {
  it("refuses to end before the deliverable exists (FM-3.1) and accepts the end once it does", () => {
    const { set, tc } = setOf({ exitConditions: deliverable });
    const early = set.observe(done());
    expect(early.action).toBe("require");
    expect(early.primary).toMatchObject({ mode: "3.1", guard: "termination-controller" });
    expect(early.primary?.message).toMatch(/agent_output.json written: write the diagnosis/);
    expect(tc.state).toBe("working");
    set.observe(call("write_file", { path: "agent_output.json", content: "{}" }));
    set.observe(result("write_file", "wrote 2 bytes", { path: "agent_output.json", content: "{}" }));
    expect(tc.state).toBe("ready");
    expect(set.observe(done()).action).toBe("continue");
    expect(tc.state).toBe("finished");
  });

  it("refuses to continue after the run is done (FM-1.5)", () => {
    const { set } = setOf({ exitConditions: deliverable });
    set.run([call("write_file", { path: "agent_output.json" }), result("write_file", "ok", { path: "agent_output.json" }), done()]);
    const after = set.observe(call("write_file", { path: "agent_output.json" }));
    expect(after.action).toBe("stop");
    expect(after.primary).toMatchObject({ mode: "1.5", reason: "action after the run was accepted as finished" });
  });

  it("reopens the run when the user speaks after an accepted completion", () => {
    const { set, tc } = setOf({ exitConditions: deliverable });
    set.run([call("write_file", { path: "agent_output.json" }), result("write_file", "ok", { path: "agent_output.json" }), done()]);
    expect(tc.state).toBe("finished");
    set.observe({ type: "message", role: "user", text: "Thanks. Can you also check the checkout service?" });
    expect(tc.state).toBe("ready");
    expect(set.run([call("get_logs", { service: "checkout" }), done("Checkout is fine.")]).map((v) => v.action)).toEqual(["continue", "continue"]);
  });

  it("does not count a deliverable write that failed", () => {
    const { set, tc } = setOf({ exitConditions: deliverable });
    set.run([call("write_file", { path: "agent_output.json" }), result("write_file", "permission denied", { path: "agent_output.json" }, 1)]);
    expect(tc.state).toBe("working");
    expect(set.observe(done()).primary?.reason).toMatch(/latest result does not pass/);
  });

  it("stays running when another guard refuses the completion", () => {
    const refuser: Guard = {
      name: "refuser",
      modes: ["3.3"],
      observe: (e) => (e.type === "completion" ? intervene("block", "refuser", "3.3", "no evidence", "verify first") : proceed("refuser", "ok")),
      reset: () => {},
    };
    const { set, tc } = setOf({ exitConditions: deliverable }, new ManualClock(), [refuser]);
    set.run([call("write_file", { path: "agent_output.json" }), result("write_file", "ok", { path: "agent_output.json" })]);
    expect(set.observe(done()).action).toBe("block");
    expect(tc.state).toBe("ready");
    expect(set.observe(call("health_check")).action).toBe("continue");
  });

  it("allows a few actions after the deliverable (verification), warns beyond the grace and stops at twice the grace", () => {
    const { set } = setOf({ exitConditions: deliverable, graceSteps: 3 });
    set.run([call("write_file", { path: "agent_output.json" }), result("write_file", "ok", { path: "agent_output.json" })]);
    const vs = set.run(["cat", "jq", "cat", "write_file", "cat", "jq", "write_file"].map((t) => call(t)));
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "continue", "warn", "continue", "continue", "stop"]);
  });
});

describe("TerminationController after an accepted completion", () => {
  it("does not stop a second attempt to end: saying done again is not continuing the work", () => {
    const { set, tc } = setOf({});
    expect(set.observe(done()).action).toBe("continue");
    expect(set.observe(done("All done.")).action).toBe("continue");
    expect(tc.state).toBe("finished");
    expect(set.observe(call("get_logs")).action).toBe("stop");
  });
});
