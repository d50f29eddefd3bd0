import type { StepDraft } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { arr, contentText, isObj, maybeJson, str } from "./values.js";

export interface ChatMappingOptions {
  /** Agent name for assistant messages without a `name`; defaults to "assistant". */
  assistantAgent?: string;
  /** Agent name for user messages; defaults to "user". */
  userAgent?: string;
  /** JSON pointer prefix for step refs, e.g. `/traj`. */
  pointer?: string;
  /** Line number of the record, when known. */
  line?: number;
}

/**
 * Maps OpenAI chat-completions messages to canonical steps: one message step per text turn, one tool_call step per
 * `tool_calls[]` entry (arguments parsed from their JSON string), and `role: tool` messages as tool_result steps
 * linked by `tool_call_id`. Also accepts legacy `function_call` / `role: function`, and `human`/`ai` roles.
 */
export function chatMessagesToSteps(messages: unknown[], opts: ChatMappingOptions = {}): StepDraft[] {
  const steps: StepDraft[] = [];
  messages.forEach((m, i) => {
    if (!isObj(m)) return;
    const rawRole = (str(m.role) ?? "").toLowerCase();
    const role = rawRole === "human" ? "user" : rawRole === "ai" ? "assistant" : rawRole === "function" ? "tool" : rawRole;
    const ref = compact({ pointer: opts.pointer !== undefined ? `${opts.pointer}/${i}` : undefined, line: opts.line });
    const name = str(m.name);
    const text = contentText(m.content);
    if (role === "system" || role === "developer") {
      steps.push(compact({ agent: name ?? "system", role: "system", kind: "message", text, ref }));
      return;
    }
    if (role === "tool") {
      steps.push(
        compact({
          agent: name ?? "tool",
          role: "tool",
          kind: "tool_result",
          text,
          tool: compact({ name: name ?? "tool", callId: str(m.tool_call_id), output: text }),
          ref,
        }),
      );
      return;
    }
    if (role === "assistant") {
      const agent = name ?? opts.assistantAgent ?? "assistant";
      const calls = arr(m.tool_calls);
      const reasoning = str(m.reasoning_content) ?? str(m.reasoning);
      if (reasoning) steps.push(compact({ agent, role: "assistant", kind: "reasoning", text: reasoning, ref }));
      if (text !== undefined && text !== "") steps.push(compact({ agent, role: "assistant", kind: "message", text, ref }));
      for (const c of calls) {
        if (!isObj(c)) continue;
        const fn = isObj(c.function) ? c.function : c;
        const toolName = str(fn.name) ?? "unknown";
        steps.push(
          compact({
            agent,
            role: "assistant",
            kind: "tool_call",
            text: `${toolName}(${typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {})})`,
            tool: compact({ name: toolName, callId: str(c.id), args: maybeJson(fn.arguments) }),
            ref,
          }),
        );
      }
      if (isObj(m.function_call)) {
        const fc = m.function_call;
        const toolName = str(fc.name) ?? "unknown";
        steps.push(compact({ agent, role: "assistant", kind: "tool_call", text: `${toolName}(${str(fc.arguments) ?? ""})`, tool: { name: toolName, args: maybeJson(fc.arguments) }, ref }));
      }
      if ((text === undefined || text === "") && calls.length === 0 && !m.function_call && !reasoning)
        steps.push(compact({ agent, role: "assistant", kind: "message", text: "", ref, tags: ["empty"] }));
      return;
    }
    // user, and any unknown role: keep it as a message from that speaker
    steps.push(compact({ agent: name ?? (role === "user" ? opts.userAgent ?? "user" : rawRole || "unknown"), role: "user", kind: "message", text, ref }));
  });
  return steps;
}

/** True when the value looks like a list of chat messages. */
export function isChatMessages(v: unknown): v is Record<string, unknown>[] {
  if (!Array.isArray(v) || v.length === 0) return false;
  const roles = new Set(["system", "user", "assistant", "tool", "human", "function", "developer", "ai"]);
  return v.slice(0, 5).every((m) => isObj(m) && typeof m.role === "string" && roles.has(m.role.toLowerCase()) && ("content" in m || "tool_calls" in m));
}
