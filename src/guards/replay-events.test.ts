import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { chatMessagesToSteps } from "../formats/common/index.js";
import { readAll } from "../formats/index.js";
import { corpus } from "../testing/corpus.js";
import { buildTrace, type StepDraft } from "../trace/index.js";
import { DEFAULT_GUARD_CONFIG, guardSetFromConfig, ITBENCH_SRE_GUARD_CONFIG } from "./config.js";
import { GuardSet } from "./pipeline.js";
import { guardEventsFromSteps, replaySteps } from "./replay-events.js";
import { TerminationController } from "./termination-controller.js";
import { ManualClock } from "./types.js";

const trace = (steps: StepDraft[]) => buildTrace({ id: "t", source: { file: "mem", format: "test", index: 0 } }, steps);

describe("guardEventsFromSteps", () => {
  it("maps each step kind to the event a live loop would report", () => {
    const t = trace([
      { agent: "user", role: "user", kind: "message", text: "Diagnose the cart failure." },
      { agent: "sre", role: "assistant", kind: "reasoning", text: "Start with the pods." },
      { agent: "sre", role: "assistant", kind: "plan", tool: { name: "update_plan", callId: "p1", args: { plan: [{ step: "list pods", status: "completed" }, { step: "read logs", status: "in_progress" }] } } },
      { agent: "sre", role: "assistant", kind: "tool_call", time: "2026-01-15T14:12:52.000Z", usage: { input: 1200, output: 80 }, tool: { name: "shell", callId: "c1", args: { command: ["kubectl", "get", "pods"] } } },
      { agent: "tool", role: "tool", kind: "tool_result", tool: { name: "tool", callId: "c1", output: "cart 0/1 CrashLoopBackOff", exitCode: 0 } },
      { agent: "sre", role: "assistant", kind: "tool_call", tool: { name: "grep_logs", args: { q: "error" }, output: "flag cartFailure=on", isError: false } },
      { agent: "sre", role: "assistant", kind: "llm_call", usage: { input: 50 } },
      { agent: "sre", role: "assistant", kind: "message", text: "Root cause identified: flagd-config turns on cartFailure." },
    ]);
    const events = guardEventsFromSteps(t.steps);
    expect(events.map((e) => e.type)).toEqual(["message", "message", "plan", "tool_call", "usage", "tool_call", "tool_result", "tool_call", "tool_result", "usage", "completion"]);
    expect(events[1]).toMatchObject({ role: "assistant", reasoning: true, step: 1 });
    expect(events[2]).toMatchObject({ type: "plan", items: [{ text: "list pods", status: "done" }, { text: "read logs", status: "in_progress" }] });
    expect(events[4]).toEqual({ type: "usage", step: 3, agent: "sre", at: Date.parse("2026-01-15T14:12:52.000Z"), input: 1200, output: 80 });
    // the result takes the tool name and arguments of its linked call
    expect(events[6]).toMatchObject({ type: "tool_result", step: 4, result: { callId: "c1", name: "shell", args: { command: ["kubectl", "get", "pods"] }, output: "cart 0/1 CrashLoopBackOff", exitCode: 0 } });
    // a call step that stores its own output yields its result right after it
    expect(events[8]).toMatchObject({ type: "tool_result", step: 5, result: { name: "grep_logs", output: "flag cartFailure=on", isError: false } });
    expect(events[10]).toMatchObject({ type: "completion", step: 7, claimsSuccess: true });
  });

  it("finds completions: the last agent action, and claims after which the agent yields — never questions", () => {
    const t = trace([
      { agent: "user", role: "user", kind: "message", text: "Fix the build." },
      { agent: "a", role: "assistant", kind: "message", text: "All tests pass now, the build is fixed." },
      { agent: "user", role: "user", kind: "message", text: "I don't see agent_output.json. Please resume." },
      { agent: "a", role: "assistant", kind: "message", text: "I have fixed the import, next I'll run the tests." },
      { agent: "a", role: "assistant", kind: "tool_call", tool: { name: "run_tests", callId: "1" } },
      { agent: "t", role: "tool", kind: "tool_result", tool: { name: "run_tests", callId: "1", output: "12 passed" } },
      { agent: "a", role: "assistant", kind: "message", text: "Should I also update the changelog?" },
      { agent: "user", role: "user", kind: "message", text: "No." },
      { agent: "a", role: "assistant", kind: "message", text: "Understood, leaving it as is." },
    ]);
    const kinds = guardEventsFromSteps(t.steps).map((e) => (e.type === "completion" ? `completion:${e.claimsSuccess}` : e.type === "message" ? `${e.role}` : e.type));
    expect(kinds).toEqual(["user", "completion:true", "user", "assistant", "tool_call", "tool_result", "assistant", "user", "completion:false"]);
  });

  it("does not end a multi-agent run at one agent's claim, and treats harness-refused turns and final-answer tools as attempts to end", () => {
    const t = trace([
      { agent: "user", role: "user", kind: "message", text: "Find the answer." },
      { agent: "Coder", role: "assistant", kind: "message", text: "The script executed successfully." },
      { agent: "Checker", role: "assistant", kind: "message", text: "Let me double-check the output format." },
      { agent: "Orchestrator", role: "assistant", kind: "handoff", text: "WebSurfer, search again." },
      { agent: "a", role: "assistant", kind: "message", text: "", tags: ["empty"] },
      { agent: "harness", role: "user", kind: "message", text: "I don't see agent_output.json file. Please resume.", tags: ["harness-retry"] },
      { agent: "a", role: "assistant", kind: "tool_call", tool: { name: "submit", callId: "s1", args: {} } },
      { agent: "t", role: "tool", kind: "tool_result", tool: { name: "submit", callId: "s1", output: "diff --git a/x b/x" } },
    ]);
    const kinds = guardEventsFromSteps(t.steps).map((e) => (e.type === "completion" ? `completion@${e.step}:${e.claimsSuccess}` : e.type));
    expect(kinds).toEqual(["message", "message", "message", "completion@4:false", "message", "tool_call", "completion@6:true", "tool_result"]);
  });

  it("lets a custom claim detector decide", () => {
    const t = trace([{ agent: "a", role: "assistant", kind: "message", text: "FINAL ANSWER: 42" }]);
    const [e] = guardEventsFromSteps(t.steps, { detectClaim: (text) => ({ claimsSuccess: text.startsWith("FINAL ANSWER") }) });
    expect(e).toMatchObject({ type: "completion", claimsSuccess: true });
  });

  it("replays a recorded run through a guard set and says where it would have stopped", () => {
    const steps: StepDraft[] = [{ agent: "user", role: "user", kind: "message", text: "List everything." }];
    for (let i = 0; i < 6; i++) steps.push({ agent: "a", role: "assistant", kind: "tool_call", tool: { name: "list", callId: `c${i}`, args: { page: i } } });
    const set = new GuardSet([new TerminationController({ maxSteps: 4 })], { clock: new ManualClock() });
    const r = replaySteps(trace(steps).steps, set);
    expect(r.stoppedAt).toEqual({ seq: 5, step: 5 });
    expect(r.interventions.map((d) => [d.step, d.action])).toEqual([[4, "warn"], [5, "stop"], [6, "stop"]]);
  });
});

describe("replay on real traces: tau-bench gpt-4o airline (200 trajectories)", () => {
  const data = JSON.parse(readFileSync(corpus("tau-bench", "gpt-4o-airline.json"), "utf8")) as { reward: number; traj: unknown[] }[];
  const traces = data.map((rec, i) => ({ reward: rec.reward, trace: buildTrace({ id: `airline-${i}`, source: { file: "gpt-4o-airline.json", format: "openai-chat", index: i } }, chatMessagesToSteps(rec.traj)) }));

  it("turns every tool call and result into events, each result named after its call", () => {
    expect(traces).toHaveLength(200);
    for (const { trace: t } of traces) {
      const events = guardEventsFromSteps(t.steps);
      expect(events.filter((e) => e.type === "tool_call")).toHaveLength(t.steps.filter((s) => s.kind === "tool_call").length);
      const results = events.filter((e) => e.type === "tool_result");
      expect(results).toHaveLength(t.steps.filter((s) => s.kind === "tool_result").length);
      for (const r of results) expect(r.result.name).toBe(t.steps[t.steps[r.step!]!.tool!.callIndex!]!.tool!.name);
    }
  });

  it("runs the default guards without errors, and loop warnings fall only on failed runs", () => {
    const set = guardSetFromConfig(DEFAULT_GUARD_CONFIG, { clock: new ManualClock() });
    const loopWarnings: { id: string; reward: number; step?: number; reason: string }[] = [];
    for (const { trace: t, reward } of traces) {
      const r = replaySteps(t.steps, set);
      expect(r.verdicts.flatMap((v) => v.errors)).toEqual([]);
      for (const d of r.interventions) if (d.guard === "loop-detector") loopWarnings.push({ id: t.id, reward, step: d.step, reason: d.reason });
    }
    expect(loopWarnings.length).toBeGreaterThan(0);
    expect(loopWarnings.filter((w) => w.reward === 1)).toEqual([]);
    // airline-111 retries book_reservation three times with the same arguments and gets the same payment error
    const w = loopWarnings.find((x) => x.id === "airline-111");
    expect(w?.reason).toMatch(/^repeated call #3 of book_reservation/);
    expect(traces[111]!.trace.steps[w!.step!]!.tool?.name).toBe("book_reservation");
  });
});

describe("replay on real traces: ITBench SRE Codex rollouts with the itbench-sre preset", async () => {
  const { traces } = await readAll(corpus("itbench", "rollouts"));
  const set = guardSetFromConfig(ITBENCH_SRE_GUARD_CONFIG, { clock: new ManualClock() });
  const replays = traces.map((t) => ({ trace: t, r: replaySteps(t.steps, set) }));

  it("replays all 28 rollouts without guard errors", () => {
    expect(replays).toHaveLength(28);
    expect(replays.flatMap(({ r }) => r.verdicts.flatMap((v) => v.errors))).toEqual([]);
  });

  it("catches the gpt-oss runs that never act: the harness nudge repeats (1.5) and the end comes without the deliverable (3.1)", () => {
    const idle = replays.filter(({ trace: t }) => /gpt-oss/.test(t.model ?? "") && !t.steps.some((s) => s.kind === "tool_call"));
    expect(idle).toHaveLength(15); // MANIFEST: 15 gpt-oss rollouts with 0 tool calls, each retried 4-5 times by the harness
    for (const { trace: t, r } of idle) {
      expect(r.interventions.some((d) => d.guard === "loop-detector" && d.mode === "1.5" && /same user instruction/.test(d.reason))).toBe(true);
      // every empty turn is an attempt to end — the harness answered each with a retry, and the last one ends the run —
      // and each is refused for the missing deliverable, from the very first one on
      const end = r.verdicts.filter((v) => v.event.type === "completion");
      const turns = t.steps.filter((s) => s.role === "assistant" && s.kind === "message");
      expect(end.map((v) => v.event.step)).toEqual(turns.map((s) => s.index));
      for (const v of end) expect(v.primary).toMatchObject({ action: "require", mode: "3.1", guard: "termination-controller" });
    }
  });

  it("lets the long productive Gemini run that wrote and validated agent_output.json finish without a block or stop", () => {
    const run = replays.find(({ trace: t }) => t.id.includes("019bc313-2cee-7763-b8b7-cdeaeeeb2319"));
    expect(run, "rollout 019bc313 (gemini-3-flash, 67 tool calls)").toBeDefined();
    expect(run!.trace.steps.filter((s) => s.kind === "tool_result").length).toBeGreaterThan(60);
    expect(run!.r.interventions.filter((d) => d.action !== "warn")).toEqual([]);
    expect(run!.r.verdicts.at(-1)).toMatchObject({ action: "continue", event: { type: "completion", claimsSuccess: true } });
  });
});
