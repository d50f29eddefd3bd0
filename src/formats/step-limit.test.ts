import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../testing/corpus.js";
import type { Step, Trace } from "../trace/index.js";
import { STEP_LIMIT_TAG } from "./common/step-limit.js";
import { readAll } from "./read.js";

/**
 * Runs that ended on a harness cap carry a `termination` step tagged `step-limit` (docs/CONTRIBUTING-ADAPTERS.md).
 * Per corpus source: how many runs are tagged, which, and one run that must stay untagged.
 */

type Raw = Record<string, any>;
const json = (...parts: string[]): any => JSON.parse(readFileSync(corpus(...parts), "utf8"));
const capSteps = (t: Trace): Step[] => t.steps.filter((s) => s.tags?.includes(STEP_LIMIT_TAG));
const tagged = (traces: Trace[]) => traces.filter((t) => capSteps(t).length > 0);
const byId = (traces: Trace[], id: string) => {
  const t = traces.find((x) => x.id === id);
  if (!t) throw new Error(`no trace ${id}`);
  return t;
};
const assistantTurns = (traj: Raw[]) => traj.filter((m) => m.role === "assistant").length;

/** The cap step is one termination step, the trace's last, from the harness (or Magentic-One's orchestrator). */
function expectCapAtEnd(t: Trace) {
  const caps = capSteps(t);
  expect(caps).toHaveLength(1);
  expect(caps[0]).toMatchObject({ kind: "termination", index: t.steps.length - 1 });
}

describe("step-limit termination steps on the corpus", () => {
  const read: Record<string, Trace[]> = {};
  beforeAll(async () => {
    for (const folder of ["openhands", "tau-bench", "agentrx", "who_and_when", "tau2-bench", "mini-swe-agent", "swe-agent"])
      read[folder] = (await readAll(corpus(folder))).traces;
  });
  const ofFormat = (folder: string, format: string) => read[folder]!.filter((t) => t.source.format === format);

  it("openhands event streams: 1 run, whose record error says the controller hit max iterations, in its own words", () => {
    const events = ofFormat("openhands", "openhands");
    expect(tagged(events).map((t) => t.id)).toEqual(["ponylang__ponyc-4588"]);
    const line = readFileSync(corpus("openhands", "multi-swe-bench_llama-4-maverick", "output.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Raw)
      .find((r) => r.instance_id === "ponylang__ponyc-4588")!;
    const capped = byId(events, "ponylang__ponyc-4588");
    expectCapAtEnd(capped);
    expect(capSteps(capped)[0]).toMatchObject({ agent: "openhands", role: "system", text: line.error, ref: { pointer: "/error" } });
    expect(line.error).toMatch(/^RuntimeError: Agent reached maximum iteration in headless mode\. Current iteration: 50, max iteration: 50$/);
    // counter-example: same run, ended by the agent's finish, no error
    const finished = byId(events, "ponylang__ponyc-4593");
    expect(capSteps(finished)).toEqual([]);
    expect(finished.steps.at(-1)!.kind).toBe("termination");
  });

  it("openhands completion logs: none of the 6 runs used its 50 iterations (no cap step)", () => {
    const logs = ofFormat("openhands", "openhands-llm-completions");
    expect(logs).toHaveLength(6);
    expect(tagged(logs)).toEqual([]);
    // counter-example: the longest conversation, 15 LLM calls of 50, ending with finish
    const longest = byId(logs, "django__django-11206");
    expect(longest.steps.filter((s) => s.role === "assistant" && s.usage !== undefined).length).toBeLessThan(50);
    expect(longest.steps.at(-1)).toMatchObject({ kind: "termination", tool: { name: "finish" } });
  });

  it("tau-bench: 5 of 200 runs used all 30 agent turns without ###STOP### or a transfer", () => {
    const runs = read["tau-bench"]!;
    const ids = tagged(runs).map((t) => t.id).sort();
    expect(ids).toEqual(["tau-bench:airline:2:1", "tau-bench:airline:33:0", "tau-bench:airline:46:3", "tau-bench:airline:9:2", "tau-bench:airline:9:3"]);
    const raw = json("tau-bench", "gpt-4o-airline.json") as Raw[];
    for (const t of tagged(runs)) {
      expectCapAtEnd(t);
      expect(capSteps(t)[0]).toMatchObject({ agent: "tau-bench", role: "system", text: expect.stringMatching(/^max_num_steps \(30\) reached/) });
      const rec = raw[t.source.index]!;
      expect(assistantTurns(rec.traj)).toBe(30);
      expect(String(rec.traj.at(-1).content ?? "")).not.toContain("###STOP###");
    }
    // no run has more than 30 agent turns: 30 is the budget of this file
    expect(Math.max(...raw.map((r) => assistantTurns(r.traj)))).toBe(30);
    // counter-example: 30 agent turns too, but the user simulator ended it with ###STOP###
    const stopped = byId(runs, "tau-bench:airline:3:0");
    expect(assistantTurns(raw[stopped.source.index]!.traj)).toBe(30);
    expect(raw[stopped.source.index]!.traj.at(-1).content).toContain("###STOP###");
    expect(capSteps(stopped)).toEqual([]);
  });

  it("agentrx tau-bench retail: 1 of 29 runs was cut by the 30-turn budget (the same mapper as tau-bench)", () => {
    const runs = read["agentrx"]!.filter((t) => t.framework === "tau-bench");
    expect(runs).toHaveLength(29);
    expect(tagged(runs).map((t) => t.id)).toEqual(["agentrx:tau-bench:retail:20:20"]);
    expectCapAtEnd(byId(runs, "agentrx:tau-bench:retail:20:20"));
    // counter-example: 28 turns, ended by the user
    const raw = json("agentrx", "tau_retail", "tau_dataset_failed.json") as Raw[];
    const stopped = byId(runs, "agentrx:tau-bench:retail:104:104");
    expect(assistantTurns(raw[stopped.source.index]!.traj)).toBe(28);
    expect(capSteps(stopped)).toEqual([]);
  });

  it("Magentic-One (Who&When Hand-Crafted, AgentRx): 6 runs each end on 'Max rounds (30) reached.'; the time cap is not tagged", () => {
    const handCrafted = read["who_and_when"]!.filter((t) => t.framework === "magentic-one");
    const agentrxMagentic = read["agentrx"]!.filter((t) => t.framework === "magentic-one");
    for (const runs of [handCrafted, agentrxMagentic]) {
      expect(tagged(runs)).toHaveLength(6);
      for (const t of tagged(runs)) {
        expectCapAtEnd(t);
        expect(capSteps(t)[0]).toMatchObject({ agent: "Orchestrator", text: expect.stringMatching(/^Max rounds \(30\) reached\./) });
      }
      // counter-example: the orchestrator's time cap ends a run too, but it is not a step cap
      const timedOut = runs.filter((t) => t.steps.at(-1)!.kind === "termination" && /^Max time \(1500s\) reached\./.test(t.steps.at(-1)!.text ?? ""));
      expect(timedOut).toHaveLength(4);
      expect(tagged(timedOut)).toEqual([]);
    }
  });

  it("Who&When Algorithm-Generated: 47 of 126 AG2 histories stop at 10 messages without TERMINATE", () => {
    const runs = read["who_and_when"]!.filter((t) => t.framework === "ag2");
    expect(runs).toHaveLength(126);
    const capped = tagged(runs);
    expect(capped).toHaveLength(47);
    for (const t of capped) {
      expectCapAtEnd(t);
      expect(capSteps(t)[0]).toMatchObject({ agent: "ag2", role: "system", ref: { pointer: "/history" } });
      const raw = json("who_and_when", "Algorithm-Generated", t.source.file.split("/").pop()!);
      expect(raw.history).toHaveLength(10);
      expect(raw.history.at(-1).content ?? "").not.toMatch(/TERMINATE\s*$/);
    }
    // counter-example: 10 messages as well, but the last one ends with TERMINATE
    const ended = runs.filter((t) => t.steps.length === 10 && /TERMINATE\s*$/.test(t.steps.at(-1)!.text ?? ""));
    expect(ended).toHaveLength(23);
    expect(tagged(ended)).toEqual([]);
    expect(capSteps(byId(runs, "who_and_when:algorithm-generated:4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2"))).toEqual([]);
  });

  it("tau2-bench: the 1 simulation with termination_reason max_steps carries the tag on its termination step", () => {
    const sims = read["tau2-bench"]!;
    expect(tagged(sims).map((t) => t.id)).toEqual(["4d9c488b-3d18-4f5c-a59c-8573f2792983"]);
    const capped = byId(sims, "4d9c488b-3d18-4f5c-a59c-8573f2792983");
    expectCapAtEnd(capped);
    expect(capSteps(capped)[0]).toMatchObject({ text: "termination_reason: max_steps" });
    // counter-example: every other simulation stopped on user_stop
    const userStop = sims.filter((t) => t.metadata.terminationReason === "user_stop");
    expect(userStop).toHaveLength(sims.length - 1);
    expect(tagged(userStop)).toEqual([]);
  });

  it("mini-SWE-agent and SWE-agent: every corpus run was submitted, none is tagged", () => {
    for (const [folder, status] of [["mini-swe-agent", "Submitted"], ["swe-agent", "submitted"]] as const) {
      const runs = read[folder]!;
      expect(runs.length).toBeGreaterThan(0);
      expect(runs.every((t) => t.metadata.exitStatus === status)).toBe(true);
      expect(tagged(runs)).toEqual([]);
    }
  });
});
