import { describe, expect, it } from "vitest";
import { GUARD_PRESETS, guardSetFromConfig, loadGuardConfig, parseGuardConfig } from "./config.js";
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

describe("TerminationController: a completion with no action at all on a task that asks for work (FM-3.1)", () => {
  const task: GuardEvent = { type: "message", role: "user", text: "Begin investigation" };
  const sentence = done("First we'll list the contents of the data directory, read all available alerts, and analyze them.");

  it("is refused in every preset, with or without a declared deliverable", () => {
    for (const preset of Object.keys(GUARD_PRESETS)) {
      const set = guardSetFromConfig(loadGuardConfig(preset), { clock: new ManualClock() });
      set.begin({ tools: true });
      const [, v] = set.run([task, sentence]);
      const tc = v!.interventions.find((i) => i.guard === "termination-controller");
      expect(tc, preset).toMatchObject({ action: "require", mode: "3.1" });
      expect(tc!.reason, preset).toMatch(/completion without any action \(no tool call\) although the task asks for work \("investigation"\)/);
      expect(tc!.message).toMatch(/You have not done anything yet/);
    }
  });

  it("knows the task from begin(), and every task of a benchmark that asks for work", () => {
    const { set } = setOf({});
    set.begin({ task: "Diagnose why checkout fails and write the root cause to agent_output.json", tools: true });
    expect(set.observe(sentence).action).toBe("require");
    set.begin({ benchmark: "princeton-nlp__SWE-bench_Verified-test" });
    expect(set.observe(sentence).action).toBe("continue"); // no profiles given to this controller
    const withProfiles = new GuardSet([new TerminationController({ benchmarks: { "swe-bench": { asksForWork: true } } })]);
    withProfiles.begin({ benchmark: "princeton-nlp__SWE-bench_Verified-test", tools: false });
    expect(withProfiles.observe(sentence).primary?.reason).toMatch(/although every swe-bench task asks for work/);
  });

  it("is not refused after a tool call, for a question, without tools, or when switched off", () => {
    const acted = setOf({});
    acted.set.begin({ tools: true });
    expect(acted.set.run([task, call("shell", { command: "ls" }), result("shell", "alerts/"), sentence]).map((v) => v.action)).toEqual(["continue", "continue", "continue", "continue"]);
    const question = setOf({});
    question.set.begin({ tools: true });
    expect(question.set.run([{ type: "message", role: "user", text: "What is the capital of France?" }, done("Paris.")]).map((v) => v.action)).toEqual(["continue", "continue"]);
    const noTools = setOf({});
    noTools.set.begin({ tools: false });
    expect(noTools.set.run([task, sentence]).at(-1)!.action).toBe("continue");
    const off = setOf({ requireAction: false });
    off.set.begin({ tools: true });
    expect(off.set.run([task, sentence]).at(-1)!.action).toBe("continue");
    const always = setOf({ requireAction: true });
    expect(always.set.run([{ type: "message", role: "user", text: "Hi" }, done("Hello.")]).at(-1)!.action).toBe("require");
    // a final-answer call is not an action
    const submitOnly = setOf({});
    submitOnly.set.begin({ tools: true });
    expect(submitOnly.set.run([task, call("submit", {}), sentence]).at(-1)!.action).toBe("require");
  });
});

describe("TerminationController: per-benchmark exit conditions (default preset)", () => {
  const readDeliverable = [call("shell", { command: ["bash", "-lc", "jq . agent_output.json"] }), result("shell", '{"entities": []}', { command: ["bash", "-lc", "jq . agent_output.json"] })];

  it("default takes ITBench's deliverable from the run's benchmark, and forgets it for the next run", () => {
    const set = guardSetFromConfig(loadGuardConfig("default"), { clock: new ManualClock() });
    set.begin({ benchmark: "itbench-sre", tools: true });
    const early = set.run([call("shell", { command: "ls" }), result("shell", "alerts/"), done("Root cause: flagd.")]).at(-1)!;
    expect(early.primary).toMatchObject({ guard: "termination-controller", action: "require", mode: "3.1" });
    expect(early.primary!.reason).toMatch(/^completion attempted before the exit conditions hold: agent_output.json readable/);
    expect(set.run([...readDeliverable, done("Root cause: flagd.")]).at(-1)!.interventions.filter((i) => i.guard === "termination-controller")).toEqual([]);
    // another run, another benchmark: no deliverable asked for
    set.begin({ benchmark: "tau-bench/retail", tools: true });
    expect(set.run([call("get_order", {}), result("get_order", "pending"), done("Your order is pending.")]).at(-1)!.interventions.filter((i) => i.guard === "termination-controller")).toEqual([]);
  });

  it("a declared deliverable wins over the benchmark's; `benchmarks: false` ignores them", () => {
    const declared = guardSetFromConfig(parseGuardConfig({ termination: { exitConditions: deliverable } }), { clock: new ManualClock() });
    declared.begin({ benchmark: "itbench-sre" });
    expect(declared.run([call("x"), done()]).at(-1)!.primary?.reason).toMatch(/agent_output.json written/);
    const none = guardSetFromConfig(parseGuardConfig({ termination: { benchmarks: false } }), { clock: new ManualClock() });
    none.begin({ benchmark: "itbench-sre", tools: true });
    expect(none.run([call("x"), done()]).at(-1)!.action).toBe("continue");
  });
});
