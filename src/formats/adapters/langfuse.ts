import { buildTrace, type OutcomeInput, type Usage } from "../../trace/index.js";
import { arr, asText, isObj, num, str } from "../common/index.js";
import {
  decodeJsonish,
  emptyView,
  interpretSpan,
  messagesFrom,
  spansToSteps,
  spanTraceDraft,
  toNanos,
  type OtelSpan,
  type SpanCategory,
  type SpanView,
} from "../otel/index.js";
import type { FormatAdapter } from "../types.js";

/**
 * Langfuse trace exports: `{trace, observations[]}` (observations may also sit in `trace.observations`), one per
 * document, or several as a JSON array / JSONL. Observations become spans of the shared OTel span mapper:
 * `parentObservationId` is the parent link, `startTime` the order, and the observation type the kind
 * (trace-formats.md §4.4). When the observation was ingested from OpenTelemetry, its `metadata.attributes` are read
 * too (e.g. the Vercel AI SDK's `ai.toolCall.name` / `ai.toolCall.id` on a TOOL observation).
 */
const ID = "langfuse";

const TYPES: Record<string, SpanCategory> = {
  GENERATION: "llm",
  TOOL: "tool",
  AGENT: "agent",
  CHAIN: "chain",
  SPAN: "chain",
  RETRIEVER: "retrieval",
  EMBEDDING: "embedding",
  EVALUATOR: "judge",
  GUARDRAIL: "guardrail",
  EVENT: "event",
};

const observationsOf = (v: Record<string, unknown>): unknown[] | undefined =>
  Array.isArray(v.observations) ? v.observations : isObj(v.trace) && Array.isArray(v.trace.observations) ? v.trace.observations : undefined;

function isExport(v: unknown): v is Record<string, unknown> & { trace: Record<string, unknown> } {
  return isObj(v) && isObj(v.trace) && typeof v.trace.id === "string" && observationsOf(v) !== undefined;
}

function usageOf(o: Record<string, unknown>): Usage | undefined {
  const d = isObj(o.usageDetails) && Object.keys(o.usageDetails).length ? o.usageDetails : isObj(o.usage) ? o.usage : {};
  const u: Usage = {};
  const set = (k: keyof Usage, ...vals: unknown[]) => {
    for (const v of vals) {
      const n = num(v);
      if (n !== undefined && n >= 0) {
        u[k] = n;
        return;
      }
    }
  };
  set("input", d.input, d.promptTokens, d.prompt_tokens, d.input_tokens);
  set("output", d.output, d.completionTokens, d.completion_tokens, d.output_tokens);
  set("cachedInput", d.input_cached_tokens, d.cache_read_input_tokens, d.input_cache_read);
  set("reasoning", d.output_reasoning_tokens, d.output_reasoning);
  return Object.keys(u).length ? u : undefined;
}

/** What an observation means: its type decides the kind; its own fields win over ingested OTel attributes. */
function viewOf(o: Record<string, unknown>, span: OtelSpan): SpanView {
  const type = (str(o.type) ?? "").toUpperCase();
  const category = TYPES[type] ?? "other";
  const fromAttrs = Object.keys(span.attributes).length ? interpretSpan(span) : emptyView(category);
  const view: SpanView = { ...fromAttrs, category };
  const input = decodeJsonish(o.input);
  const output = decodeJsonish(o.output);
  if (category === "llm") {
    view.model = str(o.model) ?? str(o.providedModelName) ?? fromAttrs.model;
    view.input = input !== undefined && input !== null ? messagesFrom(input, "user") : fromAttrs.input;
    view.output = output !== undefined && output !== null ? messagesFrom(output, "assistant") : fromAttrs.output;
    // Langfuse keeps only the text of a streamed answer; the tool calls survive in the ingested attributes
    const attrCalls = fromAttrs.output.flatMap((m) => m.toolCalls);
    if (view.output !== fromAttrs.output && attrCalls.length && !view.output.some((m) => m.toolCalls.length)) {
      const last = view.output.filter((m) => m.role === "assistant").pop();
      if (last) last.toolCalls.push(...attrCalls);
      else view.output.push({ role: "assistant", toolCalls: attrCalls });
    }
    view.usage = usageOf(o) ?? fromAttrs.usage;
  } else if (category === "tool" || category === "retrieval") {
    view.tool = {
      name: fromAttrs.tool?.name && fromAttrs.tool.name !== span.name ? fromAttrs.tool.name : str(o.name) ?? "tool",
      callId: fromAttrs.tool?.callId,
      args: input ?? fromAttrs.tool?.args,
      output: output !== undefined && output !== null ? (typeof output === "string" ? output : asText(output)) : fromAttrs.tool?.output,
    };
  } else {
    view.inputText = input !== undefined && input !== null ? (typeof input === "string" ? input : asText(input)) : fromAttrs.inputText;
    view.outputText = output !== undefined && output !== null ? (typeof output === "string" ? output : asText(output)) : fromAttrs.outputText;
    if (category === "agent") view.agentName ??= str(o.name);
  }
  return view;
}

/**
 * Langfuse scores are evaluator- or user-defined; only one of them grades the answer as a whole. `outcome.score` is
 * the `helpfulness` judge (0–1, higher is better). The other scores of this export are binary detectors of mixed
 * polarity (`is_question`, `contains-pii`, `error-analysis_*` flags, sparse `user-feedback`) that no single number
 * summarises, so they stay in `outcome.raw.scores` only; `success` is never inferred from them.
 */
const OVERALL_SCORE = "helpfulness";

function outcomeOf(trace: Record<string, unknown>): OutcomeInput | undefined {
  const scores = arr(trace.scores).filter(isObj);
  if (scores.length === 0) return undefined;
  const raw = scores.map((s) => {
    const r: Record<string, unknown> = {};
    for (const k of ["name", "value", "stringValue", "dataType", "source", "comment", "observationId"]) if (s[k] !== undefined && s[k] !== null) r[k] = s[k];
    return r;
  });
  const overall = scores.find((s) => s.name === OVERALL_SCORE && num(s.value) !== undefined && (s.dataType === undefined || s.dataType === "NUMERIC"));
  return overall ? { score: num(overall.value), metric: `langfuse:${OVERALL_SCORE}`, raw: { scores: raw } } : { raw: { scores: raw } };
}

export const langfuse: FormatAdapter = {
  id: ID,
  title: "Langfuse trace export ({trace, observations})",
  detect: (s) => (s.kind === "json" || s.kind === "json-array" || s.kind === "jsonl") && s.records.length > 0 && isExport(s.records[0]),
  async *read(file, ctx) {
    let index = 0;
    for await (const r of file.records()) {
      if (!isExport(r.value)) {
        ctx.report({ line: r.line, level: "error", message: "not a Langfuse export: expected {trace:{id}, observations:[…]}", skipped: "record" });
        continue;
      }
      const trace = r.value.trace;
      const traceId = trace.id as string;
      const base = file.sample.kind === "json-array" ? `/${r.index}` : "";
      const obsKey = Array.isArray(r.value.observations) ? `${base}/observations` : `${base}/trace/observations`;
      const spans: OtelSpan[] = [];
      const spanOfObservation = (o: Record<string, unknown>, id: string, i: number): OtelSpan => {
        const meta = decodeJsonish(o.metadata);
        const span: OtelSpan = {
          traceId,
          spanId: id,
          parentSpanId: str(o.parentObservationId) ?? undefined,
          name: str(o.name) ?? str(o.type) ?? "",
          start: toNanos(o.startTime),
          end: toNanos(o.endTime),
          attributes: isObj(meta) && isObj(meta.attributes) ? meta.attributes : {},
          events: [],
          status: str(o.level)?.toUpperCase() === "ERROR" ? { code: 2, message: str(o.statusMessage) } : { code: 0 },
          ref: { line: r.line, pointer: `${obsKey}/${i}` },
        };
        span.view = viewOf(o, span);
        return span;
      };
      observationsOf(r.value)!.forEach((o, i) => {
        const id = isObj(o) ? str(o.id) : undefined;
        if (!isObj(o) || !id) {
          ctx.report({ line: r.line, level: "error", message: `${obsKey}/${i}: observation without an id`, skipped: "record" });
          return;
        }
        try {
          spans.push(spanOfObservation(o, id, i));
        } catch (e) {
          // one bad value loses its observation only, never the file
          ctx.report({ line: r.line, pointer: `${obsKey}/${i}`, level: "error", message: `${obsKey}/${i}: observation not read (${(e as Error).message})`, skipped: "step" });
        }
      });
      try {
        const mapped = spansToSteps(spans, { defaultAgent: str(trace.name) });
        const draft = spanTraceDraft(mapped, { id: traceId, file: file.path, format: ID, index, line: r.line });
        const input = decodeJsonish(trace.input);
        const taskText = typeof input === "string" ? input : undefined;
        if (taskText) draft.task = { ...draft.task, text: taskText };
        const outcome = outcomeOf(trace);
        if (outcome) draft.outcome = outcome;
        for (const k of ["name", "sessionId", "userId", "environment", "tags", "release", "version", "latency"])
          if (trace[k] !== undefined && trace[k] !== null && !(Array.isArray(trace[k]) && (trace[k] as unknown[]).length === 0)) draft.metadata![k] = trace[k];
        yield buildTrace(draft, mapped.steps);
        index++;
      } catch (e) {
        ctx.report({ line: r.line, level: "error", message: `trace ${traceId}: ${(e as Error).message}`, skipped: "trace" });
      }
    }
  },
};
