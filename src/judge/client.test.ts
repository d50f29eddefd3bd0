import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { backoffMs, JudgeCallError, OpenAIChatModel, parseRetryAfter, type ProviderConfig } from "./client.js";
import { estimateTokens } from "./render.js";
import type { ParseResult } from "./response.js";
import { startMockOpenAI, type MockServer } from "./testing/mock-openai-server.js";

/** A parser that accepts JSON objects only, like the judge's. */
const parseJson = (text: string): ParseResult<unknown> => {
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v ? { ok: true, value: v } : { ok: false, error: "not an object" };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
};
const GOOD = '{"fine":true}';
const messages = [{ role: "user" as const, content: "Judge this." }];

let server: MockServer;
beforeAll(async () => {
  server = await startMockOpenAI({ responder: () => ({ kind: "answer", content: GOOD }) });
});
afterAll(() => server.close());
beforeEach(() => void server.requests.splice(0));

const model = (cfg: Partial<ProviderConfig> = {}) =>
  new OpenAIChatModel(
    { baseURL: server.baseURL, model: "judge-model", apiKeyEnv: "FL_TEST_KEY", backoff: { initialMs: 10, maxMs: 100 }, timeoutMs: 2000, ...cfg },
    { env: { FL_TEST_KEY: "sk-test-secret" }, random: () => 1 },
  );

async function failure(p: Promise<unknown>): Promise<JudgeCallError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JudgeCallError) return e;
    throw e;
  }
  throw new Error("expected the call to fail");
}

describe("OpenAIChatModel against a local chat-completions server", () => {
  it("sends model, temperature, output limit, response_format, the key from the named variable and extra headers", async () => {
    const m = model({ headers: { "x-team": "faultline" } });
    const rf = { type: "json_schema", json_schema: { name: "x", strict: true, schema: { type: "object" } } };
    const r = await m.complete(messages, parseJson, { jsonSchema: rf });
    expect(r.value).toEqual({ fine: true });
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBe("Bearer sk-test-secret");
    expect(req.headers["x-team"]).toBe("faultline");
    expect(req.body).toMatchObject({ model: "judge-model", temperature: 0, max_completion_tokens: 4096, response_format: rf, messages });
  });

  it("refuses to start when the named key variable is unset", () => {
    expect(() => new OpenAIChatModel({ baseURL: server.baseURL, model: "m", apiKeyEnv: "FL_NOPE" }, { env: {} })).toThrow("environment variable FL_NOPE (the API key) is not set");
  });

  it("429 with Retry-After in seconds: waits that long, then retries", async () => {
    server.push({ kind: "status", status: 429, retryAfter: "1" });
    const r = await model().complete(messages, parseJson);
    expect(r.attempts).toBe(2);
    expect(r.events[0]).toMatchObject({ outcome: "rate-limited", status: 429, delayMs: 1000, delayFrom: "retry-after" });
    const gap = server.requests[1]!.receivedAt - server.requests[0]!.receivedAt;
    expect(gap).toBeGreaterThanOrEqual(950);
  });

  it("429 with Retry-After as an HTTP date: waits until then", async () => {
    const at = new Date(Date.now() + 2000);
    server.push({ kind: "status", status: 429, retryAfter: at.toUTCString() });
    const r = await model().complete(messages, parseJson);
    expect(r.events[0]!.delayFrom).toBe("retry-after");
    // HTTP dates have whole seconds: the wait is between 1 and 2 s.
    expect(r.events[0]!.delayMs).toBeGreaterThan(900);
    expect(r.events[0]!.delayMs).toBeLessThanOrEqual(2000);
    expect(server.requests[1]!.receivedAt - server.requests[0]!.receivedAt).toBeGreaterThanOrEqual(900);
  });

  it("caps a very long Retry-After", async () => {
    server.push({ kind: "status", status: 429, retryAfter: "3600" });
    const r = await model({ maxRetryAfterMs: 50 }).complete(messages, parseJson);
    expect(r.events[0]).toMatchObject({ delayMs: 50, delayFrom: "retry-after" });
  });

  it("500: retried with exponential backoff, then succeeds", async () => {
    server.push({ kind: "status", status: 500 }, { kind: "status", status: 503 });
    const r = await model().complete(messages, parseJson);
    expect(r.attempts).toBe(3);
    expect(r.events.map((e) => [e.outcome, e.status, e.delayMs, e.delayFrom])).toEqual([
      ["server-error", 500, 10, "backoff"],
      ["server-error", 503, 20, "backoff"],
      ["ok", undefined, undefined, undefined],
    ]);
  });

  it("500 every time: gives up after maxAttempts requests (the SDK's own retries are off)", async () => {
    for (let i = 0; i < 3; i++) server.push({ kind: "status", status: 500 });
    const e = await failure(model({ maxAttempts: 3 }).complete(messages, parseJson));
    expect(server.requests).toHaveLength(3);
    expect(e.message).toMatch(/^server-error: HTTP 500.*gave up after 3 attempts/);
    expect(e.events).toHaveLength(3);
  });

  it("400: not retried", async () => {
    server.push({ kind: "status", status: 400, body: { error: { message: "bad parameter temperature", type: "invalid_request_error" } } });
    const e = await failure(model().complete(messages, parseJson));
    expect(server.requests).toHaveLength(1);
    expect(e.message).toMatch(/^client-error: HTTP 400.*bad parameter temperature.*not retryable/);
  });

  it("a slow response past the timeout is abandoned and retried", async () => {
    server.push({ kind: "answer", content: GOOD, delayMs: 1500 });
    const t0 = Date.now();
    const r = await model({ timeoutMs: 300 }).complete(messages, parseJson);
    expect(r.events[0]!.outcome).toBe("timeout");
    expect(r.attempts).toBe(2);
    expect(Date.now() - t0).toBeLessThan(1400);
  });

  it("slow every time: a timeout error after the last attempt", async () => {
    server.push({ kind: "answer", content: GOOD, delayMs: 800 }, { kind: "answer", content: GOOD, delayMs: 800 });
    const e = await failure(model({ timeoutMs: 200, maxAttempts: 2 }).complete(messages, parseJson));
    expect(e.message).toMatch(/^timeout: .*200 ms.*gave up after 2 attempts/);
    expect(e.events.map((x) => x.outcome)).toEqual(["timeout", "timeout"]);
  });

  it("a response body that is not JSON is retried", async () => {
    server.push({ kind: "raw", body: "<html>Bad gateway</html>" });
    const r = await model().complete(messages, parseJson);
    expect(r.events[0]!.outcome).toBe("malformed");
    expect(r.value).toEqual({ fine: true });
  });

  it("an answer that does not parse is retried, and counted as paid", async () => {
    server.push({ kind: "answer", content: "Sure! Mode 1.3 is present.", usage: { prompt_tokens: 100, completion_tokens: 7 } });
    const r = await model().complete(messages, parseJson);
    expect(r.events[0]).toMatchObject({ outcome: "unparseable" });
    expect(r.attempts).toBe(2);
    expect(r.usage.reportedCalls).toBe(2);
    expect(r.usage.input).toBeGreaterThanOrEqual(100);
  });

  it("an answer that never parses ends in an error carrying the parse failure and the tokens paid", async () => {
    for (let i = 0; i < 2; i++) server.push({ kind: "answer", content: "not json", usage: { prompt_tokens: 50, completion_tokens: 3 } });
    const e = await failure(model({ maxAttempts: 2 }).complete(messages, parseJson));
    expect(e.message).toMatch(/^unparseable: .*gave up after 2 attempts/);
    expect(e.usage).toEqual({ input: 100, output: 6, reportedCalls: 2, estimatedCalls: 0 });
  });

  it("an answer cut at the output limit says so", async () => {
    for (let i = 0; i < 2; i++) server.push({ kind: "answer", content: '{"fine":', finishReason: "length" });
    const e = await failure(model({ maxAttempts: 2, maxOutputTokens: 64 }).complete(messages, parseJson));
    expect(e.message).toContain("the answer hit the output limit of 64 tokens");
  });

  it("a body cut off mid-way is retried", async () => {
    server.push({ kind: "truncated", content: GOOD });
    const r = await model().complete(messages, parseJson);
    expect(r.events[0]!.outcome).toBe("truncated");
    expect(r.value).toEqual({ fine: true });
  });

  it("streams an answer, with usage from the stream", async () => {
    server.push({ kind: "answer", content: GOOD.repeat(1), usage: { prompt_tokens: 11, completion_tokens: 4 } });
    const r = await model({ stream: true }).complete(messages, parseJson);
    expect(r.value).toEqual({ fine: true });
    expect(server.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(r.usage).toEqual({ input: 11, output: 4, reportedCalls: 1, estimatedCalls: 0 });
  });

  it("a stream that stops without a finish reason (socket killed or response ended) is retried", async () => {
    server.push({ kind: "truncated", content: GOOD.repeat(20), streamEnd: "destroy" }, { kind: "truncated", content: GOOD.repeat(20), streamEnd: "close" });
    const r = await model({ stream: true }).complete(messages, parseJson);
    expect(r.events.map((e) => e.outcome)).toEqual(["truncated", "truncated", "ok"]);
    expect(r.events[1]!.detail).toMatch(/stream ended before a finish reason/);
  });

  it("estimates usage when the provider reports none", async () => {
    server.push({ kind: "answer", content: GOOD, usage: null });
    const r = await model().complete(messages, parseJson);
    expect(r.usage).toEqual({ input: estimateTokens("Judge this.") + 4, output: estimateTokens(GOOD), reportedCalls: 0, estimatedCalls: 1 });
  });
});

describe("retry timing helpers", () => {
  it("parseRetryAfter reads seconds, milliseconds and HTTP dates", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    const now = Date.parse("2026-03-01T10:00:00Z");
    expect(parseRetryAfter(h({ "retry-after": "3" }), now)).toBe(3000);
    expect(parseRetryAfter(h({ "retry-after": "0.5" }), now)).toBe(500);
    expect(parseRetryAfter(h({ "retry-after-ms": "250", "retry-after": "9" }), now)).toBe(250);
    expect(parseRetryAfter(h({ "retry-after": "Sun, 01 Mar 2026 10:00:07 GMT" }), now)).toBe(7000);
    expect(parseRetryAfter(h({ "retry-after": "Sun, 01 Mar 2026 09:00:00 GMT" }), now)).toBe(0);
    expect(parseRetryAfter(h({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(h({}), now)).toBeUndefined();
  });

  it("backoffMs doubles up to the cap with jitter between half and all", () => {
    expect([1, 2, 3, 4, 5].map((k) => backoffMs(k, 100, 1000, () => 1))).toEqual([100, 200, 400, 800, 1000]);
    expect([1, 2, 3].map((k) => backoffMs(k, 100, 1000, () => 0))).toEqual([50, 100, 200]);
  });
});
