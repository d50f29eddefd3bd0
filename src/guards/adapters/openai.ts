import { detectCompletionClaim, endsWithQuestion, type ClaimDetection } from "../../trace/claims.js";
import { strongest, type GuardSet, type GuardVerdict } from "../pipeline.js";
import type { GuardAction, GuardEvent, ToolCallInfo } from "../types.js";

/**
 * Guards for an OpenAI chat-completions tool loop. Framework-neutral: it takes and returns plain objects of the
 * chat-completions shape (no `openai` import), so it works with any OpenAI-compatible client or server.
 *
 * Per turn: `assistant(message, usage)` reviews the model's message before any tool runs (blocked calls get a tool
 * message answering them, as the API requires one per call id); `toolResult(message)` reports each result; and
 * `takeInjections()` returns the guard messages to append before the next model call. A turn without tool calls is an
 * attempt to end (unless it asks the user a question): if a guard refuses it, `end` is false and the loop goes on.
 */

export interface ChatToolCall {
  id: string;
  type?: "function";
  function: { name: string; arguments: string };
}

export type ChatContent = string | null | undefined | { type: string; text?: string }[];

export interface ChatAssistantMessage {
  role: "assistant";
  content?: ChatContent;
  tool_calls?: ChatToolCall[] | null;
  /** Reasoning text some OpenAI-compatible servers return (vLLM, DeepSeek, gpt-oss). */
  reasoning_content?: string | null;
  reasoning?: string | null;
}

export interface ChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: ChatContent;
}

export interface ChatTextMessage {
  role: "user" | "system" | "developer";
  content: ChatContent;
}

export type ChatMessage = ChatTextMessage | ChatAssistantMessage | ChatToolMessage;

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

export interface OpenAIGuardOptions {
  /** Role of injected guard messages (default "user"; some servers accept "system"/"developer" mid-conversation). */
  injectRole?: "user" | "system" | "developer";
  /** Prefix of injected messages (default "[faultline guard]"). */
  prefix?: string;
  detectClaim?: (text: string) => ClaimDetection;
}

export interface ReviewedToolCall {
  call: ChatToolCall;
  verdict: GuardVerdict;
  /** Run it only when true. */
  allowed: boolean;
}

export interface AssistantReview {
  /** The strongest action over the turn's events. */
  action: GuardAction;
  verdicts: GuardVerdict[];
  calls: ReviewedToolCall[];
  /** Tool messages answering the calls that must not run; append them right after the assistant message. */
  blockedResults: ChatToolMessage[];
  /** The loop should end now: stopped by a guard, or a completion the guards accepted. */
  end: boolean;
  stopped: boolean;
  completed: boolean;
  /** The turn asks the user something; hand control to the user. */
  awaitingUser: boolean;
}

export function chatText(content: ChatContent): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  return "";
}

function parseArgs(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export class OpenAIGuard {
  private readonly calls = new Map<string, ToolCallInfo>();
  private pending: string[] = [];
  private readonly injectRole: "user" | "system" | "developer";
  private readonly prefix: string;
  private readonly detect: (text: string) => ClaimDetection;
  /** Every verdict so far, for logs. */
  readonly log: GuardVerdict[] = [];

  constructor(readonly guards: GuardSet, opts: OpenAIGuardOptions = {}) {
    this.injectRole = opts.injectRole ?? "user";
    this.prefix = opts.prefix ?? "[faultline guard]";
    this.detect = opts.detectClaim ?? detectCompletionClaim;
  }

  private observe(event: GuardEvent): GuardVerdict {
    const v = this.guards.observe(event);
    this.log.push(v);
    this.pending.push(...v.messages);
    return v;
  }

  /** Reports a user (or system) message: the task, a clarification answer, a harness nudge. */
  input(message: ChatTextMessage): GuardVerdict {
    return this.observe({ type: "message", role: message.role === "user" ? "user" : "system", text: chatText(message.content) });
  }

  /** Reviews the model's message before its tool calls run. */
  assistant(message: ChatAssistantMessage, usage?: ChatUsage): AssistantReview {
    const verdicts: GuardVerdict[] = [];
    const see = (e: GuardEvent) => {
      const v = this.observe(e);
      verdicts.push(v);
      return v;
    };
    if (usage && (usage.prompt_tokens !== undefined || usage.completion_tokens !== undefined))
      see({ type: "usage", ...(usage.prompt_tokens !== undefined ? { input: usage.prompt_tokens } : {}), ...(usage.completion_tokens !== undefined ? { output: usage.completion_tokens } : {}) });
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (reasoning) see({ type: "message", role: "assistant", text: reasoning, reasoning: true });

    const text = chatText(message.content);
    const toolCalls = message.tool_calls ?? [];
    let completed = false;
    let awaitingUser = false;
    if (toolCalls.length === 0) {
      if (endsWithQuestion(text)) {
        awaitingUser = true;
        see({ type: "message", role: "assistant", text });
      } else {
        const v = see({ type: "completion", text, claimsSuccess: this.detect(text).claimsSuccess });
        completed = v.action === "continue" || v.action === "warn";
      }
    } else if (text.trim()) see({ type: "message", role: "assistant", text });

    const calls: ReviewedToolCall[] = [];
    const blockedResults: ChatToolMessage[] = [];
    let stopped = verdicts.some((v) => v.action === "stop");
    for (const call of toolCalls) {
      const info: ToolCallInfo = { id: call.id, name: call.function.name, args: parseArgs(call.function.arguments) };
      this.calls.set(call.id, info);
      // Once the run is stopped nothing more runs, but every call still needs an answering tool message.
      const verdict = stopped ? undefined : see({ type: "tool_call", call: info });
      if (verdict?.action === "stop") stopped = true;
      const allowed = verdict !== undefined && verdict.action !== "block" && verdict.action !== "stop" && verdict.action !== "require";
      if (!allowed) blockedResults.push({ role: "tool", tool_call_id: call.id, content: this.blockedText(verdict) });
      calls.push({ call, verdict: verdict ?? verdicts.at(-1)!, allowed });
    }
    const action = verdicts.reduce<GuardAction>((a, v) => strongest(a, v.action), "continue");
    return { action, verdicts, calls, blockedResults, end: stopped || completed, stopped, completed: completed && !stopped, awaitingUser };
  }

  /** Reports a tool's result. `exitCode`/`isError` are optional facts the loop knows about the run. */
  toolResult(message: ChatToolMessage, extra: { exitCode?: number; isError?: boolean } = {}): GuardVerdict {
    const call = this.calls.get(message.tool_call_id);
    return this.observe({
      type: "tool_result",
      result: {
        callId: message.tool_call_id,
        name: call?.name ?? "unknown",
        ...(call?.args !== undefined ? { args: call.args } : {}),
        output: chatText(message.content),
        ...extra,
      },
    });
  }

  /** The guard messages to append before the next model call (once all tool messages of the turn are in). */
  takeInjections(): ChatTextMessage[] {
    if (this.pending.length === 0) return [];
    const unique = [...new Set(this.pending)];
    this.pending = [];
    return [{ role: this.injectRole, content: `${this.prefix} ${unique.join("\n\n")}` }];
  }

  /** The tool message for a call that will not run because the run was stopped. */
  notExecuted(call: ChatToolCall): ChatToolMessage {
    return { role: "tool", tool_call_id: call.id, content: this.blockedText(undefined) };
  }

  private blockedText(v: GuardVerdict | undefined): string {
    if (!v?.primary) return `${this.prefix} Not executed: the run was stopped.`;
    return `${this.prefix} Not executed (${v.primary.guard}, MAST ${v.primary.mode}): ${v.primary.message}`;
  }
}

/** What a tool runner returns: text, or text with the facts the runner knows. */
export type ToolRunOutput = string | { content: string; exitCode?: number; isError?: boolean };

export interface GuardedChatLoopOptions {
  guard: OpenAIGuard;
  /** The conversation so far (system + task); appended to in place. */
  messages: ChatMessage[];
  /** One chat-completions call: returns the assistant message and usage (e.g. `choices[0].message`, `usage`). */
  complete: (messages: ChatMessage[]) => Promise<{ message: ChatAssistantMessage; usage?: ChatUsage }>;
  runTool: (call: ChatToolCall) => Promise<ToolRunOutput>;
  /** A hard cap in case no termination guard is configured (default 50 turns). */
  maxTurns?: number;
}

export interface GuardedChatLoopResult {
  messages: ChatMessage[];
  /** Why the loop ended. */
  ended: "completed" | "stopped" | "awaiting_user" | "max_turns";
  turns: number;
}

/** A complete chat-completions tool loop with the guards in charge of what runs and when it ends. */
export async function runGuardedChatLoop(o: GuardedChatLoopOptions): Promise<GuardedChatLoopResult> {
  const { guard, messages } = o;
  for (const m of messages) if (m.role === "user" || m.role === "system" || m.role === "developer") guard.input(m);
  const maxTurns = o.maxTurns ?? 50;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const { message, usage } = await o.complete(messages);
    messages.push(message);
    const review = guard.assistant(message, usage);
    messages.push(...review.blockedResults);
    // Calls reviewed before a stop were allowed and run; the stop and everything after it were answered above.
    let stopped = false;
    for (const c of review.calls) {
      if (!c.allowed) continue;
      if (stopped) {
        messages.push(guard.notExecuted(c.call));
        continue;
      }
      const out = await o.runTool(c.call);
      const toolMessage: ChatToolMessage = { role: "tool", tool_call_id: c.call.id, content: typeof out === "string" ? out : out.content };
      messages.push(toolMessage);
      const v = guard.toolResult(toolMessage, typeof out === "string" ? {} : { ...(out.exitCode !== undefined ? { exitCode: out.exitCode } : {}), ...(out.isError !== undefined ? { isError: out.isError } : {}) });
      if (v.action === "stop") stopped = true;
    }
    if (stopped || review.stopped) return { messages, ended: "stopped", turns: turn };
    if (review.completed) return { messages, ended: "completed", turns: turn };
    if (review.awaitingUser) return { messages, ended: "awaiting_user", turns: turn };
    messages.push(...guard.takeInjections());
  }
  return { messages, ended: "max_turns", turns: maxTurns };
}
