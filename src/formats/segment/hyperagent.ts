import type { StepDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { arr, asText, str } from "../common/index.js";
import { joinBody, jsonObject, splitLines, type Segmented } from "./types.js";

/**
 * HyperAgent logs: `HyperAgent_<instance> - INFO - <label>: <text>` lines, each followed by continuation lines
 * (the Planner's `Intern Name:` / `Subgoal:` delegation, code blocks, observations). MAST-Data stores them as raw
 * text or as JSON `{instance_id, problem_statement, trajectory:[lines]}`. Labels:
 *
 *   `Planner's Response:`                      → Planner
 *   `Inner-Navigator-Assistant's Response:`    → Navigator (likewise Editor, Executor)
 *   `Navigator->Planner:`                      → Navigator handing its result back (kind handoff)
 *   `Initialized HyperAgent instance …`, `Initialized tools` → system events
 *
 * Tools the inner assistants call appear as `result = <tool>._run(…)` in `Action:` code blocks; each becomes a
 * tool_call step (its observation arrives in the next response's text, so there is no separate result to link).
 */

const LINE = /^HyperAgent_(\S+) - (INFO|WARNING|ERROR|DEBUG) - (.*)$/;

export const looksLikeHyperAgent = (text: string): boolean => /^\s*"?HyperAgent_\S+ - (?:INFO|WARNING|ERROR) - /m.test(text.slice(0, 64 * 1024));

/** Agent and kind of a label; undefined for a line that is not a speaker label. */
function speaker(message: string): { agent: string; kind: StepDraft["kind"] } | undefined {
  let m = /^Inner-([A-Za-z]+)-Assistant's Response:/.exec(message);
  if (m) return { agent: m[1]!, kind: "message" };
  m = /^([A-Za-z][\w ]*?)->([A-Za-z][\w ]*?):/.exec(message);
  if (m) return { agent: m[1]!.trim(), kind: "handoff" };
  m = /^([A-Za-z][\w ]*?)'s Response:/.exec(message);
  if (m) return { agent: m[1]!.trim(), kind: "message" };
  return undefined;
}

function toolCalls(agent: string, body: string, ref: StepDraft["ref"]): StepDraft[] {
  const out: StepDraft[] = [];
  for (const m of body.matchAll(/\b([A-Za-z_]\w*)\._run\(([^\n]*)\)/g)) {
    out.push({ agent, role: "assistant", kind: "tool_call", text: `${m[1]}._run(${m[2]})`, tool: { name: m[1]!, args: m[2] }, ref });
  }
  return out;
}

function segmentLines(lines: string[]): { steps: StepDraft[]; instances: Set<string> } {
  const steps: StepDraft[] = [];
  const instances = new Set<string>();
  let i = 0;
  while (i < lines.length) {
    const m = LINE.exec(lines[i]!.replace(/^\s*"/, ""));
    let j = i + 1;
    while (j < lines.length && !LINE.exec(lines[j]!.replace(/^\s*"/, ""))) j++;
    if (!m) {
      const body = joinBody(lines.slice(i, j));
      if (body) steps.push({ agent: "system", role: "system", kind: "event", text: body, ref: { line: i + 1 } });
      i = j;
      continue;
    }
    instances.add(m[1]!);
    const message = m[3]!;
    const body = joinBody([message, ...lines.slice(i + 1, j)]);
    const who = speaker(message);
    const ref = { line: i + 1 };
    if (who) {
      steps.push({ agent: who.agent, role: "assistant", kind: who.kind, text: body, ref });
      if (who.kind === "message") steps.push(...toolCalls(who.agent, body, ref));
    } else {
      steps.push(compact({ agent: "system", role: "system" as const, kind: m[2] === "ERROR" ? ("error" as const) : ("event" as const), text: body, ref }));
    }
    i = j;
  }
  return { steps, instances };
}

export function segmentHyperAgent(text: string): Segmented | undefined {
  const t = text.trimStart();
  if (t.startsWith("{")) {
    const doc = jsonObject(t);
    const items = doc ? arr(doc.trajectory) : [];
    if (!doc || items.length === 0 || !items.every((x) => typeof x === "string")) return undefined;
    const joined = (items as string[]).join("\n");
    if (!looksLikeHyperAgent(joined)) return undefined;
    // an item is usually one log line but may hold several: remember which item each line came from
    const itemOfLine: number[] = [];
    (items as string[]).forEach((item, k) => splitLines(item).forEach(() => itemOfLine.push(k)));
    const { steps, instances } = segmentLines(splitLines(joined));
    const problem = Array.isArray(doc.problem_statement) ? doc.problem_statement.map((x) => asText(x) ?? "").join("\n") : str(doc.problem_statement);
    return {
      steps: steps.map((s) => ({ ...s, ref: compact({ ...s.ref, line: undefined, pointer: s.ref?.line ? `/trajectory/${itemOfLine[s.ref.line - 1] ?? 0}` : undefined }) })),
      segmentation: "framework",
      splitter: "hyperagent",
      task: compact({ id: str(doc.instance_id) ?? [...instances][0], text: problem || undefined }),
      metadata: {},
    };
  }
  if (!looksLikeHyperAgent(text)) return undefined;
  const { steps, instances } = segmentLines(splitLines(text));
  return { steps, segmentation: "framework", splitter: "hyperagent", task: instances.size ? { id: [...instances][0] } : undefined, metadata: {} };
}
