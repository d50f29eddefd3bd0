import { asText, isObj, str } from "../common/index.js";
import { decodeJsonish } from "./values.js";

/**
 * Chat messages as the OTel-family formats carry them, normalised to one shape: OpenInference (flattened then
 * rebuilt: `{message:{role, content, contents[], tool_calls[{tool_call:{…}}]}}`), OpenAI chat, OTel GenAI
 * `{role, parts[]}`, Vercel AI SDK `{role, content:[{type:"tool-call"…}]}`, and plain prompt objects.
 */
export interface ToolCallPart {
  id?: string;
  name: string;
  /** Parsed arguments when they were JSON, the raw value otherwise. */
  args?: unknown;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  text?: string;
  reasoning?: string;
  name?: string;
  toolCalls: ToolCallPart[];
  /** On tool messages: the call they answer. */
  toolCallId?: string;
}

export function normalizeRole(role: unknown, fallback: ChatMessage["role"] = "user"): ChatMessage["role"] {
  const r = (str(role) ?? "").toLowerCase();
  if (r === "system" || r === "developer") return "system";
  if (r === "user" || r === "human") return "user";
  if (r === "assistant" || r === "ai" || r === "model" || r === "bot") return "assistant";
  if (r === "tool" || r === "function" || r === "ipython") return "tool";
  return fallback;
}

const TEXT_TYPES = new Set(["text", "input_text", "output_text"]);
const CALL_TYPES = new Set(["tool_call", "tool-call", "function_call", "tool_use", "server_tool_call"]);
const RESULT_TYPES = new Set(["tool_call_response", "tool-result", "tool_result", "function_call_output", "server_tool_call_response"]);
const REASONING_TYPES = new Set(["reasoning", "thinking", "redacted_thinking"]);

/** A tool call in any of the known shapes: `{id, function:{name, arguments}}`, `{toolCallId, toolName, input}`, `{name, arguments}`. */
export function toolCallFrom(v: unknown): ToolCallPart | undefined {
  if (!isObj(v)) return undefined;
  const c = isObj(v.tool_call) ? v.tool_call : v; // OpenInference wrapper
  const fn = isObj(c.function) ? c.function : c;
  const name = str(fn.name) ?? str(c.toolName) ?? str(c.tool_name);
  if (!name) return undefined;
  const rawArgs = fn.arguments ?? c.input ?? c.args ?? c.arguments;
  return compactCall({ id: str(c.id) ?? str(c.toolCallId) ?? str(c.call_id), name, args: decodeJsonish(rawArgs) });
}

const compactCall = (c: ToolCallPart): ToolCallPart => {
  if (c.id === undefined) delete c.id;
  if (c.args === undefined) delete c.args;
  return c;
};

/** Text, reasoning, tool calls and an answered call id out of a content value (string, parts array, or object). */
function readContent(content: unknown, into: ChatMessage): void {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const visit = (p: unknown) => {
    if (p === null || p === undefined) return;
    if (typeof p === "string") {
      texts.push(p);
      return;
    }
    if (Array.isArray(p)) {
      p.forEach(visit);
      return;
    }
    if (!isObj(p)) {
      texts.push(String(p));
      return;
    }
    const part = isObj(p.message_content) ? p.message_content : p; // OpenInference `contents[].message_content`
    const type = (str(part.type) ?? "").toLowerCase();
    if (TEXT_TYPES.has(type) || (type === "" && (typeof part.text === "string" || typeof part.content === "string"))) {
      const t = str(part.text) ?? str(part.content);
      if (t !== undefined) texts.push(t);
      return;
    }
    if (CALL_TYPES.has(type)) {
      const call = toolCallFrom(part);
      if (call) into.toolCalls.push(call);
      return;
    }
    if (RESULT_TYPES.has(type)) {
      into.toolCallId ??= str(part.id) ?? str(part.toolCallId) ?? str(part.tool_use_id) ?? str(part.call_id);
      const out = part.response ?? part.output ?? part.result ?? part.content;
      const t = isObj(out) && typeof out.value === "string" ? out.value : asText(decodeJsonish(out));
      if (t !== undefined) texts.push(t);
      return;
    }
    if (REASONING_TYPES.has(type)) {
      const t = str(part.content) ?? str(part.text) ?? str(part.thinking);
      if (t) reasoning.push(t);
      return;
    }
    // images, files, blobs, uris: named so that nothing disappears silently
    texts.push(type ? `[${type}]` : asText(part) ?? "");
  };
  visit(content);
  const text = texts.filter((t) => t !== "").join("\n");
  if (text !== "") into.text = into.text ? `${into.text}\n${text}` : text;
  if (reasoning.length) into.reasoning = reasoning.join("\n");
}

/** One message in any known shape; undefined when the value is not a message. */
export function messageFrom(v: unknown, fallbackRole: ChatMessage["role"] = "user"): ChatMessage | undefined {
  if (typeof v === "string") return { role: fallbackRole, text: v, toolCalls: [] };
  if (!isObj(v)) return undefined;
  const m = isObj(v.message) && !("role" in v) ? v.message : v; // OpenInference wraps each message in `message`
  if (!("role" in m) && !("content" in m) && !("parts" in m) && !("contents" in m) && !("tool_calls" in m)) return undefined;
  const msg: ChatMessage = { role: normalizeRole(m.role, fallbackRole), toolCalls: [] };
  const name = str(m.name);
  if (name) msg.name = name;
  const toolCallId = str(m.tool_call_id) ?? str(m.toolCallId);
  if (toolCallId) msg.toolCallId = toolCallId;
  readContent(m.content, msg);
  readContent(m.contents, msg);
  readContent(m.parts, msg);
  const reasoning = str(m.reasoning_content) ?? str(m.reasoning);
  if (reasoning) msg.reasoning = msg.reasoning ? `${reasoning}\n${msg.reasoning}` : reasoning;
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    const call = toolCallFrom(c);
    if (call) msg.toolCalls.push(call);
  }
  const fc = toolCallFrom(m.function_call);
  if (fc) msg.toolCalls.push(fc);
  return msg;
}

/**
 * A list of messages out of any prompt or completion value: JSON strings, message arrays, `{system, messages}`,
 * `{prompt}`, `{choices:[{message}]}`, a single message, or plain text (which becomes one `fallbackRole` message).
 */
export function messagesFrom(value: unknown, fallbackRole: ChatMessage["role"] = "user"): ChatMessage[] {
  const v = decodeJsonish(value);
  if (v === undefined || v === null || v === "") return [];
  if (typeof v === "string") return [{ role: fallbackRole, text: v, toolCalls: [] }];
  if (Array.isArray(v)) return v.flatMap((m) => (typeof m === "string" ? [{ role: fallbackRole, text: m, toolCalls: [] }] : messagesFromObject(m, fallbackRole)));
  if (isObj(v)) return messagesFromObject(v, fallbackRole);
  return [{ role: fallbackRole, text: String(v), toolCalls: [] }];
}

function messagesFromObject(v: unknown, fallbackRole: ChatMessage["role"]): ChatMessage[] {
  if (!isObj(v)) return [];
  const out: ChatMessage[] = [];
  const system = v.system ?? v.system_instructions;
  if (system !== undefined && system !== null && !("role" in v)) out.push(...messagesFrom(system, "system").map((m) => ({ ...m, role: "system" as const })));
  if (Array.isArray(v.messages)) return [...out, ...messagesFrom(v.messages, fallbackRole)];
  if (Array.isArray(v.choices))
    return [...out, ...v.choices.flatMap((c) => (isObj(c) ? messagesFrom(c.message ?? c.delta ?? c.text, "assistant") : []))];
  if (typeof v.prompt === "string" || Array.isArray(v.prompt)) return [...out, ...messagesFrom(v.prompt, fallbackRole)];
  const single = messageFrom(v, fallbackRole);
  if (single) return [...out, single];
  if (out.length) return out;
  return [{ role: fallbackRole, text: asText(v), toolCalls: [] }];
}

/** Whether a message carries anything worth a step. */
export const hasContent = (m: ChatMessage) => (m.text !== undefined && m.text.trim() !== "") || m.toolCalls.length > 0 || !!m.reasoning;
