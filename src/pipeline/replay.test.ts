import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { GuardSet, LoopDetector, ManualClock, TerminationController, DEFAULT_GUARD_CONFIG } from "../guards/index.js";
import { estimateTokens } from "../judge/index.js";
import { corpus } from "../testing/corpus.js";
import { buildTrace, stepContent, type Finding, type ReplaySummary, type StepDraft, type Trace } from "../trace/index.js";
import { ReplayCollector, replaySummary, replayTrace, summarizeReplays } from "./replay.js";

let n = 0;
const trace = (steps: StepDraft[], model = "m") => buildTrace({ id: `r${n++}`, source: { file: "mem", format: "test", index: 0 }, model }, steps);
const user = (text: string): StepDraft => ({ agent: "user", role: "user", kind: "message", text });
function call(name: string, args: unknown, output: string, usage?: { input: number; output: number }): StepDraft[] {
  const callId = `c${n++}`;
  return [
    { agent: "a", role: "assistant", kind: "tool_call", tool: { name, callId, args }, ...(usage ? { usage } : {}) },
    { agent: "t", role: "tool", kind: "tool_result", tool: { name, callId, output, exitCode: 0 } },
  ];
}
const setOf = (...guards: ConstructorParameters<typeof GuardSet>[0]) => new GuardSet(guards, { clock: new ManualClock() });

describe("replayTrace: what the guards would have changed", () => {
  it("ends at the first stop and counts every agent step from the stopped call on, with recorded usage", () => {
    const steps = [user("List every page.")];
    for (let i = 0; i < 6; i++) steps.push(...call("list", { page: i }, `page ${i}`, { input: 100, output: 10 }));
    const t = trace(steps);
    const r = replayTrace(t, setOf(new TerminationController({ maxSteps: 3 })), { findings: [] });
    // calls at steps 1,3,5,7,9,11: the 4th (step 7) exceeds the budget
    expect(r.interventions.map((i) => [i.step, i.decision, i.event])).toEqual([[5, "warn", "tool_call"], [7, "stop", "tool_call"]]);
    expect(r.stopped_at).toBe(7);
    expect(r.steps_saved).toBe(6); // steps 7..12: three calls and their results
    expect(r).toMatchObject({ tokens_saved: 330, tokens_source: "usage" });
  });

  it("saves a blocked call and its result, and estimates tokens when the trace records no usage", () => {
    const same = () => call("get_alerts", { service: "cart" }, '{"alerts":["CartFailure"]}');
    const t = trace([user("Why is the cart failing?"), ...same(), ...same(), ...same()]);
    const r = replayTrace(t, setOf(new LoopDetector({ repeatWarnAt: 2, repeatBlockAt: 3 })), { findings: [] });
    expect(r.interventions.map((i) => [i.step, i.decision])).toEqual([[3, "warn"], [5, "block"]]);
    expect(r.stopped_at).toBeNull();
    expect(r.steps_saved).toBe(2);
    expect(r.tokens_source).toBe("estimate");
    expect(r.tokens_saved).toBe(estimateTokens(stepContent(t.steps[5]!)) + estimateTokens(stepContent(t.steps[6]!)));
  });

  it("saves nothing for warnings and refused completions", () => {
    const t = trace([user("Go."), { agent: "a", role: "assistant", kind: "message", text: "Done." }]);
    const r = replayTrace(t, setOf(new TerminationController({ exitConditions: [{ name: "report written", match: { tool: "write_report" } }] })), { findings: [] });
    expect(r.interventions.map((i) => [i.step, i.decision, i.mode])).toEqual([[1, "require", "3.1"]]);
    expect(r).toMatchObject({ steps_saved: 0, tokens_saved: 0, tokens_source: "none" });
  });

  it("lists a finding as addressed when it has the intervention's mode and its evidence reaches that step or later", () => {
    const same = () => call("get_alerts", {}, "[]");
    const t = trace([user("Check."), ...same(), ...same(), ...same(), ...same()]);
    const f = (mode: string, steps: number[]): Finding => ({ mode, steps, confidence: 0.9, evidence: "x", detector: `rules/${mode}` });
    const findings = [f("1.3", [1, 3, 5, 7]), f("1.3", [1, 3]), f("3.2", [5, 7])];
    const r = replayTrace(t, setOf(new LoopDetector()), { findings });
    const warn = r.interventions.find((i) => i.step === 5)!;
    expect(warn).toMatchObject({ guard: "loop-detector", decision: "warn", mode: "1.3" });
    expect(warn.addresses).toEqual([{ mode: "1.3", detector: "rules/1.3", steps: [1, 3, 5, 7] }]);
  });

  it("runs the rule detectors itself when no findings are given", () => {
    const patch = { input: "*** Add File: agent_output.json\n{}" };
    const t = trace([user("Write it."), ...call("apply_patch", patch, "Success"), ...call("apply_patch", patch, "Success"), ...call("apply_patch", patch, "Success")]);
    const r = replayTrace(t, setOf(new LoopDetector()));
    expect(r.findings.map((x) => x.mode)).toContain("1.3");
    expect(r.interventions.find((i) => i.mode === "1.3")?.addresses.map((a) => a.detector)).toEqual(["rules/step-repetition"]);
  });
});

describe("summarizeReplays", () => {
  it("sums per model, cross-tabulates modes with findings and lists the first catch of each kind", () => {
    const same = () => call("get_alerts", {}, "[]");
    const looping = trace([user("Check."), ...same(), ...same(), ...same()], "model-a");
    const quiet = trace([user("Check."), ...call("get_pods", {}, "ok")], "model-a");
    const other = trace([user("Check."), ...call("get_pods", {}, "ok")], "model-b");
    const set = setOf(new LoopDetector());
    const findings = (t: Trace): Finding[] => (t === other ? [{ mode: "1.3", steps: [1], confidence: 0.5, evidence: "x", detector: "rules/x" }] : []);
    const s = summarizeReplays([looping, quiet, other].map((t) => replayTrace(t, set, { findings: findings(t) })), "test");
    expect(s.models.map((m) => [m.model, m.traces, m.intervened, m.decisions.warn, m.findings, m.findings_addressed])).toEqual([
      ["model-a", 2, 1, 1, 0, 0],
      ["model-b", 1, 0, 0, 1, 0],
    ]);
    expect(s.crosstab.find((c) => c.mode === "1.3")).toMatchObject({ interventions: 1, traces_intervened: 1, traces_with_finding: 1, traces_caught: 0, traces_guard_only: 1 });
    expect(s.highlights).toEqual([expect.objectContaining({ kind: "repeated_calls", trace_id: looping.id, step: 5 })]);
    // without the configuration only the guards that intervened are known; with it every configured guard has a row
    expect(s.guards_summary.map((g) => [g.guard, g.interventions])).toEqual([["loop-detector", 1]]);
    const withModes = summarizeReplays(s.traces, "test", undefined, new Map([["loop-detector", new Set(["1.3", "1.5"])], ["verification-gate", new Set(["3.2", "3.3"])]]));
    expect(withModes.guards_summary).toEqual([
      { guard: "loop-detector", modes: ["1.3", "1.5"], interventions: 1, traces: 1, decisions: { warn: 1, block: 0, require: 0, stop: 0 }, findings_addressed: 0 },
      { guard: "verification-gate", modes: ["3.2", "3.3"], interventions: 0, traces: 0, decisions: { warn: 0, block: 0, require: 0, stop: 0 }, findings_addressed: 0 },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// On the real corpus
// ---------------------------------------------------------------------------------------------------------------

describe("replay on the ITBench rollouts", async () => {
  const { traces } = await readAll(corpus("itbench", "rollouts"));
  const byId = (s: ReplaySummary, prefix: string) => s.traces.find((t) => t.trace_id.startsWith(prefix))!;
  const defaults = replaySummary(traces, "default");
  const sre = replaySummary(traces, "itbench-sre");

  it("replays all 28 rollouts without guard or detector errors", () => {
    expect(defaults.totals).toMatchObject({ traces: 28, errors: 0 });
    expect(sre.totals).toMatchObject({ traces: 28, errors: 0 });
  });

  it("catches the gpt-oss run that re-sends its agent_output.json patch, at the third identical failure", () => {
    const t = traces.find((x) => x.id.startsWith("019bc2a7"))!;
    const patches = t.steps.filter((s) => s.kind === "tool_call" && s.tool?.name === "apply_patch");
    // five Add File patches of agent_output.json: four cut off mid-argument and refused the same way, the fifth applied
    const added = patches.filter((s) => /\*\*\* Add File: agent_output\.json/.test(stepContent(s)));
    expect(added).toHaveLength(5);
    const results = added.map((s) => t.steps[s.tool!.resultIndex!]!.tool?.output ?? "");
    expect(results.slice(0, 4).every((o) => o.startsWith("failed to parse function arguments: EOF while parsing a string"))).toBe(true);
    expect(results[4]).toMatch(/^Success/);

    for (const s of [defaults, sre]) {
      const hit = byId(s, "019bc2a7").interventions.find((i) => i.guard === "loop-detector" && i.mode === "1.3" && i.event === "tool_result");
      expect(hit?.reason).toMatch(/^apply_patch failed 3 times in a row with the same error/);
      expect(hit?.step).toBe(added[2]!.tool!.resultIndex); // the third failure, before the fourth try
      expect(s.highlights).toContainEqual(expect.objectContaining({ kind: "repeated_calls", trace_id: t.id, step: hit!.step }));
    }
  });

  it("catches every run that tries to end without a readable agent_output.json, idle ones at their first turn (itbench-sre)", () => {
    const readsDeliverable = (t: Trace) =>
      t.steps.some((s) => s.kind === "tool_result" && s.tool?.exitCode === 0 && /\b(?:jq|cat)\b[^\n]*agent_(?:output|remediation)\.json/.test(JSON.stringify(t.steps[s.tool.callIndex ?? -1]?.tool?.args ?? "")));
    const firstTurn = (t: Trace) => t.steps.find((s) => s.role === "assistant" && s.kind === "message")?.index;
    const flagged = new Map(sre.highlights.filter((h) => h.kind === "ended_without_deliverable").map((h) => [h.trace_id, h]));
    // never read back a deliverable, or sent back by the harness for it ("I don't see agent_output.json file…")
    const harnessRetried = (t: Trace) => t.steps.some((s) => s.tags?.includes("harness-retry"));
    const expected = traces.filter((t) => firstTurn(t) !== undefined && (!readsDeliverable(t) || harnessRetried(t)));
    expect(expected.length).toBeGreaterThanOrEqual(20);
    expect([...flagged.keys()].sort()).toEqual(expected.map((t) => t.id).sort());
    // the 15 gpt-oss runs that never act are refused at their very first (empty) turn
    const idle = traces.filter((t) => /gpt-oss/.test(t.model ?? "") && !t.steps.some((s) => s.kind === "tool_call"));
    expect(idle).toHaveLength(15);
    for (const t of idle) expect(flagged.get(t.id)).toMatchObject({ step: firstTurn(t), guard: "termination-controller", decision: "require", mode: "3.1" });
    // the runs that wrote and checked their deliverable finish untouched by any block, require or stop
    for (const prefix of ["019bc313", "019bc33a"]) expect(byId(sre, prefix).interventions.filter((i) => i.decision !== "warn")).toEqual([]);
  });

  it("catches the Gemini run that announces its diagnosis without a check after its last change", () => {
    for (const s of [defaults, sre]) {
      const hit = byId(s, "019bc31f").interventions.find((i) => i.guard === "verification-gate");
      expect(hit).toMatchObject({ decision: "block", mode: "3.2", event: "completion", claims_success: true, step: 100 });
      expect(hit?.reason).toMatch(/nothing has been checked since shell \(event \d+, step 94\)/);
    }
  });
});

describe("replay on tau-bench: domain APIs that return the new state are their own check", async () => {
  const { traces } = await readAll(corpus("tau-bench"));
  const blocks = (s: ReplaySummary) => s.traces.flatMap((t) => t.interventions.filter((i) => i.guard === "verification-gate").map((i) => ({ t, i })));

  it("blocks only completions after a change that answered in text, and many more without the state rule", () => {
    const on = blocks(replaySummary(traces, "default"));
    const off = blocks(replaySummary(traces, { ...DEFAULT_GUARD_CONFIG, verification: { requireCheckAfterChange: true, stateResultIsCheck: false } }));
    expect(traces).toHaveLength(200);
    expect(on.length).toBeLessThan(10);
    expect(off.length).toBeGreaterThan(10 * on.length);
    // what is left: certificates confirmed in a sentence, not with the state
    for (const { i } of on) expect(i.reason).toMatch(/nothing has been checked since send_certificate/);
  });
});

describe("replay on tau2-bench: a run the guards would have ended early", async () => {
  const { traces } = await readAll(corpus("tau2-bench", "2025-10-05T22-50-14.083933_airline_llm_agent_grok-3_user_simulator_grok-3.json"));

  it("stops the grok-3 conversation that loops without progress and counts what that saves from recorded usage", () => {
    const s = replaySummary(traces, "default");
    const r = s.traces.find((t) => t.stopped_at !== null)!;
    const t = traces.find((x) => x.id === r.trace_id)!;
    expect(r.interventions.at(-1)).toMatchObject({ guard: "loop-detector", decision: "stop", mode: "1.5" });
    const cut = r.stopped_at!;
    const after = t.steps.filter((x) => x.index >= cut && (x.role === "assistant" || x.role === "tool"));
    expect(r.steps_saved).toBe(after.length);
    expect(r.tokens_source).toBe("usage");
    expect(r.tokens_saved).toBe(after.reduce((n, x) => n + (x.usage?.input ?? 0) + (x.usage?.output ?? 0), 0));
    expect(r.tokens_saved).toBeGreaterThan(0);
    expect(s.highlights).toContainEqual(expect.objectContaining({ kind: "stopped", trace_id: t.id, step: cut }));
  });
});

describe("faultline replay (CLI)", () => {
  const bin = fileURLToPath(new URL("../../bin/faultline.js", import.meta.url));
  const run = (...args: string[]) => promisify(execFile)(process.execPath, [bin, "replay", ...args], { maxBuffer: 64 * 1024 * 1024 });

  it("prints the documented JSON per trace and per model", async () => {
    const { stdout } = await run("--guards", "default", corpus("itbench", "rollouts"), "--json");
    const out = JSON.parse(stdout) as ReplaySummary;
    expect(out.traces).toHaveLength(28);
    for (const t of out.traces) {
      expect(Object.keys(t)).toEqual(expect.arrayContaining(["trace_id", "model", "interventions", "steps_saved", "tokens_saved"]));
      for (const i of t.interventions) expect(Object.keys(i)).toEqual(expect.arrayContaining(["guard", "step", "decision", "mode", "reason"]));
    }
    expect(out.models.map((m) => m.model)).toContain("gpt-oss-120b");
  }, 60_000);

  it("ends the text report with the catches, and refuses an unknown guard config", async () => {
    const { stdout } = await run("--guards", "itbench-sre", corpus("itbench", "rollouts"), "--quiet");
    const note = stdout.slice(stdout.indexOf("What the guards would have caught:"));
    expect(note).toMatch(/019bc2a7-59dc-7430-8569-ef3779936830 \[gpt-oss-120b-custom\] step 50: loop-detector warn/);
    expect(note).toMatch(/Runs that tried to end without their deliverable \(FM-3\.1\): \d+ traces/);
    expect(note).toMatch(/019bc31f-c491-7c61-993a-5763f5b072a3 \[gemini-3-flash-preview\] step 100: verification-gate block/);
    await expect(run("--guards", "no-such-preset.json", corpus("itbench", "rollouts"))).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/no-such-preset\.json: cannot read guard config/) });
  }, 60_000);
});

describe("replayTrace with a token budget", () => {
  it("saves the action of the model call that broke the budget but not its tokens, which were spent", () => {
    const steps = [user("Go.")];
    for (let i = 0; i < 4; i++) steps.push(...call("step", { i }, "ok", { input: 100, output: 50 }));
    const t = trace(steps);
    const r = replayTrace(t, setOf(new TerminationController({ maxTokens: 400, warnAtFraction: 0 })), { findings: [] });
    // 150 tokens per call: the third call's usage (450) breaks the budget at step 5
    expect(r.interventions.map((i) => [i.step, i.decision, i.event])).toEqual([[5, "stop", "usage"]]);
    expect(r.steps_saved).toBe(4); // steps 5..8
    expect(r.tokens_saved).toBe(150); // only the fourth call's tokens
  });
});

describe("ReplayCollector", () => {
  it("reports a trace the replay cannot handle in its row and the totals, and replays the rest", () => {
    // a claim detector that breaks on one trace's text stands for any failure inside the replay
    const c = new ReplayCollector("default", {
      detectClaim: (text) => {
        if (text.includes("boom")) throw new Error("claim detector broke");
        return { claimsSuccess: false };
      },
    });
    const f: Finding = { mode: "1.3", steps: [1], confidence: 0.9, evidence: "x", detector: "rules/x" };
    const broken = c.add(trace([user("Go."), { agent: "a", role: "assistant", kind: "message", text: "boom" }]), [f]);
    expect(broken).toMatchObject({ interventions: [], steps_saved: 0, tokens_source: "none", errors: [{ source: "replay", message: "claim detector broke" }] });
    expect(broken.findings).toEqual([{ mode: "1.3", detector: "rules/x", steps: [1] }]);
    const same = () => call("get_alerts", {}, "[]");
    c.add(trace([user("Check."), ...same(), ...same(), ...same()]), []);
    const s = c.summary();
    expect(s.totals).toMatchObject({ traces: 2, errors: 1, intervened: 1 });
  });
});

describe("replay, preset default, on the ITBench mistral run that stops after one sentence", async () => {
  const file = corpus("itbench", "rollouts", "rollout-2026-01-15T12-26-09-019bc2b1-77dd-7072-9bdb-834ec3f5d5fe.jsonl");
  const { traces } = await readAll(file);
  const t = traces[0]!;
  const tc = (s: ReplaySummary) => s.traces[0]!.interventions.filter((i) => i.guard === "termination-controller");

  it("intervenes as itbench-sre does: the deliverable comes from task.benchmark, and no action at all is premature", () => {
    expect(t.task?.benchmark).toBe("itbench-sre");
    expect(t.steps.some((s) => s.kind === "tool_call")).toBe(false);
    const last = t.steps.at(-1)!;
    const sre = tc(replaySummary(traces, "itbench-sre"));
    const def = tc(replaySummary(traces, "default"));
    expect(sre).toHaveLength(1);
    expect(def).toEqual(sre);
    expect(def[0]).toMatchObject({ decision: "require", mode: "3.1", step: last.index, event: "completion" });
    expect(def[0]!.reason).toMatch(/agent_output\.json readable.*; completion without any action \(no tool call\) although every itbench-sre task asks for work/);
    expect(replaySummary(traces, "default").highlights).toContainEqual(expect.objectContaining({ kind: "ended_without_deliverable", trace_id: t.id }));
  });

  it("without a benchmark in the trace, the task and the codex harness still make it a termination case", () => {
    const bare: Trace = { ...t, task: { ...t.task!, benchmark: undefined } };
    delete bare.task!.benchmark;
    const def = tc(replaySummary([bare], "default"));
    expect(def).toEqual([expect.objectContaining({ decision: "require", mode: "3.1", step: t.steps.at(-1)!.index })]);
    expect(def[0]!.reason).toBe('completion without any action (no tool call) although the task asks for work ("investigation")');
  });
});
