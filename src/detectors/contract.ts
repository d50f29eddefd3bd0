import type { Step, Trace } from "../trace/index.js";

/**
 * A run's contract: the explicit, checkable requirements its task and instructions state, found in the task
 * statement and in the system/user steps before the agent's first action, plus what the dataset expects (tau-bench
 * expected actions, tau2 evaluation criteria). Only requirements a rule can check over the steps are extracted;
 * everything else is left to the judge.
 */
export interface Requirement {
  /** The requirement in the source's own words (a verbatim quote). */
  quote: string;
  /** Step that states it; -1 for the task statement. */
  step: number;
}

export interface ExpectedAction {
  name: string;
  args: Record<string, unknown>;
}

export interface TaskContract {
  /** Files the run must write (ITBench `agent_output.json`). */
  deliverables: (Requirement & { path: string })[];
  /** "Do not modify the tests": changes to test files are forbidden. */
  keepTestsUnchanged?: Requirement;
  /** Consequential (database-writing) actions need the user's explicit "yes" first (tau policies). */
  confirmBeforeWrite?: Requirement;
  /** One tool call per turn, and no message to the user in the same turn (tau policies). */
  oneActionPerTurn?: Requirement;
  /** One command per turn (SWE-agent: "only include a *SINGLE* command"). */
  oneCommandPerTurn?: Requirement;
  /** Results must come from running things, never guessed ("NEVER EVER GUESS THE TEST RESULT"). */
  noGuessing?: Requirement;
  /** The answer must rest on a named source ("Ensure the data … is from the 2011 census", "based on the image"). */
  sourceConstraint?: Requirement;
  /** The dataset's expected actions, in order (tau-bench `actions`, tau2 `evaluation_criteria.actions`). */
  expectedActions: ExpectedAction[];
  /** Facts the agent is expected to communicate (tau `outputs`, tau2 `communicate_info`). */
  expectedOutputs: string[];
}

/** Steps that instruct the agent: the system prompt and the user/harness turns before the agent's first action. */
export function instructionSteps(trace: Trace): Step[] {
  const firstAct = trace.steps.findIndex((s) => s.role === "assistant" && (s.kind === "tool_call" || s.kind === "message"));
  const end = firstAct === -1 ? trace.steps.length : firstAct;
  const out = trace.steps.slice(0, end).filter((s) => (s.role === "system" || s.role === "user") && (s.text ?? "").trim() !== "");
  // group chats that open with an agent restating the task and its manager's plan (AG2): that step instructs too
  const first = trace.steps[firstAct];
  const task = (trace.task?.text ?? "").trim().slice(0, 80);
  if (first && first.role === "assistant" && task && (first.text ?? "").includes(task)) out.push(first);
  return out;
}

/** A verbatim sentence of `text` around a match of `re`, at most `max` characters. */
export function sentenceOf(text: string, re: RegExp, max = 220): string | undefined {
  const m = re.exec(text);
  if (!m) return undefined;
  // the sentence starts after the last full stop, question or exclamation mark followed by a space, or line break
  let start = 0;
  for (const b of text.slice(0, m.index).matchAll(/[.!?]\s+|\n/g)) start = b.index + b[0].length;
  // a sentence ends at a full stop followed by a space or the end (not the dot in "agent_output.json"), or a line break
  const after = text.slice(m.index + m[0].length).search(/[.!?](?=\s|$)|\n/);
  const end = after === -1 ? text.length : m.index + m[0].length + after + 1;
  return text.slice(start, Math.min(end, start + max)).trim();
}

const DELIVERABLE_RE = /\b(?:write|save|create|produce|output|store|generate)\b[^.\n]{0,120}?[`'"]?((?:[\w.-]+\/)*[\w-]+\.(?:json|jsonl|md|txt|csv|ya?ml))\b/i;
const TESTS_RE = /\b(?:do not|don't|must not|should not|never)\s+(?:modify|change|edit|touch|alter)\b[^.\n]{0,40}\btests?\b/i;
const CONFIRM_RE = /\b(?:obtain|get|ask for)\b[^.\n]{0,40}\bexplicit\b[^.\n]{0,30}\bconfirmation\b/i;
const ONE_ACTION_RE = /\bonly make one tool call at a time\b/i;
const ONE_COMMAND_RE = /\bonly include a \*?single\*? command\b|\bone command at a time\b|\bexactly one (?:bash )?(?:command|code block)\b/i;
const NO_GUESS_RE = /\bnever(?: ever)? guess\b|\bdo not (?:guess|make up|fabricate)\b/i;
const SOURCE_RE = /\b(?:[Ee]nsure|[Mm]ust|[Mm]ake sure|[Ss]hould)\b[^.\n]{0,80}\b(?:from|based on|verified (?:from|against|with|on|using)|according to)\b[^.\n]{0,60}?\b(?:provided|given|attached|official|website|census|image|file|document|database|page|article|video|records?|\d{4}|[A-Z][a-z][\w&.-]*)\b[^.\n]{0,80}/;

function expected(trace: Trace): { actions: ExpectedAction[]; outputs: string[] } {
  const e = trace.task?.expected;
  if (!e || typeof e !== "object") return { actions: [], outputs: [] };
  const obj = e as Record<string, unknown>;
  const rawActions = Array.isArray(obj.actions) ? obj.actions : [];
  const actions: ExpectedAction[] = [];
  for (const a of rawActions) {
    if (!a || typeof a !== "object") continue;
    const r = a as Record<string, unknown>;
    // tau2 marks who performs each expected action: the user's own actions are not the agent's to take
    if (typeof r.requestor === "string" && r.requestor !== "assistant") continue;
    const args = (r.kwargs ?? r.arguments ?? {}) as Record<string, unknown>;
    if (typeof r.name === "string") actions.push({ name: r.name, args: args && typeof args === "object" ? args : {} });
  }
  const outs = [...(Array.isArray(obj.outputs) ? obj.outputs : []), ...(Array.isArray(obj.communicate_info) ? obj.communicate_info : [])];
  return { actions, outputs: outs.filter((x): x is string => typeof x === "string" && x.trim() !== "") };
}

/** Extracts the contract of a run (cheap: reads only the task and the instruction steps). */
export function extractContract(trace: Trace): TaskContract {
  const sources: { text: string; step: number }[] = [
    ...(trace.task?.text ? [{ text: trace.task.text, step: -1 }] : []),
    ...instructionSteps(trace).map((s) => ({ text: s.text ?? "", step: s.index })),
  ];
  const find = (re: RegExp): Requirement | undefined => {
    for (const s of sources) {
      const q = sentenceOf(s.text, re);
      if (q) return { quote: q, step: s.step };
    }
    return undefined;
  };
  const deliverables: TaskContract["deliverables"] = [];
  for (const s of sources) {
    const re = new RegExp(DELIVERABLE_RE.source, "gi");
    for (let m = re.exec(s.text); m; m = re.exec(s.text)) {
      const path = m[1]!;
      if (deliverables.some((d) => d.path === path)) continue;
      const q = sentenceOf(s.text.slice(m.index), /\S/);
      deliverables.push({ path, quote: q ?? m[0], step: s.step });
    }
  }
  const { actions, outputs } = expected(trace);
  const contract: TaskContract = { deliverables, expectedActions: actions, expectedOutputs: outputs };
  // the checkable requirements, each found by its wording in the task or the instructions
  const REQUIREMENTS: [keyof TaskContract, RegExp][] = [
    ["keepTestsUnchanged", TESTS_RE],
    ["confirmBeforeWrite", CONFIRM_RE],
    ["oneActionPerTurn", ONE_ACTION_RE],
    ["oneCommandPerTurn", ONE_COMMAND_RE],
    ["noGuessing", NO_GUESS_RE],
    ["sourceConstraint", SOURCE_RE],
  ];
  for (const [key, re] of REQUIREMENTS) {
    const r = find(re);
    if (r) (contract as unknown as Record<string, Requirement>)[key] = r;
  }
  return contract;
}
