import { describe, expect, it } from "vitest";
import { groupStatistics, labelsFromText, parseCsvRecords } from "../analysis/index.js";
import { csvCell, groupsCsv, GROUPS_CSV_HEADER, interventionsCsv, tracesCsv } from "./csv.js";
import { buildReportData } from "./data.js";
import { hostileRun } from "../testing/report-fixtures.js";
import { summarize } from "./summary.js";

describe("CSV exports", async () => {
  const diagnoses = hostileRun();
  const summary = await summarize("run-1", "rules@test", {}, diagnoses);
  const data = buildReportData(summary, diagnoses);

  it("quotes per RFC 4180 and defuses spreadsheet formulas", () => {
    expect(csvCell('say "hi", then\nleave')).toBe('"say ""hi"", then\nleave"');
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell(-2.5)).toBe("-2.5"); // numbers are numbers
    expect(csvCell(null)).toBe("");
    expect(csvCell(NaN)).toBe("");
    expect(csvCell(true)).toBe("1");
  });

  it("traces.csv is a label file: `faultline stats traces.csv --by group` gives summary.json's statistics", () => {
    const csv = tracesCsv(data);
    const load = labelsFromText(csv, "traces.csv");
    expect(load.diagnostics.filter((d) => d.level === "error")).toEqual([]);
    expect(load.rows).toHaveLength(diagnoses.length);
    const again = groupStatistics(load.rows, { by: "group" });
    expect(again.groups.map((g) => g.value)).toEqual(summary.statistics.map((g) => g.value));
    again.groups.forEach((g, i) => {
      const s = summary.statistics[i]!;
      expect([g.traces, g.annotated, g.successes, g.failures]).toEqual([s.traces, s.annotated, s.successes, s.failures]);
      expect(g.modes.map((m) => [m.code, m.counts, m.judged, m.delta_pp, m.p_value, m.class])).toEqual(
        s.modes.map((m) => [m.code, m.counts, m.judged, m.delta_pp, m.p_value, m.class]),
      );
    });
  });

  it("groups.csv has one row per group × mode and roll-up, with the summary's numbers", () => {
    const records = parseCsvRecords(groupsCsv(summary));
    expect(records[0]!.cells).toEqual([...GROUPS_CSV_HEADER]);
    const rows = records.slice(1).map((r) => Object.fromEntries(GROUPS_CSV_HEADER.map((h, i) => [h, r.cells[i]!])));
    expect(rows).toHaveLength(summary.statistics.reduce((n, g) => n + g.modes.length + g.rollups.length, 0));
    const a = summary.statistics.find((g) => g.value === "model-a")!;
    const m = a.modes.find((x) => x.code === "3.3")!;
    const row = rows.find((r) => r.group === "model-a" && r.code === "3.3")!;
    expect(row).toMatchObject({ kind: "mode", count_failed: "5", judged_failed: "6", class: m.class });
    expect(Number(row.delta_pp)).toBe(m.delta_pp.value);
    expect(Number(row.p_value)).toBe(m.p_value);
    // the hostile model name is defused, not dropped
    expect(rows.some((r) => r.group === '<img src=x onerror="alert(1)">')).toBe(true);
  });

  it("interventions.csv lists every group's ranking", () => {
    const records = parseCsvRecords(interventionsCsv(summary));
    expect(records.length - 1).toBe(summary.interventions.reduce((n, g) => n + g.ranking.length, 0));
    const top = summary.interventions.find((g) => g.value === "model-a")!.ranking[0]!;
    const row = records.find((r) => r.cells[1] === "model-a" && r.cells[2] === "1")!;
    expect(row.cells[3]).toBe(top.id);
    expect(Number(row.cells[5])).toBe(top.leverage);
  });
});
