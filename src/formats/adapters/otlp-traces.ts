import { buildTrace, type Trace } from "../../trace/index.js";
import { arr, isObj, str } from "../common/index.js";
import {
  attributesToRecord,
  normalizeOtelId,
  spansToSteps,
  spanTraceDraft,
  statusCode,
  toNanos,
  type OtelSpan,
} from "../otel/index.js";
import type { Diagnostic, FormatAdapter, ReadContext } from "../types.js";

/**
 * OTLP/JSON trace exports (trace-formats.md §4): `resourceSpans[].scopeSpans[].spans[]` in camelCase or the
 * snake_case of Python protobuf dumps, as one document, a JSON array of export requests, or JSONL of them (also
 * wrapped as `{path:"/v1/traces", data:{…}}`). Spans are grouped by trace id (one file may hold many traces, and one
 * trace may span many export requests); ids may be hex or base64. The attribute dialect (OpenInference, GenAI,
 * Vercel) is chosen per span from its scope name, else from its attribute prefixes.
 */
const ID = "otlp-traces";

/** The export request inside a record, if it is one. */
function envelopeOf(v: unknown): Record<string, unknown> | undefined {
  if (!isObj(v)) return undefined;
  if (Array.isArray(v.resourceSpans) || Array.isArray(v.resource_spans)) return v;
  if (isObj(v.data) && (Array.isArray(v.data.resourceSpans) || Array.isArray(v.data.resource_spans))) return v.data;
  return undefined;
}

const pick = (o: Record<string, unknown>, camel: string, snake: string) => (o[camel] !== undefined ? o[camel] : o[snake]);

interface Collected {
  spans: OtelSpan[];
  line?: number;
}

/** Reads the spans of one export request into `byTrace`; a span without ids is reported and skipped. */
function collectEnvelope(env: Record<string, unknown>, at: { line?: number; pointer: string }, byTrace: Map<string, Collected>, ctx: ReadContext): void {
  const rsKey = Array.isArray(env.resourceSpans) ? "resourceSpans" : "resource_spans";
  arr(env[rsKey]).forEach((rs, ri) => {
    if (!isObj(rs)) return;
    const resource = isObj(rs.resource) ? attributesToRecord(rs.resource.attributes) : {};
    const scopeList = pick(rs, "scopeSpans", "scope_spans") ?? pick(rs, "instrumentationLibrarySpans", "instrumentation_library_spans");
    const ssKey = rs.scopeSpans !== undefined ? "scopeSpans" : rs.scope_spans !== undefined ? "scope_spans" : "instrumentationLibrarySpans";
    arr(scopeList).forEach((ss, si) => {
      if (!isObj(ss)) return;
      const scopeObj = pick(ss, "scope", "instrumentation_library") ?? ss.instrumentationLibrary;
      const scope = isObj(scopeObj) ? str(scopeObj.name) : undefined;
      const collectSpan = (sp: unknown, pointer: string): void => {
        if (!isObj(sp)) {
          ctx.report({ line: at.line, level: "error", message: `${pointer}: span is not an object`, skipped: "record" });
          return;
        }
        const traceId = normalizeOtelId(pick(sp, "traceId", "trace_id"), 16);
        const spanId = normalizeOtelId(pick(sp, "spanId", "span_id"), 8);
        if (!traceId || !spanId) {
          ctx.report({ line: at.line, level: "error", message: `${pointer}: span "${str(sp.name) ?? "?"}" has no ${traceId ? "spanId" : "traceId"}`, skipped: "record" });
          return;
        }
        const status = isObj(sp.status) ? sp.status : {};
        const span: OtelSpan = {
          traceId,
          spanId,
          parentSpanId: normalizeOtelId(pick(sp, "parentSpanId", "parent_span_id"), 8),
          name: str(sp.name) ?? "",
          start: toNanos(pick(sp, "startTimeUnixNano", "start_time_unix_nano")),
          end: toNanos(pick(sp, "endTimeUnixNano", "end_time_unix_nano")),
          attributes: attributesToRecord(sp.attributes),
          events: arr(sp.events)
            .filter(isObj)
            .map((e) => ({ name: str(e.name) ?? "", time: toNanos(pick(e, "timeUnixNano", "time_unix_nano")), attributes: attributesToRecord(e.attributes) })),
          status: { code: statusCode(status.code), message: str(status.message) },
          scope,
          resource,
          ref: { line: at.line, pointer },
        };
        const group = byTrace.get(traceId) ?? { spans: [], line: at.line };
        group.spans.push(span);
        byTrace.set(traceId, group);
      };
      arr(ss.spans).forEach((sp, ki) => {
        const pointer = `${at.pointer}/${rsKey}/${ri}/${ssKey}/${si}/spans/${ki}`;
        try {
          collectSpan(sp, pointer);
        } catch (e) {
          // one bad value loses its span only, never the file
          ctx.report({ line: at.line, pointer, level: "error", message: `${pointer}: span not read (${(e as Error).message})`, skipped: "step" });
        }
      });
    });
  });
}

export const otlpTraces: FormatAdapter = {
  id: ID,
  title: "OTLP/JSON traces (OpenTelemetry GenAI, OpenInference; camel or snake case, hex or base64 ids)",
  detect(s) {
    if (s.kind !== "json" && s.kind !== "json-array" && s.kind !== "jsonl") return false;
    return s.records.length > 0 && envelopeOf(s.records[0]) !== undefined;
  },
  async *read(file, ctx) {
    const byTrace = new Map<string, Collected>();
    for await (const r of file.records()) {
      const env = envelopeOf(r.value);
      if (!env) {
        ctx.report({ line: r.line, level: "error", message: "not an OTLP trace export: expected resourceSpans / resource_spans", skipped: "record" });
        continue;
      }
      const pointer = file.sample.kind === "json-array" ? `/${r.index}` : "";
      collectEnvelope(env, { line: r.line, pointer: isObj(r.value) && env === r.value.data ? `${pointer}/data` : pointer }, byTrace, ctx);
    }
    let index = 0;
    for (const [traceId, group] of byTrace) {
      try {
        const mapped = spansToSteps(group.spans);
        const draft = spanTraceDraft(mapped, { id: traceId, file: file.path, format: ID, index, line: group.line });
        yield buildTrace(draft, mapped.steps);
        index++;
      } catch (e) {
        ctx.report({ line: group.line, level: "error", message: `trace ${traceId}: ${(e as Error).message}`, skipped: "trace" });
      }
    }
  },
};

/** The spans of OTLP export requests (JSON-shaped: decoded OTLP/JSON or OTLP/protobuf), grouped by trace. */
export function otlpSpansByTrace(requests: readonly unknown[], report: (d: Omit<Diagnostic, "file">) => void = () => {}): Map<string, OtelSpan[]> {
  const byTrace = new Map<string, Collected>();
  const ctx: ReadContext = { report, options: {} };
  requests.forEach((r, i) => {
    const env = envelopeOf(r);
    if (!env) report({ level: "error", message: `request ${i}: not an OTLP trace export: expected resourceSpans`, skipped: "record" });
    else collectEnvelope(env, { pointer: `/${i}` }, byTrace, ctx);
  });
  return new Map([...byTrace].map(([id, g]) => [id, g.spans]));
}

/**
 * One trace from its spans as received live (`faultline collect`): the same mapping as an OTLP file's traces.
 * `source` names where it came from (e.g. `otlp:collect`).
 */
export function traceFromOtlpSpans(traceId: string, spans: OtelSpan[], source: { file: string; index: number }): Trace {
  const mapped = spansToSteps(spans);
  return buildTrace(spanTraceDraft(mapped, { id: traceId, file: source.file, format: ID, index: source.index }), mapped.steps);
}
