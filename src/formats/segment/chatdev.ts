import type { StepDraft, Usage } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { joinBody, splitLines, stripAnsi, type Segmented } from "./types.js";

/**
 * ChatDev log text (1.0 WareHouse logs and the ChatDev traces inside MAST-Data). Every record starts with
 * `[YYYY-DD-MM hh:mm:ss INFO] ` — day before month — and runs to the next header. Three generations exist:
 *
 *   AgentTech (2023-06/07): `[0] AI Assistant (Programmer):`, `AI User (CEO) sys message:`, `PhaseType: …`,
 *                           `[OpenAI_Usage_Info]`, `Software Info: k: v …`, `AgentTech Ends (…)`
 *   ChatDev (2023-10 on):   `System: **[chatting]**` parameter tables (phase_name, model_type …),
 *                           `CEO: **[Start Chat]**`, `CTO: **CTO<->CEO on : Phase, turn 0**`, `**[Software Info]**:`
 *                           with `🔨**version_updates**=-1` lines, `**[Post Info]**`, `ChatDev Ends`
 *
 * The agent is the role tag of the record. Harness noise (`flask app.py did not start…`, `HTTP Request: POST …`)
 * is counted in metadata instead of becoming steps.
 */

export const CHATDEV_HEADER = /^\[(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) INFO\] ?(.*)$/;

/** True when the text starts with a ChatDev header and names ChatDev's vocabulary somewhere near the top. */
export function looksLikeChatDev(text: string): boolean {
  const head = stripAnsi(text.slice(0, 64 * 1024)).replace(/^\uFEFF/, "").trimStart();
  const firstLine = head.split(/\r?\n/, 1)[0] ?? "";
  if (!CHATDEV_HEADER.test(firstLine)) return false;
  return /ChatDev|AgentTech|\*\*\[Preprocessing\]\*\*|AI (?:Assistant|User) \(|<->|PhaseType|\*\*\[chatting\]\*\*/.test(head);
}

/** `[2023-25-06 20:10:30` → `2023-06-25T20:10:30`. ChatDev writes day before month; when the middle field cannot be a
 *  day-of-month-first layout (third field > 12) the log was written month-first and is read that way. */
function isoTime(m: RegExpExecArray): string {
  const [, y, a, b, hh, mm, ss] = m;
  const [day, month] = Number(b) > 12 ? [b, a] : [a, b];
  return `${y}-${month}-${day}T${hh}:${mm}:${ss}`;
}

/** `ModelType.GPT_3_5_TURBO` → `gpt-3.5-turbo`; keeps anything else lower-cased with dashes. */
export function chatdevModelName(raw: string): string {
  return raw
    .replace(/^ModelType\./, "")
    .toLowerCase()
    .replace(/_/g, "-")
    .replace(/^gpt-3-5/, "gpt-3.5");
}

/** Reads `| **key** | value |` rows of a ChatDev parameter table. */
function parseTable(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of splitLines(body)) {
    const m = /^\|\s*\*\*(\w+)\*\*\s*\|\s*(.*?)\s*\|?\s*$/.exec(l);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** Software Info in either generation: `📃**num_code_files**=2` lines, or `num_code_files: 0 code_lines: 0 …`. */
function parseSoftwareInfo(text: string): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  const put = (k: string, v: string) => {
    const n = Number(v.replace(/^\$/, "").replace(/s$/, ""));
    out[k] = Number.isFinite(n) && v.trim() !== "" ? n : v;
  };
  let found = false;
  for (const m of text.matchAll(/\*\*(\w+)\*\*=(\S+)/g)) {
    put(m[1]!, m[2]!);
    found = true;
  }
  if (!found) for (const m of text.matchAll(/(\w+): (-?[\d.]+)/g)) put(m[1]!, m[2]!);
  return out;
}

function parseUsage(body: string): Usage | undefined {
  const input = /prompt_tokens:\s*(\d+)/.exec(body)?.[1];
  const output = /completion_tokens:\s*(\d+)/.exec(body)?.[1];
  if (input === undefined && output === undefined) return undefined;
  return compact({ input: input !== undefined ? Number(input) : undefined, output: output !== undefined ? Number(output) : undefined });
}

/**
 * ChatDev ≥ 0.2 logs each turn as `[<the other agent's role prompt>]` + blank line + the reply. The bracketed part
 * repeats a system prompt the phase table already holds, so the reply step keeps only what the agent said.
 */
function withoutRolePromptEcho(body: string): string {
  if (!body.startsWith("[")) return body;
  const end = body.indexOf("]\n\n");
  if (end < 0 || end > 8000 || !/\bYou are\b/.test(body.slice(0, end))) return body;
  return body.slice(end + 3).replace(/^\s*\n/, "");
}

interface LogRecord {
  line: number;
  time?: string;
  first: string;
  body: string;
}

export function segmentChatDev(text: string): Segmented | undefined {
  if (!looksLikeChatDev(text)) return undefined;
  const lines = splitLines(text);
  const records: LogRecord[] = [];
  let current: LogRecord | undefined;
  let bodyLines: string[] = [];
  const close = () => {
    if (current) records.push({ ...current, body: joinBody(bodyLines) });
    bodyLines = [];
  };
  lines.forEach((raw, i) => {
    const l = stripAnsi(raw);
    const m = CHATDEV_HEADER.exec(l);
    if (m) {
      close();
      current = { line: i + 1, time: isoTime(m), first: m[7]!.trim(), body: "" };
    } else if (current) bodyLines.push(l);
    else if (l.trim() !== "") {
      // text before the first header (never seen in real logs): keep it as one record
      current = { line: i + 1, first: "", body: "" };
      bodyLines.push(l);
    }
  });
  close();

  const steps: StepDraft[] = [];
  const noise: Record<string, number> = {};
  const softwareInfo: Array<Record<string, unknown>> = [];
  const models = new Map<string, number>();
  const phases: string[] = [];
  let task: string | undefined;
  let pendingUsage: { usage: Usage; line: number; time?: string } | undefined;

  const push = (s: StepDraft) => steps.push(compact(s));
  const flushUsage = () => {
    if (!pendingUsage) return;
    push({ agent: "system", role: "system", kind: "llm_call", usage: pendingUsage.usage, time: pendingUsage.time, ref: { line: pendingUsage.line }, text: "OpenAI usage (no reply followed)" });
    pendingUsage = undefined;
  };
  let echoesRemoved = 0;
  /** An LLM reply: takes the usage logged just before it. */
  const reply = (agent: string, r: LogRecord, raw: string) => {
    const body = withoutRolePromptEcho(raw);
    if (body !== raw) echoesRemoved++;
    const usage = pendingUsage?.usage;
    pendingUsage = undefined;
    push({ agent, role: "assistant", kind: "message", text: body, time: r.time, usage, ref: { line: r.line }, tags: body.trim() === "" ? ["empty"] : undefined });
  };
  const event = (r: LogRecord, opts: Partial<StepDraft> = {}) =>
    push({ agent: "system", role: "system", kind: "event", text: joinBody([r.first, r.body]), time: r.time, ref: { line: r.line }, ...opts });

  for (const r of records) {
    const f = r.first;
    let m: RegExpExecArray | null;
    if (/^flask app\.py did not start/.test(f)) {
      noise.flaskNotice = (noise.flaskNotice ?? 0) + 1;
    } else if (/^HTTP Request: /.test(f)) {
      noise.httpRequest = (noise.httpRequest ?? 0) + 1;
    } else if (/^\*\*\[OpenAI_Usage_Info Receive\]\*\*|^\[OpenAI_Usage_Info\]/.test(f)) {
      flushUsage();
      const usage = parseUsage(r.body);
      if (usage) pendingUsage = { usage, line: r.line, time: r.time };
      else event(r);
    } else if ((m = /^System: \*\*\[(chatting|RolePlaying)\]\*\*/.exec(f))) {
      const table = parseTable(r.body);
      if (table.model_type) models.set(table.model_type, (models.get(table.model_type) ?? 0) + 1);
      if (table.phase_name) phases.push(table.phase_name);
      task ??= table.task_prompt;
      event(r);
    } else if ((m = /^(.+?): \*\*\[Start Chat\]\*\*$/.exec(f))) {
      // the phase prompt, written by the harness under the user-role agent's name
      push({ agent: m[1]!.trim(), role: "user", kind: "message", text: r.body, time: r.time, ref: { line: r.line }, tags: ["injected-context"] });
    } else if ((m = /^(.+?): \*\*(.+?)<->(.+?) on : (.+?), turn (\d+)\*\*$/.exec(f))) {
      reply(m[1]!.trim(), r, r.body);
    } else if (/^\*\*\[Software Info\]\*\*|^Software Info:/.test(f)) {
      softwareInfo.push({ line: r.line, time: r.time, ...parseSoftwareInfo(`${f}\n${r.body}`) });
      event(r);
    } else if (/^\*\*\[Post Info\]\*\*/.test(f)) {
      const info = parseSoftwareInfo(r.body);
      if (Object.keys(info).length) softwareInfo.push({ line: r.line, time: r.time, final: true, ...info });
      event(r, { kind: "termination" });
    } else if (/^(?:AgentTech|ChatDev) Ends\b/.test(f)) {
      event(r, { kind: "termination" });
    } else if (/^\*\*\[Preprocessing\]\*\*/.test(f)) {
      task ??= /\*\*task_prompt\*\*:\s*(.+)/.exec(r.body)?.[1]?.trim();
      event(r);
    } else if ((m = /^args: Namespace\(task=(["'])(.*?)\1/.exec(f))) {
      task ??= m[2];
      event(r);
    } else if ((m = /^PhaseType: PhaseType\.(\w+)/.exec(f))) {
      phases.push(m[1]!);
      event(r);
    } else if ((m = /^AI (?:Assistant|User) \((.+?)\) sys message:$/.exec(f))) {
      push({ agent: m[1]!, role: "system", kind: "message", text: r.body, time: r.time, ref: { line: r.line } });
    } else if (/^Task prompt:$/.test(f)) {
      task ??= r.body.trim() || undefined;
      push({ agent: "user", role: "user", kind: "message", text: r.body, time: r.time, ref: { line: r.line } });
    } else if ((m = /^(\[\d+\] )?AI (Assistant|User) \((.+?)\) terminated the chat\.$/.exec(f))) {
      push({ agent: m[3]!, role: "assistant", kind: "termination", text: f, time: r.time, ref: { line: r.line } });
    } else if ((m = /^(\[(\d+)\] )?AI (Assistant|User) \((.+?)\):$/.exec(f))) {
      if (m[1]) reply(m[4]!, r, r.body);
      // without a turn number it is the phase prompt the harness sends under the user-role agent's name
      else push({ agent: m[4]!, role: "user", kind: "message", text: r.body, time: r.time, ref: { line: r.line }, tags: ["injected-context"] });
    } else if (/^\*\*\[(Test Reports|Test Info)\]\*\*/.test(f)) {
      push({ agent: "environment", role: "tool", kind: "event", text: joinBody([f, r.body]), time: r.time, ref: { line: r.line }, tags: ["test-report"] });
    } else if ((m = /^([A-Z][\w .'-]{0,60}): \*\*(.*)\*\*$/.exec(f)) && m[1] !== "System") {
      // any other `<Role>: **…**` utterance
      reply(m[1]!.trim(), r, joinBody([m[2]!, r.body]));
    } else {
      // Seminar Conclusion, Execute Detail, Update Codes, configs, start banners and anything new
      event(r);
    }
  }
  flushUsage();

  const ranked = [...models.entries()].sort((a, b) => b[1] - a[1]);
  const modelRaw = ranked[0]?.[0];
  return {
    steps,
    segmentation: "framework",
    splitter: "chatdev",
    task: task ? { text: task } : undefined,
    model: modelRaw ? chatdevModelName(modelRaw) : undefined,
    metadata: compact({
      modelRaw,
      models: ranked.length > 1 ? ranked.map(([k]) => chatdevModelName(k)) : undefined,
      phases: phases.length ? phases : undefined,
      softwareInfo: softwareInfo.length ? softwareInfo : undefined,
      harnessNoise: Object.keys(noise).length ? noise : undefined,
      rolePromptEchoesRemoved: echoesRemoved || undefined,
    }),
  };
}
