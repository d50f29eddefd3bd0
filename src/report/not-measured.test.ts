import { describe, expect, it } from "vitest";
import { evaluateAgreement, groupStatistics, labelsFromRecords, parseCsvRecords } from "../analysis/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import type { Basis, Diagnosis, Finding } from "../trace/index.js";
import { groupsCsv, GROUPS_CSV_HEADER, tracesCsv } from "./csv.js";
import { buildReportData } from "./data.js";
import { renderHtml } from "./html.js";
import { renderMarkdown } from "./markdown.js";
import { summarize } from "./summary.js";
import { agreementText, statsText } from "./text.js";

/*
 * The reports keep "not measured" (null: no detector or judge examined the mode) apart from 0, and show the
 * successful-vs-failed comparison on outcome-independent evidence with the circular all-findings figure beside it.
 */

import { partlyMeasured, UNMEASURED } from "../testing/report-fixtures.js";

const finding = (mode: string, basis?: Basis[]): Finding => ({ mode, confidence: 0.7, steps: [2], evidence: "the quote", detector: `rules/${mode}`, ...(basis ? { basis } : {}) });

const diagnosis = (id: string, success: boolean, findings: Finding[]): Diagnosis => partlyMeasured({ id, success, findings });

// 3.1 in every failed run, but only through the outcome; 1.3 on the steps in two failures and one success.
const diagnoses: Diagnosis[] = [
  diagnosis("f1", false, [finding("3.1", ["steps", "outcome"]), finding("1.3")]),
  diagnosis("f2", false, [finding("3.1", ["steps", "outcome"]), finding("1.3")]),
  diagnosis("f3", false, [finding("3.1", ["outcome"])]),
  diagnosis("s1", true, [finding("1.3")]),
  diagnosis("s2", true, []),
  diagnosis("s3", true, []),
];

describe("reports: not measured and circular findings", async () => {
  const summary = await summarize("run-nm", "rules@test", { traces: diagnoses.length, annotated: diagnoses.length }, diagnoses);
  const data = buildReportData(summary, diagnoses);
  const g = summary.statistics[0]!;
  const m = (c: string) => g.modes.find((x) => x.code === c)!;

  it("summary.json: unmeasured modes have no denominators; 3.1's delta leaves out the outcome-only findings", () => {
    expect(m("2.2").judged.all).toBe(0);
    expect(m("2.2").prevalence.all).toBeNull();
    expect(m("3.1").counts.failed).toBe(3);
    expect(m("3.1").independent.counts.failed).toBe(0);
    expect(m("3.1").delta_pp.value).toBe(0);
    expect(m("3.1").delta_pp_all_findings.value).toBe(100);
    expect(m("3.1").class).not.toBe("fatal");
  });

  it("traces.csv: an unmeasured mode is an empty cell, never 0", () => {
    const records = parseCsvRecords(tracesCsv(data));
    const header = records[0]!.cells;
    const f1 = Object.fromEntries(header.map((h, i) => [h, records.find((r) => r.cells[0] === "f1")!.cells[i]]));
    expect(f1["2.2"]).toBe("");
    expect(f1["1.2"]).toBe("");
    expect(f1["1.1"]).toBe("0");
    expect(f1["3.1"]).toBe("1");
    expect(data.traces.find((t) => t.trace_id === "f1")!.unmeasured).toEqual(UNMEASURED);
  });

  it("traces.csv read back keeps the modes unmeasured: prevalence equals summary.json's", async () => {
    const { labelsFromText } = await import("../analysis/index.js");
    const again = groupStatistics(labelsFromText(tracesCsv(data), "traces.csv").rows).groups[0]!;
    for (const mode of g.modes) {
      const a = again.modes.find((x) => x.code === mode.code)!;
      expect([a.counts, a.judged], mode.code).toEqual([mode.counts, mode.judged]);
    }
  });

  it("groups.csv: not measured is an empty prevalence; the outcome-independent counts and circular delta are columns", () => {
    const records = parseCsvRecords(groupsCsv(summary));
    const rows = records.slice(1).map((r) => Object.fromEntries(GROUPS_CSV_HEADER.map((h, i) => [h, r.cells[i]!])));
    const r22 = rows.find((r) => r.kind === "mode" && r.code === "2.2")!;
    expect(r22).toMatchObject({ judged_all: "0", prevalence_all: "", delta_pp: "" });
    const r31 = rows.find((r) => r.kind === "mode" && r.code === "3.1")!;
    expect(r31).toMatchObject({ count_failed: "3", count_failed_independent: "0", delta_pp: "0", delta_pp_all_findings: "100" });
  });

  const html = renderHtml(data);

  it("report.html: hatched not-measured heatmap cells, apart from 0%", () => {
    const cells = [...html.matchAll(/<g data-not-measured="FM-([\d.]+)"><title>([^<]*)<\/title><rect[^>]*fill="([^"]+)"/g)];
    expect(cells.map((c) => c[1])).toEqual(UNMEASURED);
    for (const c of cells) {
      expect(c[2]).toContain("not measured");
      expect(c[3]).toBe("url(#not-measured)");
    }
    // a measured mode found nowhere (1.1) is an ordinary 0% cell
    expect(html).toMatch(/<title>model-n · FM-1\.1 [^<]*: 0 of 6 annotated traces<\/title><rect[^>]*fill="rgb\(255,255,255\)"/);
    expect(html).toContain("not measured: no detector or judge examined the mode");
  });

  it("report.html: the deltas chart says not measured, and marks the circular all-findings delta", () => {
    for (const c of UNMEASURED) expect(html).toMatch(new RegExp(`<text [^>]*data-not-measured="FM-${c.replace(".", "\\.")}"[^>]*>not measured</text>`));
    expect(html).toContain(`data-circular="FM-3.1"`);
    expect(html).not.toContain(`data-circular="FM-1.3"`);
    expect(html).toContain("outcome-independent evidence");
  });

  it("report.html: each trace row says how many modes were not measured", () => {
    expect(html).toContain(`data-unmeasured="${UNMEASURED.join(" ")}"`);
    expect(html).toContain(`${UNMEASURED.length} not measured`);
  });

  it("report.md and `faultline stats`: not-measured modes and circular findings are listed under the table", async () => {
    const md = renderMarkdown(data);
    expect(md).toContain("Not measured (no detector or judge examined them; unknown, not absent): FM-1.2, FM-2.2, FM-2.3, FM-2.4, FM-2.5.");
    expect(md).toContain("found only through the outcome: FM-3.1 in 3 traces (Δ over all findings +100.0 pp, circular)");
    const load = await labelsFromRecords(diagnoses.map((value) => ({ value })), "findings.jsonl");
    const text = statsText(groupStatistics(load.rows));
    expect(text).toContain("Not measured (no detector or judge examined them; unknown, not absent): FM-1.2, FM-2.2");
    expect(text).toContain("FM-3.1 in 3 traces (Δ over all findings +100.0 pp, circular)");
  });

  it("`faultline eval` text: a mode the prediction did not measure is 'not measured', not scored", async () => {
    const predicted = (await labelsFromRecords(diagnoses.map((value) => ({ value })), "findings.jsonl")).rows;
    const reference = predicted.map((r) => ({ ...r, modes: Object.fromEntries(MAST_CODES.map((c) => [c, c === "2.2" ? 1 : 0])) as Record<string, 0 | 1> }));
    const report = evaluateAgreement(reference, predicted);
    const out = agreementText(report);
    expect(out).toMatch(/FM-2\.2\s+0\s+not measured\s+6/);
    expect(out).toContain("Not measured by the prediction");
    expect(out).toContain("FM-1.2, FM-2.2, FM-2.3, FM-2.4, FM-2.5");
  });
});
