import { buildTrace, quoteInSteps, type Finding, type Step, type StepDraft, type Task, type Trace } from "../trace/index.js";
import { detectionContext } from "./context.js";
import type { Detector } from "./types.js";

/** Tiny trace builders for detector tests: each helper is one canonical step. */
export const user = (text: string, tags?: string[]): StepDraft => ({ agent: "user", role: "user", kind: "message", text, ...(tags ? { tags } : {}) });
export const say = (text: string, agent = "agent"): StepDraft => ({ agent, role: "assistant", kind: "message", text });
export const think = (text: string): StepDraft => ({ agent: "agent", role: "assistant", kind: "reasoning", text });
export const empty = (): StepDraft => ({ agent: "agent", role: "assistant", kind: "message", text: "", tags: ["empty"] });
let n = 0;
/** A tool call and its result, linked. */
export function call(name: string, args: unknown, output: string, exitCode?: number): StepDraft[] {
  const callId = `c${n++}`;
  return [
    { agent: "agent", role: "assistant", kind: "tool_call", text: `${name}(${JSON.stringify(args)})`, tool: { name, callId, args } },
    { agent: name, role: "tool", kind: "tool_result", text: output, tool: { name, callId, output, ...(exitCode !== undefined ? { exitCode, isError: exitCode !== 0 } : {}) } },
  ];
}
export const plan = (items: { step: string; status: string }[]): StepDraft => ({
  agent: "agent", role: "assistant", kind: "plan", text: JSON.stringify({ plan: items }), tool: { name: "update_plan", args: { plan: items } },
});
export function trace(...steps: (StepDraft | StepDraft[])[]): Trace {
  return buildTrace({ id: `t${n++}`, source: { file: "test", format: "test", index: 0 } }, steps.flat());
}

/** Runs one detector on a trace with its context; `success` sets the scored outcome (unknown by default). */
export function detectWith(d: Detector, t: Trace, success: boolean | null = null): Finding[] {
  return d.detect(t, detectionContext(t, { success, score: null, metric: null }));
}

/** A system (policy, instructions) step. */
export const system = (text: string): StepDraft => ({ agent: "system", role: "system", kind: "message", text });

/** A trace with a task: its statement, the dataset's expected answer or actions, and the benchmark. */
export function taskTrace(task: Task, ...steps: (StepDraft | StepDraft[])[]): Trace {
  return buildTrace({ id: `t${n++}`, source: { file: "test", format: "test", index: 0 }, task }, steps.flat());
}

/** The finding's evidence is a verbatim quote of one of the steps it cites (what runDetectors keeps). */
export function quotedFromCited(t: Trace, f: Finding): boolean {
  const cited = f.steps.map((i) => t.steps[i]).filter((s): s is Step => s !== undefined);
  return cited.length === f.steps.length && quoteInSteps(f.evidence, cited);
}
