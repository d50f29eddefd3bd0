import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { buildTrace, type OutcomeInput } from "../../trace/index.js";
import { arr, bool, isObj, normalizeModel, str } from "../common/index.js";
import {
  attributesToRecord,
  decodeJsonish,
  flattenNestedAttributes,
  normalizeOtelId,
  spansToSteps,
  spanTraceDraft,
  statusCode,
  toNanos,
  type OtelSpan,
} from "../otel/index.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";

/**
 * OpenTelemetry span dumps that are not OTLP — spans serialised by an SDK rather than an exporter:
 * - OTel-JS `ReadableSpan`s (`spanContext{traceId,spanId}`, hrtime `[s, ns]` times, flat attributes), e.g. the
 *   Vercel AI SDK `ai.*` + `gen_ai.*` spans of the OpenInference fixtures;
 * - OTel-Python `span.to_json()` (`context{trace_id,span_id}`, `parent_id`, ISO times);
 * - flat span records (`trace_id`, `span_id`, `parent_span_id`, ns times), alone or grouped as
 *   `{trace_id, spans[]}` — SMOLTRACE's smolagents `traces.json`.
 * One JSON array, JSONL, or one document. Spans are grouped by trace id (`0x` hex ids are normalised).
 *
 * SMOLTRACE run folders also hold `results.json`, one row per task with `success`; a row names its trace in
 * `trace_id` or inside the JSON string `enhanced_trace_info`, and is joined to that trace's outcome.
 */
const ID = "otel-spans";

const ctxOf = (r: Record<string, unknown>) => (isObj(r.spanContext) ? r.spanContext : isObj(r._spanContext) ? r._spanContext : isObj(r.context) ? r.context : undefined);

/** A single span in one of the dump shapes above. */
function isSpanRecord(v: unknown): v is Record<string, unknown> {
  if (!isObj(v) || typeof v.name !== "string" || !isObj(v.attributes)) return false;
  const c = ctxOf(v);
  if (c) return c.spanId !== undefined || c.span_id !== undefined;
  return v.span_id !== undefined && v.trace_id !== undefined;
}

/** `{trace_id, spans:[flat span…]}` (SMOLTRACE); TRAIL's `span_attributes`/`child_spans` trees are not this. */
function isTraceRecord(v: unknown): v is Record<string, unknown> & { spans: unknown[] } {
  if (!isObj(v) || v.trace_id === undefined || !Array.isArray(v.spans)) return false;
  return v.spans.length === 0 ? "run_id" in v || "total_tokens" in v : isSpanRecord(v.spans[0]);
}

function spanOf(rec: Record<string, unknown>, fallbackTraceId: string | undefined, ref: OtelSpan["ref"]): OtelSpan | undefined {
  const c = ctxOf(rec) ?? {};
  const traceId = normalizeOtelId(c.traceId ?? c.trace_id ?? rec.trace_id ?? rec.traceId, 16) ?? fallbackTraceId;
  const spanId = normalizeOtelId(c.spanId ?? c.span_id ?? rec.span_id ?? rec.spanId, 8);
  if (!traceId || !spanId) return undefined;
  const parentCtx = isObj(rec.parentSpanContext) ? rec.parentSpanContext : undefined;
  const status = isObj(rec.status) ? rec.status : {};
  const scopeObj = rec.instrumentationScope ?? rec.instrumentationLibrary ?? rec.instrumentation_scope ?? rec.instrumentation_info;
  const resource = isObj(rec.resource) ? attributesToRecord(rec.resource.attributes ?? rec.resource) : undefined;
  return {
    traceId,
    spanId,
    parentSpanId: normalizeOtelId(rec.parentSpanId ?? parentCtx?.spanId ?? rec.parent_id ?? rec.parent_span_id ?? rec.parentId, 8),
    name: str(rec.name) ?? "",
    start: toNanos(rec.startTime ?? rec.start_time ?? rec.startTimeUnixNano),
    end: toNanos(rec.endTime ?? rec.end_time ?? rec.endTimeUnixNano),
    attributes: flattenNestedAttributes(attributesToRecord(rec.attributes)),
    events: arr(rec.events)
      .filter(isObj)
      .map((e) => ({ name: str(e.name) ?? "", time: toNanos(e.time ?? e.timestamp ?? e.timeUnixNano), attributes: attributesToRecord(e.attributes) })),
    status: { code: statusCode(status.code ?? status.status_code), message: str(status.message) ?? str(status.description) },
    scope: isObj(scopeObj) ? str(scopeObj.name) : undefined,
    resource,
    ref,
  };
}

// ---------------------------------------------------------------- SMOLTRACE results.json

interface TaskResult {
  row: Record<string, unknown>;
  index: number;
  used: boolean;
}

function resultTraceId(row: Record<string, unknown>): string | undefined {
  const info = decodeJsonish(row.enhanced_trace_info);
  return normalizeOtelId(row.trace_id ?? (isObj(info) ? info.trace_id : undefined), 16);
}

/** The run's `results.json` beside a `traces.json`, keyed by trace id; problems are reported, never thrown. */
function loadResults(tracesPath: string, ctx: ReadContext): { path: string; byTrace: Map<string, TaskResult> } | undefined {
  const path = join(dirname(tracesPath), "results.json");
  if (path === tracesPath || !existsSync(path)) return undefined;
  let rows: unknown;
  try {
    rows = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    ctx.report({ file: path, level: "error", message: `results.json does not parse (${(e as Error).message}); traces read without outcomes` });
    return undefined;
  }
  const byTrace = new Map<string, TaskResult>();
  arr(rows).forEach((row, index) => {
    if (!isObj(row)) return;
    const id = resultTraceId(row);
    if (id) byTrace.set(id, { row, index, used: false });
    else ctx.report({ file: path, level: "warning", message: `results[${index}] names no trace (no trace_id); its outcome is not joined`, skipped: "record" });
  });
  return { path, byTrace };
}

const RESULT_RAW_KEYS = ["success", "error", "response", "tool_called", "correct_tool", "final_answer_called", "response_correct", "tools_used", "steps", "difficulty", "agent_type"];

function outcomeOf(row: Record<string, unknown>): OutcomeInput {
  const raw: Record<string, unknown> = {};
  for (const k of RESULT_RAW_KEYS) if (k in row) raw[k] = row[k];
  // `success: null` means the harness could not judge the task: left unset, kept in raw
  const success = bool(row.success);
  return success === undefined ? { raw } : { success, raw };
}

// ---------------------------------------------------------------- supporting files

function siblingTraces(s: Sample): boolean {
  return existsSync(join(dirname(s.path), "traces.json"));
}

function supportingKind(s: Sample): string | undefined {
  const first = s.records[0];
  if (s.name === "results.json" && s.kind === "json-array" && isObj(first) && "success" in first && ("trace_id" in first || "enhanced_trace_info" in first))
    return "SMOLTRACE per-task results (success, error), joined to traces.json by trace id";
  if (s.kind === "json" && isObj(first)) {
    if (s.name === "capture-results.json" && "captureDate" in first && Array.isArray(first.results))
      return "capture log of a span fixture (per-capture success flags; shares no key with the spans, so not joined)";
    if (!siblingTraces(s)) return undefined;
    if (s.name === "metadata.json" && "model" in first && "num_traces" in first) return "SMOLTRACE run metadata (model, agent type, counts)";
    if (s.name === "leaderboard_row.json" && "success_rate" in first) return "SMOLTRACE leaderboard row (run-level aggregates)";
    if (s.name === "metrics.json" && ("aggregates" in first || "resourceMetrics" in first)) return "SMOLTRACE run metrics (aggregates)";
  }
  if (s.name === "metrics.json" && s.kind === "json-array" && isObj(first) && "data_points" in first && siblingTraces(s)) return "SMOLTRACE run metrics (aggregates)";
  return undefined;
}

// ---------------------------------------------------------------- adapter

interface Group {
  spans: OtelSpan[];
  line?: number;
  /** The SMOLTRACE trace record, when spans came grouped. */
  record?: Record<string, unknown>;
}

export const otelSpanDump: FormatAdapter = {
  id: ID,
  title: "OpenTelemetry span dumps (OTel-JS ReadableSpan, Python to_json, SMOLTRACE traces.json)",
  detect(s) {
    if (s.kind !== "json" && s.kind !== "json-array" && s.kind !== "jsonl") return false;
    const first = s.records[0];
    if (isSpanRecord(first) || isTraceRecord(first)) return true;
    // one document holding a bare `spans` list
    return s.kind === "json" && isObj(first) && Array.isArray(first.spans) && first.spans.length > 0 && isSpanRecord(first.spans[0]);
  },
  supports: supportingKind,
  async *read(file, ctx) {
    const groups = new Map<string, Group>();
    const add = (span: OtelSpan, line: number | undefined, record?: Record<string, unknown>) => {
      const g = groups.get(span.traceId) ?? { spans: [], line, record };
      g.spans.push(span);
      groups.set(span.traceId, g);
    };
    /** One bad value loses its span only, never the file. */
    const safeSpanOf = (sp: Record<string, unknown>, traceId: string | undefined, ref: OtelSpan["ref"]): OtelSpan | Error | undefined => {
      try {
        return spanOf(sp, traceId, ref);
      } catch (e) {
        return e as Error;
      }
    };
    for await (const r of file.records()) {
      const base = file.sample.kind === "json-array" ? `/${r.index}` : "";
      const v = r.value;
      if (isTraceRecord(v)) {
        const traceId = normalizeOtelId(v.trace_id, 16);
        if (traceId && v.spans.length === 0) groups.set(traceId, groups.get(traceId) ?? { spans: [], line: r.line, record: v });
        v.spans.forEach((sp, k) => {
          const pointer = `${base}/spans/${k}`;
          const span = isObj(sp) ? safeSpanOf(sp, traceId, { line: r.line, pointer }) : undefined;
          if (span instanceof Error) ctx.report({ line: r.line, pointer, level: "error", message: `${pointer}: span not read (${span.message})`, skipped: "step" });
          else if (span) add(span, r.line, v);
          else ctx.report({ line: r.line, pointer, level: "error", message: `${pointer}: not a span with ids`, skipped: "record" });
        });
        continue;
      }
      const list = isObj(v) && Array.isArray(v.spans) ? v.spans.map((sp, k) => [sp, `${base}/spans/${k}`] as const) : [[v, base] as const];
      for (const [sp, pointer] of list) {
        const span = isSpanRecord(sp) ? safeSpanOf(sp, undefined, { line: r.line, pointer: pointer || undefined }) : undefined;
        if (span instanceof Error)
          ctx.report({ line: r.line, pointer: pointer || undefined, level: "error", message: `${pointer || "record"}: span not read (${span.message})`, skipped: "step" });
        else if (span) add(span, r.line);
        else ctx.report({ line: r.line, pointer: pointer || undefined, level: "error", message: `${pointer || "record"}: not an OpenTelemetry span (needs name, attributes, trace and span ids)`, skipped: "record" });
      }
    }

    const results = basename(file.path).toLowerCase() === "traces.json" ? loadResults(file.path, ctx) : undefined;
    let index = 0;
    for (const [traceId, g] of groups) {
      try {
        const mapped = spansToSteps(g.spans);
        const draft = spanTraceDraft(mapped, { id: traceId, file: file.path, format: ID, index, line: g.line });
        if (g.record) {
          for (const k of ["run_id", "total_tokens", "total_duration_ms", "total_cost_usd"]) if (g.record[k] !== undefined) draft.metadata![k] = g.record[k];
        }
        const result = results?.byTrace.get(traceId);
        if (result && results) {
          result.used = true;
          const row = result.row;
          draft.outcome = outcomeOf(row);
          const taskId = str(row.test_id) ?? str(row.task_id);
          const prompt = str(row.prompt);
          draft.task = { ...draft.task, ...(taskId ? { id: taskId } : {}), ...(prompt ? { text: prompt } : {}) };
          const rowModel = str(row.model);
          if (!draft.model && rowModel) {
            draft.model = normalizeModel(rowModel);
            if (draft.model !== rowModel) draft.metadata!.modelRaw = rowModel;
          }
          draft.source.sidecars = [results.path];
          draft.metadata!.resultsIndex = result.index;
        }
        yield buildTrace(draft, mapped.steps);
        index++;
      } catch (e) {
        ctx.report({ line: g.line, level: "error", message: `trace ${traceId}: ${(e as Error).message}`, skipped: "trace" });
      }
    }
    if (results)
      for (const [traceId, r] of results.byTrace)
        if (!r.used) ctx.report({ file: results.path, level: "warning", message: `results[${r.index}] names trace ${traceId}, which is not in ${basename(file.path)}; its outcome is not joined`, skipped: "record" });
  },
};
