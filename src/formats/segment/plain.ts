import type { StepDraft } from "../../trace/index.js";
import { joinBody, splitLines, type Segmented } from "./types.js";

/**
 * Fallback for trajectory text no dedicated splitter recognises (Magentic-One and OpenManus in MAST-Data, unknown
 * frameworks). Tries, in order, and always marks the result `segmentation: "heuristic"`:
 *
 *   1. separator lines naming the speaker: `---------- WebSurfer ----------` (AutoGen console output);
 *   2. speaker prefixes at line start: `user_proxy (to assistant):`, `Planner: …` — only when at least two
 *      distinct speakers each open a turn, so ordinary `Note:` / `Thought:` lines do not split a message;
 *   3. timestamped log lines (`2025-01-17 11:40:27 …`): one step per log record with its continuation lines;
 *   4. blank-line separated blocks.
 */

const SEPARATOR = /^-{5,}\s*([A-Za-z][\w .()-]{0,60}?)\s*-{5,}\s*$/;
const SPEAKER = /^([A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,3})(?: \(to ([^)]+)\))?:(?:\s+(.*))?$/;
const TIMESTAMPED = /^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/;

/** Words that start ordinary lines with a colon and are never speakers. */
const NOT_SPEAKERS = new Set(
  "thought action action input observation note answer final answer question step example output input error warning traceback result code plan subgoal summary task reason reasoning response request http https file path usage args arguments content role name status explanation instructions solution problem query context reply message".split(
    " ",
  ),
);
const isSpeaker = (name: string) => !NOT_SPEAKERS.has(name.toLowerCase()) && !/^(?:step|turn|round) \d+$/i.test(name);

const roleOf = (agent: string): StepDraft["role"] => (/^(user|human|customer)$/i.test(agent) ? "user" : "assistant");

function byStarts(lines: string[], starts: Array<{ line: number; agent: string; first?: string }>): StepDraft[] {
  const steps: StepDraft[] = [];
  if (starts[0] && starts[0].line > 0) {
    const pre = joinBody(lines.slice(0, starts[0].line));
    if (pre) steps.push({ agent: "unknown", role: "user", kind: "message", text: pre, ref: { line: 1 } });
  }
  starts.forEach((s, k) => {
    const end = starts[k + 1]?.line ?? lines.length;
    const body = joinBody([...(s.first !== undefined ? [s.first] : []), ...lines.slice(s.line + 1, end)]);
    steps.push({ agent: s.agent, role: roleOf(s.agent), kind: "message", text: body, ref: { line: s.line + 1 }, ...(body ? {} : { tags: ["empty"] }) });
  });
  return steps;
}

export function segmentPlain(text: string): Segmented {
  const lines = splitLines(text);
  const result = (steps: StepDraft[], mode: string): Segmented => ({ steps, segmentation: "heuristic", splitter: `plain:${mode}`, metadata: { segmentation: "heuristic" } });

  const separators = lines.flatMap((l, i) => {
    const m = SEPARATOR.exec(l);
    return m ? [{ line: i, agent: m[1]!.trim() }] : [];
  });
  if (separators.length >= 2) return result(byStarts(lines, separators), "separators");

  const speakers = lines.flatMap((l, i) => {
    const m = SPEAKER.exec(l);
    return m && isSpeaker(m[1]!) ? [{ line: i, agent: m[1]!, first: m[3] }] : [];
  });
  if (new Set(speakers.map((s) => s.agent)).size >= 2) return result(byStarts(lines, speakers), "speakers");

  const stamped = lines.flatMap((l, i) => (TIMESTAMPED.test(l) ? [{ line: i, agent: "unknown", first: l }] : []));
  if (stamped.length >= 2) return result(byStarts(lines, stamped), "log-lines");

  const steps: StepDraft[] = [];
  let start = -1;
  lines.forEach((l, i) => {
    if (l.trim() !== "" && start < 0) start = i;
    if ((l.trim() === "" || i === lines.length - 1) && start >= 0) {
      const end = l.trim() === "" ? i : i + 1;
      steps.push({ agent: "unknown", role: "assistant", kind: "message", text: joinBody(lines.slice(start, end)), ref: { line: start + 1 } });
      start = -1;
    }
  });
  return result(steps, "blocks");
}
