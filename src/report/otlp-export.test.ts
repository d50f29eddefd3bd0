import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { diagnoseTrace } from "../pipeline/diagnose.js";
import { MAST_CODES } from "../taxonomy/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import { hostileRun } from "../testing/report-fixtures.js";
import { ATTR, diagnosesToOtlp, EVALUATION_EVENT, type LogRecord } from "./otlp-export.js";

const OTLP_EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "otlp", "rollout-watcher.otlp.json");

/** trace id → span id → parent span id, straight from the input file (not through faultline's reader). */
function inputSpans(file: string): Map<string, Map<string, string | undefined>> {
  const doc = JSON.parse(readFileSync(file, "utf8")) as { resourceSpans: { scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string }[] }[] }[] };
  const out = new Map<string, Map<string, string | undefined>>();
  for (const rs of doc.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) {
        const t = out.get(s.traceId) ?? new Map<string, string | undefined>();
        t.set(s.spanId, s.parentSpanId || undefined);
        out.set(s.traceId, t);
      }
  return out;
}

const attr = (r: LogRecord, key: string) => r.attributes.find((a) => a.key === key)?.value;
const text = (r: LogRecord, key: string) => (attr(r, key) as { stringValue?: string } | undefined)?.stringValue;

describe("diagnosesToOtlp", async () => {
  const { traces } = await readAll(OTLP_EXAMPLE);
  const diagnoses: Diagnosis[] = [];
  for (const t of traces) diagnoses.push(await diagnoseTrace(t));
  const byId = new Map<string, Trace>(traces.map((t) => [t.id, t]));
  const now = 1_800_000_000_000_000_000n;
  const { document, stats } = diagnosesToOtlp(diagnoses, { traceOf: (d) => byId.get(d.trace_id), nowNs: now });
  const records = document.resourceLogs[0]!.scopeLogs[0]!.logRecords;
  const spans = inputSpans(OTLP_EXAMPLE);

  it("reads the example's OTLP run and finds at least one failure in it", () => {
    expect(traces.length).toBe(spans.size);
    expect(diagnoses.some((d) => d.findings.length > 0)).toBe(true);
  });

  it("ties every record to a trace id and span id of the input", () => {
    expect(stats.linked).toBe(traces.length);
    expect(stats.unlinked).toEqual([]);
    for (const r of records) {
      expect(r.eventName).toBe(EVALUATION_EVENT);
      expect(spans.has(r.traceId!), `trace ${r.traceId}`).toBe(true);
      expect(spans.get(r.traceId!)!.has(r.spanId!), `span ${r.spanId} in ${r.traceId}`).toBe(true);
      // the record's trace id is the one of the trace it talks about
      expect(text(r, ATTR.traceId)).toBe(r.traceId);
    }
  });

  it("puts each finding on the span of the step it cites; trace-level labels on the root span", () => {
    for (const d of diagnoses) {
      const trace = byId.get(d.trace_id)!;
      const mine = records.filter((r) => text(r, ATTR.traceId) === d.trace_id);
      const present = mine.filter((r) => text(r, ATTR.scoreLabel) === "present");
      expect(present).toHaveLength(d.findings.length);
      d.findings.forEach((f, i) => {
        const r = present[i]!;
        expect(text(r, ATTR.name)).toBe(`mast.FM-${f.mode}`);
        expect(attr(r, ATTR.scoreValue)).toEqual({ doubleValue: f.confidence });
        expect(r.spanId).toBe(trace.steps[f.steps[0]!]!.span!.spanId);
        expect(text(r, ATTR.explanation)).toContain(f.evidence);
        expect(text(r, ATTR.taxonomy)).toBe("mast-v3");
        expect(text(r, ATTR.detector)).toBe(f.detector);
        expect(attr(r, ATTR.steps)).toEqual({ arrayValue: { values: f.steps.map((s) => ({ intValue: String(s) })) } });
      });
      // one absent record per mode judged 0, on the root span (the span without a parent)
      const absent = mine.filter((r) => text(r, ATTR.scoreLabel) === "absent");
      expect(absent.map((r) => text(r, ATTR.modeCode))).toEqual(MAST_CODES.filter((c) => d.modes![c] === 0));
      const root = [...spans.get(trace.steps.find((s) => s.span)!.span!.traceId)!].find(([, parent]) => parent === undefined)![0];
      for (const r of absent) expect(r.spanId).toBe(root);
    }
    expect(stats.on_step_span).toBe(diagnoses.reduce((n, d) => n + d.findings.length, 0));
  });

  it("uses step times when known and the export time otherwise; presentOnly drops absent labels", () => {
    for (const r of records) expect(BigInt(r.timeUnixNano)).toBeLessThan(now);
    expect(records.every((r) => r.observedTimeUnixNano === now.toString())).toBe(true);
    const only = diagnosesToOtlp(diagnoses, { traceOf: (d) => byId.get(d.trace_id), presentOnly: true }).document.resourceLogs[0]!.scopeLogs[0]!.logRecords;
    expect(only).toHaveLength(diagnoses.reduce((n, d) => n + d.findings.length, 0));
  });

  it("exports traces without OTLP ids without inventing any, and says which", () => {
    const run = hostileRun();
    const { document: doc, stats: s } = diagnosesToOtlp(run, { nowNs: now });
    const recs = doc.resourceLogs[0]!.scopeLogs[0]!.logRecords;
    expect(recs.every((r) => r.traceId === undefined && r.spanId === undefined)).toBe(true);
    expect(s.unlinked).toHaveLength(run.length);
    const notAnnotated = recs.filter((r) => text(r, ATTR.errorType) === "faultline.not_annotated");
    expect(notAnnotated).toHaveLength(1);
    // JSON-safe: the hostile text is carried as data
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });
});
