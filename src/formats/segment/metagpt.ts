import type { StepDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { num, str } from "../common/index.js";
import { joinBody, jsonObject, splitLines, type Segmented } from "./types.js";

/**
 * MetaGPT traces come in two shapes in MAST-Data:
 *
 * 1. The communication log (`=== MetaGPT Agent Communication Log - Started at … ===`): blocks that start with
 *    `[YYYY-MM-DD hh:mm:ss] FROM: X TO: {…}` + `ACTION:` + `CONTENT:`, or `[…] NEW MESSAGES:` followed by
 *    `Agent:` and the message; blocks end at a line of dashes.
 * 2. A JSON wrapper `{run_id, prompt, content, timestamp, cost, log_file}` whose `content` is loguru output:
 *    `2025-01-17 11:40:27.872 | INFO | metagpt.roles.role:_act:391 - Alice(SimpleCoder): to do SimpleWriteCode(…)`
 *    followed by the reply the role streamed. Agent = the profile in parentheses (SimpleCoder), as in shape 1.
 */

const COMM_HEADER = /^=== MetaGPT Agent Communication Log\b/m;
const BLOCK_HEADER = /^\[(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\] (.*)$/;
const DASHES = /^-{20,}\s*$/;
const LOGURU = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?) \| (\w+)\s*\| ([^ ]+) - (.*)$/;

export function looksLikeMetaGPT(text: string): boolean {
  if (COMM_HEADER.test(text.slice(0, 4096))) return true;
  const first = text.trimStart().split(/\r?\n/, 1)[0] ?? "";
  const m = LOGURU.exec(first);
  return !!m && /metagpt|_act:/.test(m[4]!);
}

function segmentCommunicationLog(text: string): Segmented {
  const lines = splitLines(text);
  const steps: StepDraft[] = [];
  let task: string | undefined;
  let i = 0;
  const push = (s: StepDraft) => steps.push(compact(s));
  while (i < lines.length) {
    const l = lines[i]!;
    const h = BLOCK_HEADER.exec(l);
    if (!h) {
      if (/^=== .* ===\s*$/.test(l)) {
        const ended = /Log Ended/.test(l);
        push({ agent: "system", role: "system", kind: ended ? "termination" : "event", text: l.trim(), ref: { line: i + 1 } });
      } else if (l.trim() !== "" && !DASHES.test(l)) {
        push({ agent: "system", role: "system", kind: "event", text: l, ref: { line: i + 1 } });
      }
      i++;
      continue;
    }
    const time = `${h[1]}T${h[2]}`;
    const startLine = i + 1;
    // the block runs to the next header
    let j = i + 1;
    while (j < lines.length && !BLOCK_HEADER.exec(lines[j]!) && !/^=== .* ===\s*$/.test(lines[j]!)) j++;
    const block = lines.slice(i + 1, j);
    const rest = h[3]!;
    const from = /^FROM: (.+?) TO: (.*)$/.exec(rest);
    if (from) {
      const agent = from[1]!.trim();
      const c = block.findIndex((b) => b.trim() === "CONTENT:");
      const content = joinBody(block.slice(c >= 0 ? c + 1 : 0).filter((b) => !DASHES.test(b)));
      const human = /^(human|user)$/i.test(agent);
      if (human) task ??= content;
      // the text keeps the ACTION line: it names the MetaGPT action that produced the message
      push({ agent, role: human ? "user" : "assistant", kind: "message", text: joinBody(block.filter((b) => !DASHES.test(b))), time, ref: { line: startLine } });
    } else if (/^NEW MESSAGES:/.test(rest)) {
      // one or more messages, each `Agent:` + text, separated by dashes
      let k = 0;
      while (k < block.length) {
        while (k < block.length && (block[k]!.trim() === "" || DASHES.test(block[k]!))) k++;
        if (k >= block.length) break;
        const start = k;
        while (k < block.length && !DASHES.test(block[k]!)) k++;
        const chunk = block.slice(start, k);
        const sp = /^([A-Za-z][\w .()-]{0,60}?):\s?(.*)$/.exec(chunk[0]!);
        const agent = sp ? sp[1]!.trim() : "unknown";
        const body = joinBody(sp ? [sp[2]!, ...chunk.slice(1)] : chunk);
        push({ agent, role: "assistant", kind: "message", text: body, time, ref: { line: i + 2 + start } });
      }
    } else {
      push({ agent: "system", role: "system", kind: "event", text: joinBody([rest, ...block.filter((b) => !DASHES.test(b))]), time, ref: { line: startLine } });
    }
    i = j;
  }
  return { steps, segmentation: "framework", splitter: "metagpt", task: task ? { text: task } : undefined, metadata: { metagptLog: "communication-log" } };
}

function segmentLoguru(content: string): StepDraft[] {
  const lines = splitLines(content);
  const steps: StepDraft[] = [];
  let i = 0;
  while (i < lines.length) {
    const m = LOGURU.exec(lines[i]!);
    if (!m) {
      // text before the first log line
      const start = i;
      while (i < lines.length && !LOGURU.exec(lines[i]!)) i++;
      const body = joinBody(lines.slice(start, i));
      if (body) steps.push({ agent: "system", role: "system", kind: "event", text: body, ref: { line: start + 1 } });
      continue;
    }
    let j = i + 1;
    while (j < lines.length && !LOGURU.exec(lines[j]!)) j++;
    const message = m[5]!;
    // `Alice(SimpleCoder): to do …` — the text keeps the whole line, the agent is the profile
    const role = /^(\w+)\(([^)]+)\): ?(.*)$/.exec(message);
    const body = joinBody([message, ...lines.slice(i + 1, j)]);
    const time = `${m[1]}T${m[2]}`;
    if (role) steps.push({ agent: role[2]!, role: "assistant", kind: "message", text: body, time, ref: { line: i + 1 } });
    else steps.push({ agent: "system", role: "system", kind: m[3] === "ERROR" ? "error" : "event", text: body, time, ref: { line: i + 1 } });
    i = j;
  }
  return steps;
}

/** Splits a MetaGPT trace: the communication log, loguru text, or the JSON wrapper around loguru text. */
export function segmentMetaGPT(text: string): Segmented | undefined {
  const t = text.trimStart();
  if (t.startsWith("{")) {
    const doc = jsonObject(t);
    if (!doc || typeof doc.content !== "string" || !looksLikeMetaGPT(doc.content)) return undefined;
    const inner = COMM_HEADER.test(doc.content) ? segmentCommunicationLog(doc.content).steps : segmentLoguru(doc.content);
    return {
      // lines are relative to `content`, not to the wrapper
      steps: inner.map((s) => ({ ...s, ref: compact({ ...s.ref, line: undefined, pointer: s.ref?.line ? `/content#L${s.ref.line}` : "/content" }) })),
      segmentation: "framework",
      splitter: "metagpt",
      task: str(doc.prompt) ? { text: str(doc.prompt) } : undefined,
      metadata: compact({ metagptLog: "loguru", runId: doc.run_id, cost: num(doc.cost), timestamp: str(doc.timestamp), logFile: str(doc.log_file) }),
    };
  }
  if (!looksLikeMetaGPT(text)) return undefined;
  if (COMM_HEADER.test(text.slice(0, 4096))) return segmentCommunicationLog(text);
  return { steps: segmentLoguru(text), segmentation: "framework", splitter: "metagpt", metadata: { metagptLog: "loguru" } };
}
