import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as faultline from "./index.js";
import { corpus } from "./testing/corpus.js";

/** The package's public face (src/index.ts → dist/index.js): what a library user imports from "faultline". */
describe("public entry", () => {
  it("exports the reader, schemas, taxonomy, detectors, pipeline, store and analysis — and no test helpers", () => {
    for (const name of [
      "readTraces", "readAll", "ADAPTERS", "findAdapter", "TraceSchema", "StepSchema", "FindingSchema", "DiagnosisSchema", "OutcomeSchema",
      "buildTrace", "mast", "MAST_CODES", "Taxonomy", "runDetectors", "DETECTORS", "diagnoseTrace", "analyze", "scoreOutcome",
      "Store", "groupStatistics", "evaluateAgreement", "loadLabels", "wilsonInterval", "judgeTrace",
    ])
      expect(faultline, name).toHaveProperty(name);
    expect(Object.keys(faultline)).not.toContain("corpus");
    expect(faultline.ADAPTERS.map((a) => a.id)).toEqual(expect.arrayContaining(["otlp-traces", "tau-bench", "faultline"]));
    expect(faultline.MAST_CODES).toHaveLength(14);
  });

  it("reads a corpus file, validates it against the exported schema, and diagnoses it end to end", async () => {
    const { traces, diagnostics } = await faultline.readAll(corpus("otlp-openinference", "quo_tav_agent.json"));
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    expect(traces).toHaveLength(1);
    const trace = faultline.TraceSchema.parse(traces[0]);
    expect(trace.model).toBe("gpt-4o");

    const events: string[] = [];
    for await (const ev of faultline.readTraces(corpus("otlp-openinference", "quo_tav_agent.json"))) events.push(ev.type);
    expect(events).toEqual(expect.arrayContaining(["file", "trace"]));

    const rules = faultline.runDetectors(trace);
    expect(rules.failures).toEqual([]);
    const diagnosis = faultline.DiagnosisSchema.parse(await faultline.diagnoseTrace(trace));
    expect(diagnosis.trace_id).toBe(trace.id);
    expect(Object.keys(diagnosis.modes ?? {})).toEqual([...faultline.MAST_CODES]);
    expect(diagnosis.findings).toEqual(rules.findings);
  });

  it("runs the analyze pipeline into a Store that reads back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-entry-"));
    const result = await faultline.analyze([corpus("otlp-openinference")], { out: dir, db: join(dir, "f.db") });
    expect(result.counts.traces).toBe(3);
    const store = new faultline.Store(join(dir, "f.db"));
    try {
      expect(store.run(result.runId)).toBeDefined();
      expect(store.diagnoses(result.runId).map((d) => d.trace_id).sort()).toEqual(result.diagnoses.map((d) => d.trace_id).sort());
      const first = result.diagnoses[0]!;
      expect(store.trace(result.runId, first.trace_id)?.id).toBe(first.trace_id);
    } finally {
      store.close();
    }
  });
});
