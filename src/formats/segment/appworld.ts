import type { StepDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { joinBody, splitLines, type Segmented } from "./types.js";

/**
 * AppWorld multi-agent traces (a Supervisor agent plus one agent per app): marker lines at column 0, each followed
 * by an indented body.
 *
 *   `Response from <X> Agent`            → X's reply (Python code with `#` comments), kind message
 *   `Message to <X> Agent`               → a message delivered to X by the last agent that spoke (the user before
 *                                          any agent has), kind handoff
 *   `Reply from <X> Agent to <Y>`        → X answering Y
 *   `Code Execution Output`              → what running the last reply printed (tool_result of the environment)
 *   `Entering/Exiting <X> Agent message loop` → events
 *
 * The text keeps the marker line, so the recipient of a message is never lost. Text before the first marker (the
 * task banner) becomes a user message.
 */

const MARKER = /^(Response from (.+?) Agent|Message to (.+?) Agent|Reply from (.+?) Agent to (.+?)|Code Execution Output|(?:Entering|Exiting) (.+?) Agent message loop)\s*:?\s*$/;

/** Removes the body indentation AppWorld writes; lines at column 0 (excerpt marks such as `[...]`) stay as they are. */
function unindent(lines: string[]): string[] {
  const depths = lines.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)![0].length).filter((d) => d > 0);
  const cut = depths.length ? Math.min(...depths) : 0;
  return lines.map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)![0].length)));
}

export function looksLikeAppWorld(text: string): boolean {
  const head = text.slice(0, 64 * 1024);
  return /^Response from .+? Agent\s*$/m.test(head) && /^(?:Message to .+? Agent|Code Execution Output|Reply from .+? Agent to .+)\s*$/m.test(head);
}

export function segmentAppWorld(text: string): Segmented | undefined {
  if (!looksLikeAppWorld(text)) return undefined;
  const lines = splitLines(text);
  const steps: StepDraft[] = [];
  let lastSpeaker: string | undefined;
  let i = 0;
  while (i < lines.length) {
    const m = MARKER.exec(lines[i]!);
    let j = i + 1;
    while (j < lines.length && !MARKER.exec(lines[j]!)) j++;
    const ref = { line: i + 1 };
    if (!m) {
      const body = joinBody(lines.slice(i, j));
      if (body) steps.push({ agent: "user", role: "user", kind: "message", text: body, ref });
      i = j;
      continue;
    }
    const text = joinBody([lines[i]!.trim(), ...unindent(lines.slice(i + 1, j))]);
    if (m[2]) {
      lastSpeaker = m[2].trim();
      steps.push({ agent: lastSpeaker, role: "assistant", kind: "message", text, ref });
    } else if (m[3]) {
      const from = lastSpeaker ?? "user";
      steps.push({ agent: from, role: from === "user" ? "user" : "assistant", kind: "handoff", text, ref });
    } else if (m[4]) {
      steps.push({ agent: m[4].trim(), role: "assistant", kind: "message", text, ref });
    } else if (m[1] === "Code Execution Output") {
      steps.push(compact({ agent: "environment", role: "tool" as const, kind: "tool_result" as const, text, tool: { name: "code_execution", output: joinBody(unindent(lines.slice(i + 1, j))) }, ref }));
    } else {
      steps.push({ agent: "system", role: "system", kind: "event", text, ref });
    }
    i = j;
  }
  return { steps, segmentation: "framework", splitter: "appworld", metadata: {} };
}
