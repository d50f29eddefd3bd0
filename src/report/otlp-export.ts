import { FAULTLINE_VERSION } from "../version.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";

/*
 * faultline's labels as OTLP/JSON log records following the OpenTelemetry GenAI `gen_ai.evaluation.result` event
 * (reference/trace-formats.md §12), so a backend that understands GenAI semantic conventions shows the diagnosis
 * next to the spans it is about:
 * - one record per finding (label `present`), parented to the span of the finding's first cited step when the trace
 *   came from OTLP spans, else to the trace's root span;
 * - one record per mode judged absent (label `absent`, score 0), on the root span, unless `presentOnly`;
 * - one record for a trace that could not be annotated (`error.type`), on the root span.
 * Traces that did not come from OTLP have no trace or span ids: their records carry `faultline.trace_id` only (a made-up
 * id would link to nothing), and the export says how many those were.
 */

export const EVALUATION_EVENT = "gen_ai.evaluation.result";
/** Attribute names (OpenTelemetry GenAI semantic conventions, and faultline's own). */
export const ATTR = {
  name: "gen_ai.evaluation.name",
  scoreValue: "gen_ai.evaluation.score.value",
  scoreLabel: "gen_ai.evaluation.score.label",
  explanation: "gen_ai.evaluation.explanation",
  errorType: "error.type",
  traceId: "faultline.trace_id",
  annotator: "faultline.annotator",
  taxonomy: "faultline.taxonomy.version",
  modeCode: "faultline.mode.code",
  modeName: "faultline.mode.name",
  detector: "faultline.detector",
  steps: "faultline.steps",
  agent: "faultline.agent",
  evidence: "faultline.evidence",
  spanRef: "faultline.span_ref",
} as const;

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string }
  | { doubleValue: number }
  | { arrayValue: { values: AnyValue[] } };

export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface LogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  eventName: string;
  body: { stringValue: string };
  attributes: KeyValue[];
  traceId?: string;
  spanId?: string;
}

export interface OtlpLogs {
  resourceLogs: {
    resource: { attributes: KeyValue[] };
    scopeLogs: { scope: { name: string; version: string }; logRecords: LogRecord[] }[];
  }[];
}

export interface OtlpExportOptions {
  taxonomy?: Taxonomy;
  /** The trace a diagnosis was made from (span ids, step times); undefined = not available. */
  traceOf?: (d: Diagnosis) => Trace | undefined;
  /** Only findings (and not-annotated errors), no `absent` records. */
  presentOnly?: boolean;
  /** Export time in ns since the epoch (observed time, and the time of records without a step time). */
  nowNs?: bigint;
  version?: string;
}

export interface OtlpExportStats {
  records: number;
  traces: number;
  /** Traces whose records carry an OTLP trace id. */
  linked: number;
  /** Finding records on the finding's own span (not the root). */
  on_step_span: number;
  /** Traces exported without trace/span ids (not from OTLP, or the trace could not be re-read). */
  unlinked: string[];
}

const str = (key: string, v: string): KeyValue => ({ key, value: { stringValue: v } });
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ZERO = /^0+$/;

function nanos(iso: string | undefined, fallback: bigint): string {
  if (!iso) return fallback.toString();
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? (BigInt(Math.round(ms)) * 1_000_000n).toString() : fallback.toString();
}

interface SpanIds {
  traceId: string;
  rootSpanId?: string;
}

/** The trace's OTLP ids: its trace id and root span (the span whose parent is not in the trace). */
function spanIds(trace: Trace | undefined): SpanIds | undefined {
  const spans = trace?.steps.map((s) => s.span).filter((s): s is NonNullable<typeof s> => !!s && HEX32.test(s.traceId) && !ZERO.test(s.traceId)) ?? [];
  if (spans.length === 0) return undefined;
  const traceId = spans[0]!.traceId;
  const own = new Set(spans.filter((s) => s.traceId === traceId).map((s) => s.spanId));
  const root = spans.find((s) => s.traceId === traceId && (!s.parentSpanId || !own.has(s.parentSpanId))) ?? spans[0]!;
  return { traceId, ...(HEX16.test(root.spanId) ? { rootSpanId: root.spanId } : {}) };
}

/** Converts diagnoses to one OTLP/JSON logs document. */
export function diagnosesToOtlp(diagnoses: readonly Diagnosis[], opts: OtlpExportOptions = {}): { document: OtlpLogs; stats: OtlpExportStats } {
  const tax = opts.taxonomy ?? mast;
  const now = opts.nowNs ?? BigInt(Date.now()) * 1_000_000n;
  const names = new Map(tax.modes.map((m) => [m.code, m.name]));
  const records: LogRecord[] = [];
  const stats: OtlpExportStats = { records: 0, traces: 0, linked: 0, on_step_span: 0, unlinked: [] };

  for (const d of diagnoses) {
    stats.traces++;
    const trace = opts.traceOf?.(d);
    const ids = spanIds(trace);
    if (ids) stats.linked++;
    else stats.unlinked.push(d.trace_id);
    const common = [str(ATTR.traceId, d.trace_id), str(ATTR.annotator, d.annotator), str(ATTR.taxonomy, d.taxonomy)];
    const firstTime = trace?.steps.find((s) => s.time)?.time;
    const record = (attributes: KeyValue[], body: string, at: { spanId?: string; time?: string; ref: "step" | "root" }): LogRecord => ({
      timeUnixNano: nanos(at.time ?? firstTime, now),
      observedTimeUnixNano: now.toString(),
      severityNumber: 9,
      severityText: "INFO",
      eventName: EVALUATION_EVENT,
      body: { stringValue: body },
      attributes: [...attributes, ...common, ...(ids ? [str(ATTR.spanRef, at.ref)] : [])],
      ...(ids ? { traceId: ids.traceId } : {}),
      ...(ids && (at.spanId ?? ids.rootSpanId) ? { spanId: at.spanId ?? ids.rootSpanId } : {}),
    });

    if (d.modes === null) {
      records.push(
        record(
          [str(ATTR.name, "mast"), str(ATTR.errorType, "faultline.not_annotated"), str(ATTR.explanation, d.error ?? "the trace could not be annotated")],
          `mast: not annotated — ${d.error ?? "no failure vector"}`,
          { ref: "root" },
        ),
      );
      continue;
    }
    for (const f of d.findings) {
      const code = tax.normalize(f.mode) ?? f.mode;
      const name = names.get(code) ?? f.mode;
      const step = f.steps[0] !== undefined ? trace?.steps[f.steps[0]] : undefined;
      const stepSpan = step?.span && ids && step.span.traceId === ids.traceId && HEX16.test(step.span.spanId) ? step.span.spanId : undefined;
      if (stepSpan) stats.on_step_span++;
      const where = `step${f.steps.length === 1 ? "" : "s"} ${f.steps.join(", ")}${f.agent ? `, agent ${f.agent}` : ""}`;
      const explanation = `FM-${code} ${name} (${where}): "${f.evidence}"${f.rationale ? ` — ${f.rationale}` : ""}`;
      records.push(
        record(
          [
            str(ATTR.name, `mast.FM-${code}`),
            { key: ATTR.scoreValue, value: { doubleValue: f.confidence } },
            str(ATTR.scoreLabel, "present"),
            str(ATTR.explanation, explanation),
            str(ATTR.modeCode, code),
            str(ATTR.modeName, name),
            str(ATTR.detector, f.detector),
            { key: ATTR.steps, value: { arrayValue: { values: f.steps.map((s) => ({ intValue: String(s) })) } } },
            ...(f.agent ? [str(ATTR.agent, f.agent)] : []),
            str(ATTR.evidence, f.evidence),
          ],
          `mast.FM-${code} present (${f.confidence.toFixed(2)})`,
          { spanId: stepSpan, time: step?.time, ref: stepSpan ? "step" : "root" },
        ),
      );
    }
    if (!opts.presentOnly)
      for (const code of tax.codes) {
        if (d.modes[code] !== 0) continue;
        records.push(
          record(
            [
              str(ATTR.name, `mast.FM-${code}`),
              { key: ATTR.scoreValue, value: { doubleValue: 0 } },
              str(ATTR.scoreLabel, "absent"),
              str(ATTR.explanation, `FM-${code} ${names.get(code) ?? ""}: no finding by ${d.annotator}`),
              str(ATTR.modeCode, code),
              str(ATTR.modeName, names.get(code) ?? code),
            ],
            `mast.FM-${code} absent`,
            { ref: "root" },
          ),
        );
      }
  }
  stats.records = records.length;
  const version = opts.version ?? FAULTLINE_VERSION;
  return {
    document: {
      resourceLogs: [
        {
          resource: { attributes: [str("service.name", "faultline"), str("service.version", version)] },
          scopeLogs: [{ scope: { name: "faultline", version }, logRecords: records }],
        },
      ],
    },
    stats,
  };
}
