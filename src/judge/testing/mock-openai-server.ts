import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP server on 127.0.0.1 (port 0) speaking the OpenAI chat-completions protocol, for tests and benchmarks:
 * scripted replies, and injected faults — 429 with Retry-After, 5xx, slow replies past the client's timeout, bodies
 * that are not JSON, answers with fabricated evidence (just a scripted answer), and bodies or event streams cut off
 * mid-way. It records every request and counts the responses it finished sending.
 */

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A tool call in a scripted answer; `arguments` objects are sent JSON-encoded, as the API does. */
export interface MockToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

export type MockReply =
  /**
   * A normal completion whose assistant message is `content` (streamed as SSE when the request asks for it), with
   * `toolCalls` when the scripted model calls tools (finish reason `tool_calls` unless given).
   */
  | { kind: "answer"; content: string; toolCalls?: MockToolCall[]; usage?: MockUsage | null; finishReason?: string; delayMs?: number }
  /** An HTTP error status, e.g. 429 with `retryAfter: "1"` or an HTTP date, or 500. */
  | { kind: "status"; status: number; retryAfter?: string; headers?: Record<string, string>; body?: unknown; delayMs?: number }
  /** A raw body, e.g. a 200 whose body is not JSON. */
  | { kind: "raw"; status?: number; body: string; contentType?: string; delayMs?: number }
  /**
   * The reply is cut off: for a plain request the body stops half-way (Content-Length promises more) and the socket is
   * destroyed; for a streamed request some chunks are sent and the stream ends without a finish reason or [DONE]
   * (`streamEnd: "close"` ends the HTTP response cleanly, `"destroy"` kills the socket).
   */
  | { kind: "truncated"; content: string; streamEnd?: "close" | "destroy"; delayMs?: number };

export interface MockRequest {
  /** 1-based arrival number. */
  n: number;
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: ChatBody;
  receivedAt: number;
  /** Set when the response has been fully written (not for faults that cut the connection). */
  completedAt?: number;
  /** What the server replied. */
  reply?: MockReply["kind"];
}

export interface ChatBody {
  model?: string;
  messages?: { role: string; content: string; tool_calls?: unknown[]; tool_call_id?: string }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  response_format?: { type: string; json_schema?: { schema?: { properties?: { modes?: { required?: string[] } } } } };
  temperature?: number;
  [k: string]: unknown;
}

export type Responder = (req: MockRequest) => MockReply | Promise<MockReply>;

export interface MockServerOptions {
  /** Replies consumed in order, one per request; when empty, `responder` answers. */
  script?: MockReply[];
  /** Answers requests once the script is used up (default: every requested mode absent). */
  responder?: Responder;
  /** Latency added before every reply, in milliseconds. */
  latencyMs?: number;
}

export interface MockServer {
  /** Base URL for the SDK, ending in /v1. */
  baseURL: string;
  requests: MockRequest[];
  /** Requests whose response was completely written. */
  completed(): MockRequest[];
  /** Appends replies to the script. */
  push(...replies: MockReply[]): void;
  setResponder(r: Responder): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startMockOpenAI(opts: MockServerOptions = {}): Promise<MockServer> {
  const script = [...(opts.script ?? [])];
  let responder: Responder = opts.responder ?? absentResponder;
  const requests: MockRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((e) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `mock server failure: ${(e as Error).message}`, type: "mock_error" } }));
      } else res.destroy();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: ChatBody = {};
    try {
      body = raw ? (JSON.parse(raw) as ChatBody) : {};
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "request body is not JSON", type: "invalid_request_error" } }));
      return;
    }
    const record: MockRequest = { n: requests.length + 1, method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, receivedAt: Date.now() };
    requests.push(record);
    if (req.method !== "POST" || !/\/chat\/completions$/.test(record.path)) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${record.path}`, type: "invalid_request_error" } }));
      return;
    }
    // A client that went away (closed its side: killed, or gave up) is never answered, so never counted as completed.
    let gone = false;
    const onGone = () => (gone = true);
    req.socket.once("end", onGone);
    res.once("close", () => req.socket.off("end", onGone));
    const reply = script.length ? script.shift()! : await responder(record);
    record.reply = reply.kind;
    const delay = (opts.latencyMs ?? 0) + (reply.delayMs ?? 0);
    if (delay > 0) await sleep(delay);
    // The client may have given up (timeout) while we waited.
    if (gone || res.destroyed || req.socket.destroyed) return;
    const done = () => (record.completedAt = Date.now());

    switch (reply.kind) {
      case "status": {
        const headers: Record<string, string> = { "content-type": "application/json", ...(reply.headers ?? {}) };
        if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter;
        res.writeHead(reply.status, headers);
        res.end(JSON.stringify(reply.body ?? { error: { message: `mock status ${reply.status}`, type: reply.status === 429 ? "rate_limit_exceeded" : "server_error" } }), done);
        return;
      }
      case "raw":
        res.writeHead(reply.status ?? 200, { "content-type": reply.contentType ?? "application/json" });
        res.end(reply.body, done);
        return;
      case "answer": {
        const calls = toolCallsOf(reply.toolCalls);
        const finish = reply.finishReason ?? (calls ? "tool_calls" : "stop");
        if (body.stream) return streamAnswer(res, body, reply.content, finish, reply.usage, done, calls);
        {
          const payload = JSON.stringify(completion(body, reply.content, finish, reply.usage, calls));
          res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) });
          res.end(payload, done);
        }
        return;
      }
      case "truncated":
        if (body.stream) {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          const half = reply.content.slice(0, Math.ceil(reply.content.length / 2));
          for (const piece of chunksOf(half, 16)) res.write(sse(chunk(body, { content: piece }, null)));
          if (reply.streamEnd === "close") res.end();
          else setTimeout(() => res.socket?.destroy(), 20);
          return;
        }
        {
          const payload = Buffer.from(JSON.stringify(completion(body, reply.content, "stop", undefined)));
          res.writeHead(200, { "content-type": "application/json", "content-length": String(payload.length) });
          res.write(payload.subarray(0, Math.floor(payload.length / 2)));
          setTimeout(() => res.socket?.destroy(), 20);
        }
        return;
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    completed: () => requests.filter((r) => r.completedAt !== undefined),
    push: (...replies) => void script.push(...replies),
    setResponder: (r) => void (responder = r),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

let completionCounter = 0;
let toolCallCounter = 0;

type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

function toolCallsOf(calls: MockToolCall[] | undefined): WireToolCall[] | undefined {
  if (!calls?.length) return undefined;
  return calls.map((c) => ({
    id: c.id ?? `call_mock_${++toolCallCounter}`,
    type: "function",
    function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
  }));
}

function completion(body: ChatBody, content: string, finishReason: string, usage: MockUsage | null | undefined, toolCalls?: WireToolCall[]) {
  const message: Record<string, unknown> = { role: "assistant", content: toolCalls && !content ? null : content, refusal: null };
  if (toolCalls) message.tool_calls = toolCalls;
  const out: Record<string, unknown> = {
    id: `chatcmpl-mock-${++completionCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "mock",
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
  };
  // usage: null leaves it out, to exercise the client's estimate.
  if (usage !== null) out.usage = usage ?? defaultUsage(body, content);
  return out;
}

function defaultUsage(body: ChatBody, content: string): MockUsage & { total_tokens: number } {
  const prompt = (body.messages ?? []).reduce((n, m) => n + Math.ceil(String(m.content).length / 4), 0);
  const completionTokens = Math.ceil(content.length / 4);
  return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
}

function chunk(body: ChatBody, delta: Record<string, unknown>, finishReason: string | null) {
  return {
    id: `chatcmpl-mock-${completionCounter}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? "mock",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

const sse = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

function* chunksOf(s: string, size: number): Generator<string> {
  for (let i = 0; i < s.length; i += size) yield s.slice(i, i + size);
}

function streamAnswer(res: ServerResponse, body: ChatBody, content: string, finishReason: string, usage: MockUsage | null | undefined, done: () => void, toolCalls?: WireToolCall[]): void {
  completionCounter++;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(sse(chunk(body, { role: "assistant", content: "" }, null)));
  for (const piece of chunksOf(content, 64)) res.write(sse(chunk(body, { content: piece }, null)));
  toolCalls?.forEach((c, index) => res.write(sse(chunk(body, { tool_calls: [{ index, ...c }] }, null))));
  res.write(sse(chunk(body, {}, finishReason)));
  if (body.stream_options?.include_usage && usage !== null)
    res.write(sse({ id: `chatcmpl-mock-${completionCounter}`, object: "chat.completion.chunk", created: 0, model: body.model ?? "mock", choices: [], usage: usage ?? defaultUsage(body, content) }));
  res.end("data: [DONE]\n\n", done);
}

// ---------------------------------------------------------------------------------------------------------------
// Answer builders for scripted replies
// ---------------------------------------------------------------------------------------------------------------

/** The codes a request asks the judge about: from its JSON schema, else from the "Judge these codes:" line. */
export function requestedCodes(body: ChatBody): string[] {
  const fromSchema = body.response_format?.json_schema?.schema?.properties?.modes?.required;
  if (fromSchema?.length) return fromSchema;
  const text = (body.messages ?? []).map((m) => m.content).join("\n");
  const line = /Judge these codes: ([\d., ]+)\./.exec(text)?.[1];
  if (line) return line.split(/,\s*/).map((c) => c.trim()).filter(Boolean);
  // MAST-compatible prompt: the template's code lines.
  return [...new Set([...text.matchAll(/^(\d+\.\d+) [^\n:]+: yes or no$/gm)].map((m) => m[1]!))];
}

export function promptText(body: ChatBody): string {
  return (body.messages ?? []).map((m) => m.content).join("\n");
}

export interface PresentMode {
  steps: number[];
  evidence: string[];
  agent?: string | null;
  confidence?: number;
  rationale?: string;
}

/** A structured JSON answer covering exactly `codes`: the listed modes present, every other one absent. */
export function jsonAnswer(codes: string[], present: Record<string, PresentMode> = {}, extra: { summary?: string; taskSuccess?: boolean | null } = {}): string {
  const modes: Record<string, unknown> = {};
  for (const c of codes) {
    const p = present[c];
    modes[c] = p
      ? { present: true, confidence: p.confidence ?? 0.8, steps: p.steps, agent: p.agent ?? null, evidence: p.evidence, rationale: p.rationale ?? "scripted" }
      : { present: false, confidence: 0.9, steps: [], agent: null, evidence: [], rationale: "not seen" };
  }
  return JSON.stringify({ summary: extra.summary ?? "scripted summary", taskSuccess: extra.taskSuccess ?? null, modes });
}

/** A MAST-compatible text answer with `yes` for the given codes; `names` gives each code's label. */
export function mastAnswer(names: Record<string, string>, yes: string[], extra: { summary?: string; completed?: boolean } = {}): string {
  const lines = Object.entries(names).map(([code, name]) => `${code} ${name}: ${yes.includes(code) ? "yes" : "no"}`);
  return ["@@", `A. ${extra.summary ?? "scripted summary"}`, `B. Task completed: ${extra.completed ? "yes" : "no"}`, "C.", ...lines, "@@"].join("\n");
}

/** Default responder: every requested mode absent (a valid answer for either prompt kind). */
export const absentResponder: Responder = (req) => {
  const codes = requestedCodes(req.body);
  const mast = !(req.body.messages ?? []).some((m) => m.role === "system") && /^@@$/m.test(promptText(req.body));
  if (mast) return { kind: "answer", content: mastAnswer(Object.fromEntries(codes.map((c) => [c, "mode"])), []) };
  return { kind: "answer", content: jsonAnswer(codes) };
};
