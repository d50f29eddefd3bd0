import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { SpanStatusCode, context, trace as otelTrace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RULES_SPEC, runWorker } from "../distributed/index.js";
import { readAll } from "../formats/index.js";
import { PgStore } from "../store/index.js";
import { freshDatabase } from "../testing/pg.js";
import { startCollector, type RunningCollector } from "./index.js";

let url: string;
let collector: RunningCollector;
let store: PgStore;
const TOKEN = "collect-test-token";
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  url = await freshDatabase("collect");
  // idle window 1 s; the test sweeps by hand (sweepNow) so nothing depends on timing
  collector = await startCollector({ db: url, port: 0, token: TOKEN, spec: DEFAULT_RULES_SPEC, idleSeconds: 1, sweepMs: 3_600_000, maxBodyBytes: 256 * 1024 });
  store = new PgStore(url);
});

afterAll(async () => {
  await collector?.close();
  await store?.close();
});

/** Sweeps until `n` traces were handed over (a trace is complete one idle second after its last span). */
async function sweepUntil(n: number): Promise<void> {
  let total = 0;
  const end = Date.now() + 30_000;
  while (total < n && Date.now() < end) {
    total += await collector.sweepNow();
    if (total < n) await new Promise((r) => setTimeout(r, 250));
  }
  expect(total).toBe(n);
}

describe("faultline collect (OTLP/HTTP)", () => {
  it("takes protobuf from the OpenTelemetry JS SDK's own exporter (gzip); the trace is diagnosed once complete", async () => {
    const exporter = new OTLPTraceExporter({ url: `${collector.url}/v1/traces`, compression: "gzip" as never, headers: auth });
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer("opentelemetry.instrumentation.openai_v2", "2.1b0");
    const root = tracer.startSpan("invoke_agent sdk-agent", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sdk-agent", "gen_ai.request.model": "gpt-4o" } });
    const ctx = otelTrace.setSpan(context.active(), root);
    const chat = tracer.startSpan(
      "chat gpt-4o",
      {
        attributes: {
          "gen_ai.operation.name": "chat",
          "gen_ai.request.model": "gpt-4o",
          "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Restart the checkout service and confirm it is healthy." }] }]),
          "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "restart_service", arguments: { name: "checkout" } }] }]),
        },
      },
      ctx,
    );
    chat.end();
    const tool = tracer.startSpan("execute_tool restart_service", { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "restart_service", "gen_ai.tool.call.id": "c1" } }, ctx);
    tool.setStatus({ code: SpanStatusCode.ERROR, message: "permission denied" });
    tool.end();
    root.end();
    await provider.forceFlush();
    const traceId = root.spanContext().traceId;
    await provider.shutdown();

    await sweepUntil(1);
    await runWorker({ db: url, concurrency: 2, exitWhenIdle: true });
    const stored = await store.trace(collector.runId, traceId);
    expect(stored?.source.format).toBe("otlp-traces");
    expect(stored?.steps.length).toBeGreaterThan(0);
    expect(stored?.model).toBe("gpt-4o");
    const d = await store.traceDiagnosis(collector.runId, traceId, DEFAULT_RULES_SPEC.annotator);
    expect(d?.trace_id).toBe(traceId);
    expect((await store.progress(collector.runId))?.done).toBe(1);
  });

  it("OTLP/JSON, gzip: the live trace is the trace the same spans make as a file", async () => {
    const file = "examples/otlp/rollout-watcher.otlp.json";
    const body = readFileSync(file);
    const res = await fetch(`${collector.url}/v1/traces`, { method: "POST", body: gzipSync(body), headers: { ...auth, "content-type": "application/json", "content-encoding": "gzip" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const fromFile = (await readAll([file])).traces;
    expect((await store.pool.query("SELECT count(*)::int AS n FROM collected_spans")).rows[0].n).toBeGreaterThan(0);
    await sweepUntil(fromFile.length);
    // handed over: the spans left with their traces
    expect((await store.pool.query("SELECT count(*)::int AS n FROM collected_spans")).rows[0].n).toBe(0);
    for (const t of fromFile) {
      const live = await store.trace(collector.runId, t.id);
      // the same steps; only where each span sat (its JSON pointer in the file vs. in the stored request) differs
      const unplaced = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === "pointer" ? undefined : x)));
      expect(unplaced(live?.steps)).toEqual(unplaced(t.steps));
      expect(live?.model).toBe(t.model);
      expect(live?.outcome).toEqual(t.outcome);
    }

    // a span arriving after its trace was handed to the workers is refused, and said so
    const late = JSON.parse(body.toString("utf8"));
    const again = await fetch(`${collector.url}/v1/traces`, { method: "POST", body: JSON.stringify(late), headers: { ...auth, "content-type": "application/json" } });
    expect(again.status).toBe(400);
    const refused = (await again.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    expect(Number(refused.partialSuccess.rejectedSpans)).toBeGreaterThan(0);
    expect(refused.partialSuccess.errorMessage).toContain("already complete");
  });

  it("refuses what it cannot take, with a partial-success body: no token, bad body, too large, wrong type; invalid spans", async () => {
    const post = (body: string | Uint8Array, headers: Record<string, string>) => fetch(`${collector.url}/v1/traces`, { method: "POST", body: body as never, headers });
    const noToken = await post("{}", { "content-type": "application/json" });
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as { partialSuccess: { errorMessage: string } }).partialSuccess.errorMessage).toContain("token");
    expect((await post("{not json", { ...auth, "content-type": "application/json" })).status).toBe(400);
    expect((await post(new Uint8Array([0xff, 0xff, 0xff]), { ...auth, "content-type": "application/x-protobuf" })).status).toBe(400);
    // a small gzip body that inflates past the limit
    expect((await post(gzipSync(Buffer.alloc(40 * 1024 * 1024)), { ...auth, "content-type": "application/json", "content-encoding": "gzip" })).status).toBe(413);
    expect((await post("x", { ...auth, "content-type": "text/plain" })).status).toBe(415);
    const mixed = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { traceId: "nothex", spanId: "0011223344556677", name: "bad" },
                { traceId: "aa".repeat(16), spanId: "bb".repeat(8), name: "good", parentSpanId: "cc".repeat(8) },
              ],
            },
          ],
        },
      ],
    };
    const partial = await post(JSON.stringify(mixed), { ...auth, "content-type": "application/json" });
    expect(partial.status).toBe(200);
    expect(await partial.json()).toEqual({ partialSuccess: { rejectedSpans: "1", errorMessage: expect.stringContaining("without a valid traceId/spanId") } });
    // last: the server stops reading an oversized body and closes that connection
    expect((await post(new Uint8Array(300 * 1024), { ...auth, "content-type": "application/x-protobuf" })).status).toBe(413);

  });

  it("will not listen beyond loopback without a token", async () => {
    await expect(startCollector({ db: url, host: "0.0.0.0", port: 0, spec: DEFAULT_RULES_SPEC })).rejects.toThrow(/token/);
  });
});
