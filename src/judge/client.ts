import OpenAI from "openai";
import type { ChatMessage } from "./prompt.js";
import type { Pool } from "./pool.js";
import { estimateTokens } from "./render.js";
import type { ParseResult } from "./response.js";

/**
 * The provider client: the official openai SDK pointed at any OpenAI-compatible base URL, with the SDK's own retries
 * switched off so that retrying is ours — bounded attempts, exponential backoff with jitter, Retry-After honoured (in
 * seconds, milliseconds or as an HTTP date), retries on 429, 5xx, timeouts, cut-off bodies or streams, and answers
 * that do not parse. Token usage is counted for every attempt that returned an answer: the provider's numbers when it
 * reports them, an estimate otherwise.
 */

export interface ProviderConfig {
  baseURL: string;
  model: string;
  /** Name of the environment variable that holds the API key (default OPENAI_API_KEY). The key is never stored. */
  apiKeyEnv?: string;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** Sampling temperature; null leaves it out (some reasoning models accept only their default). Default 0. */
  temperature?: number | null;
  /** Per-request deadline covering the whole response, body or stream included. Default 120 s. */
  timeoutMs?: number;
  /** Attempts per call, the first included. Default 4. */
  maxAttempts?: number;
  /** Backoff before retry k (1-based): min(maxMs, initialMs × 2^(k-1)), with jitter down to half of it. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A Retry-After longer than this is capped at it. Default 120 s. */
  maxRetryAfterMs?: number;
  /** How the JSON answer is requested: a JSON schema (structured outputs), JSON mode, or prompt only. */
  responseFormat?: "json_schema" | "json_object" | "none";
  /** Output token limit per call. Default 4096. */
  maxOutputTokens?: number;
  /** Request parameter that carries the output limit (older servers know only max_tokens). */
  maxTokensParam?: "max_completion_tokens" | "max_tokens";
  /** Stream the answer (server-sent events). */
  stream?: boolean;
  /** USD per million tokens, for cost accounting. */
  price?: { inputPerMTok: number; outputPerMTok: number };
}

export interface TokenUsage {
  input: number;
  output: number;
  /** Answers whose usage the provider reported, and answers whose usage was estimated. */
  reportedCalls: number;
  estimatedCalls: number;
}

export const emptyUsage = (): TokenUsage => ({ input: 0, output: 0, reportedCalls: 0, estimatedCalls: 0 });

export function addUsage(into: TokenUsage, u: TokenUsage): TokenUsage {
  into.input += u.input;
  into.output += u.output;
  into.reportedCalls += u.reportedCalls;
  into.estimatedCalls += u.estimatedCalls;
  return into;
}

export function costUsd(u: TokenUsage, price: ProviderConfig["price"]): number | undefined {
  if (!price) return undefined;
  return (u.input * price.inputPerMTok + u.output * price.outputPerMTok) / 1_000_000;
}

export type AttemptOutcome = "ok" | "rate-limited" | "server-error" | "timeout" | "connection" | "truncated" | "malformed" | "unparseable" | "client-error";

export interface AttemptEvent {
  attempt: number;
  outcome: AttemptOutcome;
  status?: number;
  /** Wait before the next attempt, when one follows. */
  delayMs?: number;
  /** Where the wait came from. */
  delayFrom?: "retry-after" | "backoff";
  detail?: string;
}

export interface CallResult<T> {
  value: T;
  text: string;
  usage: TokenUsage;
  attempts: number;
  events: AttemptEvent[];
}

/** A call that failed for good; carries what it cost and what happened on each attempt. */
export class JudgeCallError extends Error {
  constructor(
    message: string,
    readonly events: AttemptEvent[],
    readonly usage: TokenUsage,
  ) {
    super(message);
    this.name = "JudgeCallError";
  }
}

export interface CompleteOptions {
  /** A `response_format` to send when the config asks for json_schema. */
  jsonSchema?: unknown;
}

/** What judge.ts needs from a provider; a test double or another SDK can stand in. */
export interface ChatModel {
  readonly model: string;
  /** Settings that change answers (part of the cache key). */
  readonly settings: Record<string, unknown>;
  readonly price?: ProviderConfig["price"];
  complete<T>(messages: ChatMessage[], parse: (text: string) => ParseResult<T>, opts?: CompleteOptions): Promise<CallResult<T>>;
}

/** Milliseconds to wait from `retry-after-ms` or `retry-after` (delta-seconds or HTTP date); undefined when absent. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.max(0, Number(ms));
  const ra = headers.get("retry-after")?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Math.max(0, Number(ra) * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Backoff before retry `k` (1-based): exponential, capped, with "equal jitter" (between half and all of it). */
export function backoffMs(k: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const exp = Math.min(maxMs, initialMs * 2 ** (k - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

class TruncatedError extends Error {}
class MalformedError extends Error {}
class DeadlineError extends Error {}

interface Classified {
  outcome: AttemptOutcome;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  detail: string;
}

function classify(e: unknown, timeoutMs: number): Classified {
  if (e instanceof DeadlineError) return { outcome: "timeout", retryable: true, detail: e.message };
  if (e instanceof OpenAI.APIConnectionTimeoutError) return { outcome: "timeout", retryable: true, detail: `no response within ${timeoutMs} ms` };
  if (e instanceof TruncatedError) return { outcome: "truncated", retryable: true, detail: e.message };
  if (e instanceof MalformedError) return { outcome: "malformed", retryable: true, detail: e.message };
  if (e instanceof OpenAI.APIConnectionError) {
    const cause = (e as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : e.message;
    return { outcome: "connection", retryable: true, detail: `connection error: ${why}` };
  }
  if (e instanceof OpenAI.APIError && typeof e.status === "number") {
    const status = e.status;
    const retryAfterMs = parseRetryAfter(e.headers);
    const msg = `HTTP ${status}: ${e.message}`;
    if (status === 429) return { outcome: "rate-limited", retryable: true, status, retryAfterMs, detail: msg };
    if (status >= 500 || status === 408 || status === 409) return { outcome: "server-error", retryable: true, status, retryAfterMs, detail: msg };
    return { outcome: "client-error", retryable: false, status, detail: msg };
  }
  if (e instanceof SyntaxError) return { outcome: "malformed", retryable: true, detail: `response body is not JSON: ${e.message}` };
  // undici reports a body cut off mid-way as TypeError("terminated") or a socket error.
  if (e instanceof Error && /terminated|other side closed|socket|ECONNRESET|premature close/i.test(`${e.message} ${String((e as { cause?: unknown }).cause ?? "")}`))
    return { outcome: "truncated", retryable: true, detail: `response cut off: ${e.message}` };
  return { outcome: "client-error", retryable: false, detail: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function resolveApiKey(apiKeyEnv: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (apiKeyEnv) {
    const key = env[apiKeyEnv];
    if (!key) throw new Error(`environment variable ${apiKeyEnv} (the API key) is not set`);
    return key;
  }
  // Local OpenAI-compatible servers often need no key; the SDK needs some string.
  return env.OPENAI_API_KEY || "no-key";
}

export interface OpenAIChatModelOptions {
  pool?: Pool;
  env?: NodeJS.ProcessEnv;
  /** For tests: jitter source. */
  random?: () => number;
}

export class OpenAIChatModel implements ChatModel {
  readonly model: string;
  readonly settings: Record<string, unknown>;
  readonly price?: ProviderConfig["price"];
  private readonly sdk: OpenAI;
  private readonly cfg: Required<Omit<ProviderConfig, "apiKeyEnv" | "headers" | "price" | "backoff">> & { backoff: { initialMs: number; maxMs: number } };

  constructor(config: ProviderConfig, private readonly opts: OpenAIChatModelOptions = {}) {
    if (!config.baseURL) throw new Error("a base URL is required");
    if (!config.model) throw new Error("a model name is required");
    this.cfg = {
      baseURL: config.baseURL,
      model: config.model,
      temperature: config.temperature === undefined ? 0 : config.temperature,
      timeoutMs: config.timeoutMs ?? 120_000,
      maxAttempts: Math.max(1, config.maxAttempts ?? 4),
      backoff: { initialMs: config.backoff?.initialMs ?? 1000, maxMs: config.backoff?.maxMs ?? 60_000 },
      maxRetryAfterMs: config.maxRetryAfterMs ?? 120_000,
      responseFormat: config.responseFormat ?? "json_schema",
      maxOutputTokens: config.maxOutputTokens ?? 4096,
      maxTokensParam: config.maxTokensParam ?? "max_completion_tokens",
      stream: config.stream ?? false,
    };
    this.model = config.model;
    this.price = config.price;
    this.settings = {
      temperature: this.cfg.temperature,
      responseFormat: this.cfg.responseFormat,
      maxOutputTokens: this.cfg.maxOutputTokens,
    };
    this.sdk = new OpenAI({
      apiKey: resolveApiKey(config.apiKeyEnv, opts.env),
      baseURL: config.baseURL,
      timeout: this.cfg.timeoutMs,
      maxRetries: 0,
      defaultHeaders: config.headers,
    });
  }

  async complete<T>(messages: ChatMessage[], parse: (text: string) => ParseResult<T>, opts: CompleteOptions = {}): Promise<CallResult<T>> {
    const usage = emptyUsage();
    const events: AttemptEvent[] = [];
    const inputEstimate = messages.reduce((n, m) => n + estimateTokens(m.content) + 4, 0);
    for (let attempt = 1; ; attempt++) {
      let failure: Classified;
      try {
        const run = () => this.attemptOnce(messages, opts);
        const answer = this.opts.pool ? await this.opts.pool.run(run) : await run();
        // Every answer is paid for, whether or not it parses.
        if (answer.usage) {
          usage.input += answer.usage.prompt_tokens ?? 0;
          usage.output += answer.usage.completion_tokens ?? 0;
          usage.reportedCalls++;
        } else {
          usage.input += inputEstimate;
          usage.output += estimateTokens(answer.text);
          usage.estimatedCalls++;
        }
        const parsed = answer.finishReason === "content_filter" ? ({ ok: false, error: "answer blocked by the provider's content filter" } as const) : parse(answer.text);
        if (parsed.ok) {
          events.push({ attempt, outcome: "ok" });
          return { value: parsed.value, text: answer.text, usage, attempts: attempt, events };
        }
        const cut = answer.finishReason === "length" ? ` (the answer hit the output limit of ${this.cfg.maxOutputTokens} tokens)` : "";
        failure = { outcome: "unparseable", retryable: true, detail: `${parsed.error}${cut}` };
      } catch (e) {
        failure = classify(e, this.cfg.timeoutMs);
      }
      const event: AttemptEvent = { attempt, outcome: failure.outcome, detail: failure.detail };
      if (failure.status !== undefined) event.status = failure.status;
      events.push(event);
      if (!failure.retryable || attempt >= this.cfg.maxAttempts) {
        const why = failure.retryable ? `gave up after ${attempt} attempts` : "not retryable";
        throw new JudgeCallError(`${failure.outcome}: ${failure.detail} (${why})`, events, usage);
      }
      const fromHeader = failure.retryAfterMs;
      const delay = fromHeader !== undefined ? Math.min(fromHeader, this.cfg.maxRetryAfterMs) : backoffMs(attempt, this.cfg.backoff.initialMs, this.cfg.backoff.maxMs, this.opts.random);
      event.delayMs = delay;
      event.delayFrom = fromHeader !== undefined ? "retry-after" : "backoff";
      await sleep(delay);
    }
  }

  /** One HTTP request under our own deadline, which also covers reading the body or the stream. */
  private async attemptOnce(
    messages: ChatMessage[],
    opts: CompleteOptions,
  ): Promise<{ text: string; finishReason: string | null; usage?: { prompt_tokens?: number; completion_tokens?: number } }> {
    const controller = new AbortController();
    let deadlineHit = false;
    const timer = setTimeout(() => {
      deadlineHit = true;
      controller.abort();
    }, this.cfg.timeoutMs);
    const params: Record<string, unknown> = { model: this.cfg.model, messages };
    if (this.cfg.temperature !== null) params.temperature = this.cfg.temperature;
    params[this.cfg.maxTokensParam] = this.cfg.maxOutputTokens;
    if (this.cfg.responseFormat === "json_schema" && opts.jsonSchema) params.response_format = opts.jsonSchema;
    else if (this.cfg.responseFormat === "json_object" && opts.jsonSchema) params.response_format = { type: "json_object" };
    try {
      if (!this.cfg.stream) {
        const data = (await this.sdk.chat.completions.create(params as never, { signal: controller.signal })) as unknown;
        if (!data || typeof data !== "object" || !Array.isArray((data as { choices?: unknown }).choices))
          throw new MalformedError(`response is not a chat completion: ${JSON.stringify(data).slice(0, 120)}`);
        const d = data as OpenAI.Chat.Completions.ChatCompletion;
        const choice = d.choices[0];
        if (!choice) throw new MalformedError("response has no choices");
        return { text: choice.message?.content ?? "", finishReason: choice.finish_reason ?? null, usage: d.usage ?? undefined };
      }
      const stream = await this.sdk.chat.completions.create({ ...(params as object), stream: true, stream_options: { include_usage: true } } as never, {
        signal: controller.signal,
      });
      let text = "";
      let finishReason: string | null = null;
      let usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
      for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
        const c = chunk.choices?.[0];
        if (c?.delta?.content) text += c.delta.content;
        if (c?.finish_reason) finishReason = c.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      if (!finishReason) throw new TruncatedError(`stream ended before a finish reason (${text.length} chars received)`);
      return { text, finishReason, usage };
    } catch (e) {
      if (deadlineHit) throw new DeadlineError(`no complete response within ${this.cfg.timeoutMs} ms`);
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }
}
