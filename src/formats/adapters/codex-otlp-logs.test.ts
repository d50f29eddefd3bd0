import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAll } from "../read.js";
import { anyValue, attributes } from "./codex-otlp-logs.js";

const CONV_A = "0199b3c4-1111-7222-8333-444455556666";
const CONV_B = "0199b3c4-aaaa-7bbb-8ccc-ddddeeeeffff";
const T0 = 1768504372000n * 1_000_000n; // 2026-01-15T19:12:52.000Z in ns

/** snake_case attributes as Zero's receiver writes them after decoding protobuf. */
const kv = (attrs: Record<string, string | number | boolean>) =>
  Object.entries(attrs).map(([key, v]) => ({
    key,
    value: typeof v === "boolean" ? { bool_value: v } : typeof v === "number" ? (Number.isInteger(v) ? { int_value: String(v) } : { double_value: v }) : { string_value: v },
  }));
const record = (offsetMs: number, attrs: Record<string, string | number | boolean>) => ({
  time_unix_nano: String(T0 + BigInt(offsetMs) * 1_000_000n),
  observed_time_unix_nano: "0",
  severity_number: 9,
  severity_text: "INFO",
  body: { string_value: String(attrs["event.name"]) },
  attributes: kv(attrs),
  trace_id: "",
  span_id: "",
});
const common = (conv: string) => ({ "conversation.id": conv, "app.version": "0.80.0", model: "openai/gpt-oss-120b", slug: "gpt-oss-120b", "terminal.type": "exec" });
const post = (records: unknown[], ts: string) => ({
  timestamp: ts,
  path: "/v1/logs",
  content_type: "application/x-protobuf",
  content_length: 2048,
  data: {
    resource_logs: [
      {
        resource: { attributes: kv({ "service.name": "codex_exec" }) },
        scope_logs: [{ scope: { name: "codex_otel" }, log_records: records }],
      },
    ],
  },
});

const LINES = [
  post(
    [
      record(0, { ...common(CONV_A), "event.name": "codex.conversation_starts", provider_name: "litellm", reasoning_effort: "low", context_window: 131072, approval_policy: "never", sandbox_policy: "workspace-write", mcp_servers: "offline_incident_analysis" }),
      record(5, { ...common(CONV_A), "event.name": "codex.user_prompt", prompt_length: 19, prompt: "Begin investigation" }),
      record(900, { ...common(CONV_A), "event.name": "codex.api_request", attempt: 1, duration_ms: 880, "http.response.status_code": 200 }),
      record(950, { ...common(CONV_A), "event.name": "codex.sse_event", "event.kind": "response.output_item.done", duration_ms: 3 }),
      record(960, { ...common(CONV_A), "event.name": "codex.sse_event", "event.kind": "response.completed", input_token_count: 9120, output_token_count: 85, cached_token_count: 0, reasoning_token_count: 40, tool_token_count: 0 }),
      record(970, { ...common(CONV_A), "event.name": "codex.tool_decision", tool_name: "shell", call_id: "chatcmpl-tool-1", decision: "approved", source: "config" }),
    ],
    "2026-01-15T19:12:53.100Z",
  ),
  // the other conversation's records arrive in between, in OTLP/JSON camelCase
  {
    timestamp: "2026-01-15T19:12:53.200Z",
    path: "/v1/logs",
    content_type: "application/json",
    content_length: 512,
    data: {
      resourceLogs: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "codex-cli" } }] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: String(T0 + 100n * 1_000_000n),
                  attributes: [
                    { key: "event.name", value: { stringValue: "codex.user_prompt" } },
                    { key: "conversation.id", value: { stringValue: CONV_B } },
                    { key: "model", value: { stringValue: "gemini-3-flash-preview" } },
                    { key: "prompt", value: { stringValue: "[REDACTED]" } },
                  ],
                  traceId: "5b8efff798038103d269b633813fc60c",
                  spanId: "eee19b7ec3c1b174",
                },
              ],
            },
          ],
        },
      ],
    },
  },
  { timestamp: "2026-01-15T19:12:53.300Z", path: "/v1/metrics", content_type: "application/x-protobuf", content_length: 300, data: {} },
  { timestamp: "2026-01-15T19:12:53.400Z", path: "/v1/logs", content_type: "application/x-protobuf", content_length: 99, body_hex: "0a61", decode_error: "Error parsing message" },
  post(
    [
      record(2000, {
        ...common(CONV_A),
        "event.name": "codex.tool_result",
        tool_name: "shell",
        call_id: "chatcmpl-tool-1",
        arguments: '{"command":["bash","-lc","head alerts/missing.json"]}',
        duration_ms: 612,
        success: "false",
        output: "head: alerts/missing.json: No such file or directory",
      }),
      record(2600, { ...common(CONV_A), "event.name": "codex.api_request", attempt: 1, duration_ms: 400, "http.response.status_code": 429, "error.message": "rate limited" }),
      record(3000, { ...common(CONV_A), "event.name": "codex.tool_result", tool_name: "mcp__offline_incident_analysis__alert_summary", call_id: "chatcmpl-tool-2", arguments: "{}", duration_ms: 1500, success: "true", output: "[]" }),
      record(3100, { ...common(CONV_A), "event.name": "codex.sandbox_assessment", call_id: "chatcmpl-tool-2", status: "ok", duration_ms: 2 }),
    ],
    "2026-01-15T19:12:55.100Z",
  ),
];

function zeroTraces(): string {
  const run = join(mkdtempSync(join(tmpdir(), "faultline-otlp-")), "agent_outputs", "Scenario-2", "3");
  mkdirSync(join(run, "traces"), { recursive: true });
  const p = join(run, "traces", "traces.jsonl");
  writeFileSync(p, LINES.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return p;
}

describe("codex-otlp-logs", () => {
  it("builds one trace per conversation.id from snake_case and camelCase exports", async () => {
    const r = await readAll(zeroTraces());
    expect(r.files[0]!.format).toBe("codex-otlp-logs");
    expect(r.traces.map((t) => t.id)).toEqual([CONV_A, CONV_B]);
    const a = r.traces[0]!;
    expect(a.model).toBe("gpt-oss-120b");
    expect(a.metadata).toMatchObject({ modelRaw: "openai/gpt-oss-120b", serviceName: "codex_exec", appVersion: "0.80.0", providerName: "litellm", contextWindow: 131072, logRecords: 10 });
    expect(a.metadata.otherEvents).toEqual({ "codex.sse_event/response.output_item.done": 1, "codex.sandbox_assessment": 1 });
    expect(a.task).toEqual({ id: "2", text: "Begin investigation", benchmark: "itbench-sre" });
    expect(a.steps.map((s) => [s.kind, s.tool?.name ?? s.tags?.join() ?? ""])).toEqual([
      ["event", "conversation-start"],
      ["message", ""],
      ["llm_call", ""],
      ["event", "tool-decision"],
      ["tool_call", "shell"],
      ["tool_result", "shell"],
      ["llm_call", ""],
      ["error", "api-error"],
      ["tool_call", "mcp__offline_incident_analysis__alert_summary"],
      ["tool_result", "mcp__offline_incident_analysis__alert_summary"],
    ]);
    expect(a.steps[0]!.time).toBe("2026-01-15T19:12:52.000Z");
    expect(a.steps[2]).toMatchObject({ text: "API request attempt 1 → HTTP 200 in 880 ms", usage: { input: 9120, output: 85, cachedInput: 0, reasoning: 40 } });
    expect(a.steps[4]!.tool!.args).toEqual({ command: ["bash", "-lc", "head alerts/missing.json"] });
    expect(a.steps[5]!.tool).toMatchObject({ callId: "chatcmpl-tool-1", isError: true, durationMs: 612, callIndex: 4 });
    expect(a.steps[7]!.text).toBe("rate limited");
    expect(a.steps[9]!.tool).toMatchObject({ isError: false, output: "[]" });
    const b = r.traces[1]!;
    expect(b.model).toBe("gemini-3-flash-preview");
    expect(b.task?.text).toBeUndefined();
    expect(b.steps[0]).toMatchObject({ kind: "message", text: "[REDACTED]", tags: ["redacted"], span: { traceId: "5b8efff798038103d269b633813fc60c", spanId: "eee19b7ec3c1b174" } });
  });

  it("reports the POST the receiver could not decode and names the skipped non-log posts", async () => {
    const r = await readAll(zeroTraces());
    const said = r.diagnostics.map((d) => [d.level, d.line ?? null, d.message]);
    expect(said).toContainEqual(["warning", 4, "the receiver could not decode this POST (Error parsing message); its log records are lost"]);
    expect(said).toContainEqual(["notice", null, "not log exports, not read: 1 × /v1/metrics"]);
    expect(r.files[0]!.skippedLines).toBe(1);
  });

  it("decodes every AnyValue encoding", () => {
    expect(anyValue({ int_value: "42" })).toBe(42);
    expect(anyValue({ boolValue: "true" })).toBe(true);
    expect(anyValue({ arrayValue: { values: [{ stringValue: "a" }, { doubleValue: 1.5 }] } })).toEqual(["a", 1.5]);
    expect(anyValue({ kvlist_value: { values: [{ key: "k", value: { string_value: "v" } }] } })).toEqual({ k: "v" });
    expect(attributes({ "event.name": "codex.user_prompt" })).toEqual({ "event.name": "codex.user_prompt" });
  });
});
