import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-otlp-"));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

describe("otlp-traces on the corpus (otlp-openinference)", () => {
  it("reads the 3 traces of the MANIFEST, with no diagnostics", async () => {
    const { traces, files, diagnostics } = await readAll(corpus("otlp-openinference"));
    expect(traces).toHaveLength(3);
    expect(files.filter((f) => f.format === "otlp-traces")).toHaveLength(3);
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
  });

  it("decodes base64 ids, merges the LangChain/OpenAI mirror spans, and links tavily tools to the model's calls", async () => {
    const path = corpus("otlp-openinference", "quo_tav_agent.json");
    const { traces } = await readAll(path);
    const t = traces[0]!;
    // the file's own hex form of its base64 trace id
    const raw = readFileSync(path, "utf8");
    expect(raw).toContain('"PHL1gt1FhyAgcA3641rvnQ=="');
    expect(raw).toContain(`"stringValue": "${t.id}"`); // quotient.trace.id attribute
    expect(t.id).toBe("3c72f582dd45872020700dfae35aef9d");
    expect(t.model).toBe("gpt-4o");
    expect(t.framework).toBe("langchain");
    expect(t.task?.text).toBe("What are the latest AI trends in 2024?");
    expect(t.metadata.mirrorSpans).toHaveLength(3); // 3 ChatCompletion spans repeat the 3 ChatOpenAI calls
    const calls = t.steps.filter((s) => s.kind === "tool_call");
    expect(calls.map((s) => s.tool?.name)).toEqual(["tavily_search", "tavily_extract"]);
    expect(calls[0]!.tool).toMatchObject({ callId: "call_kW83onhuRFzCvfhqM524IExy", args: { query: "latest AI trends 2024", time_range: "year", topic: "general" } });
    const result = t.steps[calls[0]!.tool!.resultIndex!]!;
    expect(result.kind).toBe("tool_result");
    expect(raw).toContain('"spanId": "7vj1k/gWaeM="'); // the tavily_search span, base64 in the file
    expect(result.span?.spanId).toBe(Buffer.from("7vj1k/gWaeM=", "base64").toString("hex"));
    expect(result.span?.spanId).toBe("eef8f593f81669e3");
    expect(t.steps.filter((s) => s.kind === "llm_call")).toHaveLength(3);
    expect(t.steps.at(-1)).toMatchObject({ kind: "message", role: "assistant", agent: "AgentExecutor" });
    expect(t.steps.at(-1)!.text).toMatch(/^In 2024, several key trends have emerged/);
    expect(t.steps.every((s) => s.span?.traceId === t.id)).toBe(true);
  });

  it("reads the RAG retriever as a retrieval tool pair and the o1 planning run's usage", async () => {
    const { traces } = await readAll([corpus("otlp-openinference", "rag_earnings_agent.json"), corpus("otlp-openinference", "smol_deep_research_agent.json")]);
    const [rag, smol] = traces;
    expect(rag!.model).toBe("gpt-3.5-turbo");
    const retrieval = rag!.steps.filter((s) => s.tags?.includes("retrieval"));
    expect(retrieval.map((s) => [s.kind, s.tool?.name])).toEqual([["tool_call", "VectorStoreRetriever"], ["tool_result", "VectorStoreRetriever"]]);
    expect(retrieval[1]!.text).toMatch(/^Meta Platforms Inc\. Q4 2023 Earnings Report/);
    expect(rag!.steps.find((s) => s.kind === "llm_call")?.usage).toEqual({ input: 629, output: 19, cachedInput: 0, reasoning: 0 });
    expect(smol!.model).toBe("o1-2024-12-17");
    expect(smol!.steps.filter((s) => s.kind === "llm_call")).toHaveLength(6);
    expect(smol!.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool?.callId)).toEqual(["call_TzKWLXOFTa6np870KErcqInF", "call_4by1BwCUZuVjAErexOsd9gQ9"]);
  });
});

describe("otlp-traces on synthetic input", () => {
  const b64 = (hex: string) => Buffer.from(hex, "hex").toString("base64");
  const TRACE_A = "5b8efff798038103d269b633813fc60c";
  const TRACE_B = "0123456789abcdef0123456789abcdef";
  const snakeSpan = (traceHex: string, spanHex: string, parentHex: string | undefined, name: string, start: string, attrs: [string, unknown][]) => ({
    trace_id: b64(traceHex),
    span_id: b64(spanHex),
    ...(parentHex ? { parent_span_id: b64(parentHex) } : {}),
    name,
    kind: "SPAN_KIND_CLIENT",
    start_time_unix_nano: start,
    end_time_unix_nano: String(BigInt(start) + 1_000_000n),
    attributes: attrs.map(([key, value]) => ({ key, value: typeof value === "number" ? { int_value: String(value) } : { string_value: value } })),
    status: { code: 0 },
  });

  it("reads snake_case JSONL with base64 ids, grouping many traces by trace id across lines", async () => {
    const env = (spans: unknown[], scope: string) => JSON.stringify({ resource_spans: [{ resource: { attributes: [{ key: "service.name", value: { string_value: "weather-bot" } }] }, scope_spans: [{ scope: { name: scope }, spans }] }] });
    const p = file(
      "spans.jsonl",
      [
        env([snakeSpan(TRACE_A, "051581bf3cb55c13", undefined, "invoke_agent weather", "1700000000000000000", [["gen_ai.operation.name", "invoke_agent"], ["gen_ai.agent.name", "weather"]])], "opentelemetry.instrumentation.genai"),
        env([snakeSpan(TRACE_B, "1111111111111111", undefined, "chat gpt-4o", "1700000001000000000", [["gen_ai.operation.name", "chat"], ["gen_ai.request.model", "openai/gpt-4o"], ["gen_ai.output.messages", JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "B done" }] }])]])], "opentelemetry.instrumentation.genai"),
        env(
          [
            snakeSpan(TRACE_A, "aaaaaaaaaaaaaaaa", "051581bf3cb55c13", "execute_tool get_weather", "1700000000500000000", [["gen_ai.operation.name", "execute_tool"], ["gen_ai.tool.name", "get_weather"], ["gen_ai.tool.call.id", "call_1"], ["gen_ai.tool.call.result", "rainy"]]),
            snakeSpan(TRACE_A, "bbbbbbbbbbbbbbbb", "051581bf3cb55c13", "chat gpt-4o", "1700000000100000000", [
              ["gen_ai.operation.name", "chat"],
              ["gen_ai.request.model", "gpt-4o"],
              ["gen_ai.usage.input_tokens", 42],
              ["gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] }])],
              ["gen_ai.output.messages", JSON.stringify([{ role: "assistant", parts: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Oslo" } }] }])],
            ]),
          ],
          "opentelemetry.instrumentation.genai",
        ),
      ].join("\n") + "\n",
    );
    const { traces, diagnostics, files } = await readAll(p);
    expect(files[0]!.format).toBe("otlp-traces");
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    expect(traces.map((t) => t.id)).toEqual([TRACE_A, TRACE_B]);
    const a = traces[0]!;
    expect(a.source).toMatchObject({ format: "otlp-traces", index: 0, line: 1 });
    expect(a.steps.map((s) => [s.kind, s.agent, s.span?.spanId])).toEqual([
      ["message", "user", "bbbbbbbbbbbbbbbb"],
      ["llm_call", "weather", "bbbbbbbbbbbbbbbb"],
      ["tool_call", "weather", "bbbbbbbbbbbbbbbb"],
      ["tool_result", "weather", "aaaaaaaaaaaaaaaa"],
    ]);
    expect(a.steps[3]!.span?.parentSpanId).toBe("051581bf3cb55c13");
    expect(a.steps[3]!.ref).toEqual({ line: 3, pointer: "/resource_spans/0/scope_spans/0/spans/0" });
    expect(a.steps[3]!.tool).toMatchObject({ callId: "call_1", callIndex: 2, output: "rainy" });
    expect(a.steps[1]!.usage).toEqual({ input: 42 });
    expect(a.steps[1]!.time).toBe("2023-11-14T22:13:20.100Z");
    expect(traces[1]!.model).toBe("gpt-4o");
    expect(traces[1]!.metadata.modelRaw).toBe("openai/gpt-4o");
  });

  it("reads a camelCase document wrapped as {path, data}, and reports a span without ids by line", async () => {
    const doc = {
      path: "/v1/traces",
      data: {
        resourceSpans: [
          {
            scopeSpans: [
              {
                scope: { name: "openinference.instrumentation.smolagents" },
                spans: [
                  { traceId: TRACE_A, spanId: "cccccccccccccccc", name: "CodeAgent.run", startTimeUnixNano: "1", attributes: [{ key: "openinference.span.kind", value: { stringValue: "AGENT" } }], status: { code: "STATUS_CODE_ERROR", message: "boom" } },
                  { name: "orphan without ids" },
                ],
              },
            ],
          },
        ],
      },
    };
    const p = file("wrapped.json", JSON.stringify(doc, null, 2));
    const { traces, diagnostics } = await readAll(p);
    expect(traces).toHaveLength(1);
    expect(traces[0]!.framework).toBe("smolagents");
    expect(traces[0]!.steps.map((s) => [s.kind, s.agent, s.text])).toEqual([["error", "CodeAgent", "boom"]]);
    const err = diagnostics.find((d) => d.level === "error");
    expect(err).toMatchObject({ file: p, skipped: "record" });
    expect(err!.message).toContain('/data/resourceSpans/0/scopeSpans/0/spans/1: span "orphan without ids" has no traceId');
  });
});
