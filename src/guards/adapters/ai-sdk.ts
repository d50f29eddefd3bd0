import { detectCompletionClaim, endsWithQuestion, type ClaimDetection } from "../../trace/claims.js";
import type { GuardSet, GuardVerdict } from "../pipeline.js";
import type { GuardEvent, ToolCallInfo } from "../types.js";

/**
 * Guards for the Vercel AI SDK (`generateText` / `streamText` multi-step tool loops), through structural types only —
 * faultline does not depend on `ai`. Wiring (AI SDK 5):
 *
 * ```ts
 * const guard = new AiSdkGuard(guardSet);
 * guard.input(prompt);
 * const result = await generateText({
 *   model, prompt,
 *   tools: guard.wrapTools(tools),                  // decisions *before* a tool runs: blocked calls never execute
 *   onStepFinish: guard.onStepFinish,               // text, reasoning, usage, completion attempts
 *   prepareStep: guard.prepareStep,                 // injects guard messages into the next model call
 *   stopWhen: [stepCountIs(50), guard.stopWhen],    // ends the loop when a guard says stop
 * });
 * if (guard.refusedCompletion) // the model ended but a guard refused: run again with
 *   // messages: [...yourMessages, ...result.response.messages, ...guard.takeInjections()]
 * ```
 * The SDK runs a step's tools before calling `onStepFinish`, so the step's text is reported after its calls, with
 * them attached (`MessageEvent.calls`). Tools that were not wrapped are reported from the step, after the fact.
 * Injected messages reach the next model call only (prepareStep does not change the stored conversation).
 */

export interface AiSdkToolCallLike {
  toolCallId: string;
  toolName: string;
  /** AI SDK 5 */
  input?: unknown;
  /** AI SDK 4 */
  args?: unknown;
}

export interface AiSdkToolResultLike extends AiSdkToolCallLike {
  /** AI SDK 5 */
  output?: unknown;
  /** AI SDK 4 */
  result?: unknown;
}

export interface AiSdkContentPartLike {
  type: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  error?: unknown;
}

export interface AiSdkUsageLike {
  inputTokens?: number;
  outputTokens?: number;
  promptTokens?: number;
  completionTokens?: number;
}

export interface AiSdkStepLike {
  text?: string;
  reasoningText?: string;
  toolCalls?: AiSdkToolCallLike[];
  toolResults?: AiSdkToolResultLike[];
  /** AI SDK 5 content parts; `tool-error` parts are read from here. */
  content?: AiSdkContentPartLike[];
  finishReason?: string;
  usage?: AiSdkUsageLike;
}

export interface AiSdkToolLike {
  /** `any`: each tool types its own input from its schema, and any such tool must fit here. */
  // biome-ignore lint/suspicious/noExplicitAny: see above; `unknown` would reject every typed tool
  execute?: (input: any, options: any) => unknown;
}

export interface AiSdkMessageLike {
  role: string;
  content: unknown;
}

export interface AiSdkGuardOptions {
  /** Prefix of injected messages and blocked-tool outputs (default "[faultline guard]"). */
  prefix?: string;
  detectClaim?: (text: string) => ClaimDetection;
}

function outputText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === undefined) return "";
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

export class AiSdkGuard {
  private readonly prefix: string;
  private readonly detect: (text: string) => ClaimDetection;
  private readonly observed = new Set<string>();
  private readonly turnCalls: ToolCallInfo[] = [];
  private pending: string[] = [];
  private _stopped = false;
  private _completed = false;
  private _refused = false;
  /** Every verdict so far, for logs. */
  readonly log: GuardVerdict[] = [];

  constructor(readonly guards: GuardSet, opts: AiSdkGuardOptions = {}) {
    this.prefix = opts.prefix ?? "[faultline guard]";
    this.detect = opts.detectClaim ?? detectCompletionClaim;
  }

  /** A guard answered `stop`. */
  get stopped(): boolean {
    return this._stopped;
  }

  /** The model ended and the guards accepted it. */
  get completed(): boolean {
    return this._completed;
  }

  /** The model ended but a guard refused; run again with {@link takeInjections} appended. */
  get refusedCompletion(): boolean {
    return this._refused && !this._stopped;
  }

  private observe(event: GuardEvent): GuardVerdict {
    const v = this.guards.observe(event);
    this.log.push(v);
    this.pending.push(...v.messages);
    if (v.action === "stop") this._stopped = true;
    return v;
  }

  /** Reports user input: the prompt, a clarification answer. */
  input(text: string, role: "user" | "system" = "user"): GuardVerdict {
    return this.observe({ type: "message", role, text });
  }

  /** Wraps each tool's `execute` so the guards decide before it runs and see what it returned. */
  wrapTools<T extends Record<string, AiSdkToolLike>>(tools: T): T {
    const out: Record<string, AiSdkToolLike> = {};
    for (const [name, tool] of Object.entries(tools)) {
      const execute = tool.execute;
      if (!execute) {
        out[name] = tool;
        continue;
      }
      out[name] = {
        ...tool,
        execute: async (input: unknown, options: { toolCallId?: string } | undefined) => {
          const id = options?.toolCallId;
          const info: ToolCallInfo = { name, args: input, ...(id ? { id } : {}) };
          if (id) this.observed.add(id);
          this.turnCalls.push(info);
          if (this._stopped) return `${this.prefix} Not executed: the run was stopped.`;
          const v = this.observe({ type: "tool_call", call: info });
          if (v.action === "block" || v.action === "stop" || v.action === "require")
            return `${this.prefix} Not executed (${v.primary!.guard}, MAST ${v.primary!.mode}): ${v.primary!.message}`;
          try {
            const result = await execute(input, options);
            this.observe({ type: "tool_result", result: { name, args: input, output: outputText(result), ...(id ? { callId: id } : {}) } });
            return result;
          } catch (e) {
            this.observe({ type: "tool_result", result: { name, args: input, output: (e as Error).message, isError: true, ...(id ? { callId: id } : {}) } });
            throw e;
          }
        },
      };
    }
    return out as T;
  }

  /** Pass as `onStepFinish`. */
  readonly onStepFinish = (step: AiSdkStepLike): void => {
    const u = step.usage;
    const input = u?.inputTokens ?? u?.promptTokens;
    const output = u?.outputTokens ?? u?.completionTokens;
    if (input !== undefined || output !== undefined) this.observe({ type: "usage", ...(input !== undefined ? { input } : {}), ...(output !== undefined ? { output } : {}) });
    if (step.reasoningText) this.observe({ type: "message", role: "assistant", text: step.reasoningText, reasoning: true });

    const calls: AiSdkToolCallLike[] = step.toolCalls ?? (step.content ?? []).filter((p): p is AiSdkToolCallLike & AiSdkContentPartLike => p.type === "tool-call" && !!p.toolCallId && !!p.toolName);
    const text = step.text ?? "";
    const seenBefore = this.turnCalls.splice(0);
    if (calls.length === 0) {
      if (endsWithQuestion(text)) this.observe({ type: "message", role: "assistant", text });
      else {
        const v = this.observe({ type: "completion", text, claimsSuccess: this.detect(text).claimsSuccess });
        this._completed = v.action === "continue" || v.action === "warn";
        this._refused = v.action === "block" || v.action === "require";
      }
      return;
    }
    if (text.trim()) this.observe({ type: "message", role: "assistant", text, ...(seenBefore.length ? { calls: seenBefore } : {}) });

    // Calls of tools that were not wrapped: report them now, after the fact.
    const results = new Map<string, { output: string; isError?: boolean }>();
    for (const r of step.toolResults ?? []) results.set(r.toolCallId, { output: outputText(r.output ?? r.result) });
    for (const p of step.content ?? []) {
      if (p.type === "tool-error" && p.toolCallId) results.set(p.toolCallId, { output: p.error instanceof Error ? p.error.message : outputText(p.error), isError: true });
      if (p.type === "tool-result" && p.toolCallId && !results.has(p.toolCallId)) results.set(p.toolCallId, { output: outputText(p.output) });
    }
    for (const c of calls) {
      if (this.observed.has(c.toolCallId)) continue;
      this.observed.add(c.toolCallId);
      const args = c.input ?? c.args;
      this.observe({ type: "tool_call", call: { id: c.toolCallId, name: c.toolName, args } });
      const r = results.get(c.toolCallId);
      if (r) this.observe({ type: "tool_result", result: { callId: c.toolCallId, name: c.toolName, args, ...r } });
    }
  };

  /** Pass as `prepareStep`: adds pending guard messages to the next model call. */
  readonly prepareStep = <M extends AiSdkMessageLike>(options: { messages: M[] }): { messages: (M | { role: "user"; content: string })[] } | undefined => {
    const inject = this.takeInjections();
    return inject.length ? { messages: [...options.messages, ...inject] } : undefined;
  };

  /** Pass in `stopWhen`: true once a guard said stop. */
  readonly stopWhen = (_options?: { steps: unknown[] }): boolean => this._stopped;

  /** Guard messages not yet delivered, as user messages. */
  takeInjections(): { role: "user"; content: string }[] {
    if (this.pending.length === 0) return [];
    const unique = [...new Set(this.pending)];
    this.pending = [];
    return [{ role: "user", content: `${this.prefix} ${unique.join("\n\n")}` }];
  }
}
