import { LABEL_CSV_HEADER, type ModeStats } from "../analysis/index.js";
import type { ReportData } from "./data.js";
import type { RunSummary } from "./summary.js";

/*
 * CSV exports (RFC 4180, CRLF line ends):
 * - traces.csv: one row per trace in the label CSV format `faultline stats` reads (trace_id, group = model, success,
 *   one column per mode: 1 found, 0 examined and not found, empty = not measured or not annotated), so
 *   `faultline stats traces.csv --by group` reproduces summary.json's prevalence. The CSV carries no finding basis,
 *   so its deltas match summary.json only where no finding rests on the outcome (docs/statistics.md, "Circularity");
 *   findings.jsonl keeps the basis;
 * - groups.csv: one row per model × mode (and roll-up) with every statistic of summary.json;
 * - interventions.csv: one row per model × ranked intervention.
 * A text cell that a spreadsheet would run as a formula (starting with = + - @, tab or CR) gets a leading apostrophe.
 */

const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV cell: numbers as they are, text quoted when needed and defused against formula injection. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  if (typeof value === "boolean") return value ? "1" : "0";
  let s = String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csv(header: readonly string[], rows: unknown[][]): string {
  return [header, ...rows].map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
}

/** Per-trace failure vectors in the label CSV format. */
export function tracesCsv(d: ReportData): string {
  const codes = LABEL_CSV_HEADER.slice(3);
  return csv(
    LABEL_CSV_HEADER,
    d.traces.map((t) => [
      t.trace_id,
      t.model === "(none)" ? "" : t.model,
      t.success === null ? "" : t.success ? 1 : 0,
      // an unmeasured mode is an empty cell (not judged), never a 0
      ...codes.map((c) => (t.modes === null || t.unmeasured?.includes(c) ? "" : t.modes.includes(c) ? 1 : 0)),
    ]),
  );
}

export const GROUPS_CSV_HEADER = [
  "group_key", "group", "kind", "code", "name",
  "traces", "annotated", "successes", "failures", "unknown_outcome",
  "count_all", "judged_all", "prevalence_all", "prevalence_all_lo", "prevalence_all_hi",
  "count_successful", "judged_successful", "prevalence_successful",
  "count_failed", "judged_failed", "prevalence_failed",
  "delta_pp", "delta_pp_lo", "delta_pp_hi", "p_value", "q_value", "class",
  "count_successful_independent", "count_failed_independent", "delta_pp_all_findings", "delta_pp_all_findings_lo", "delta_pp_all_findings_hi",
] as const;

/**
 * Every group × mode / roll-up statistic of a summary. delta_pp, p, q and class rest on the outcome-independent counts
 * (count_*_independent); delta_pp_all_findings counts every finding, including those made because the run failed
 * (circular, for reference). A mode no annotator measured has judged_all 0 and empty prevalence cells.
 */
export function groupsCsv(s: RunSummary): string {
  const rows = s.statistics.flatMap((g) => {
    const line = (kind: string, m: ModeStats) => [
      g.key, g.value, kind, m.code, m.name,
      g.traces, g.annotated, g.successes, g.failures, g.unknown_outcome,
      m.counts.all, m.judged.all, m.prevalence.all, m.prevalence_ci.all.lo, m.prevalence_ci.all.hi,
      m.counts.successful, m.judged.successful, m.prevalence.successful,
      m.counts.failed, m.judged.failed, m.prevalence.failed,
      m.delta_pp.value, m.delta_pp.lo, m.delta_pp.hi, m.p_value, m.q_value, m.class,
      m.independent.counts.successful, m.independent.counts.failed, m.delta_pp_all_findings.value, m.delta_pp_all_findings.lo, m.delta_pp_all_findings.hi,
    ];
    return [...g.modes.map((m) => line("mode", m)), ...g.rollups.map((m) => line("rollup", m))];
  });
  return csv(GROUPS_CSV_HEADER, rows);
}

export const INTERVENTIONS_CSV_HEADER = [
  "group_key", "group", "rank", "intervention", "guard", "leverage", "failed_traces_reached", "annotated_failed", "modes", "explanation", "catalogue",
] as const;

/** Every group's ranked interventions. */
export function interventionsCsv(s: RunSummary): string {
  const rows = s.interventions.flatMap((gi) =>
    gi.ranking.map((r) => [
      gi.key, gi.value, r.rank, r.id, r.guard.id, r.leverage, r.reach?.failed_traces ?? null, r.reach?.annotated_failed ?? null,
      r.contributions.map((c) => `${c.mode}${c.coverage === "partial" ? "(partial)" : ""}:${c.class}`).join(" "),
      r.explanation, gi.catalogue,
    ]),
  );
  return csv(INTERVENTIONS_CSV_HEADER, rows);
}
