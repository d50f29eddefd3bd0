import { groupRows, groupStatistics, labelsFromRecords, rankAllGroups, type GroupInterventions, type GroupStats } from "../analysis/index.js";
import type { ReplaySummary } from "../trace/index.js";
import type { Diagnosis } from "../trace/index.js";

export interface ModelSummary {
  model: string;
  traces: number;
  annotated: number;
  successes: number;
  failures: number;
  unknown_outcome: number;
  success_rate: number | null;
  modes_per_failed_trace: number | null;
  /** Most prevalent modes among annotated traces: code and share. */
  top_modes: { code: string; name: string; traces: number; prevalence: number }[];
}

export interface RunSummary {
  run_id: string;
  /**
   * `complete`, or `incomplete` when the run was interrupted: the counts and statistics cover only the traces read
   * before it stopped. Absent in summaries written before runs had a status.
   */
  status?: "complete" | "incomplete";
  annotator: string;
  counts: Record<string, number>;
  models: ModelSummary[];
  /** Full per-model statistics (prevalence with intervals, deltas, classes), from the analysis stage. */
  statistics: GroupStats[];
  /** Interventions ranked per model by leverage, explained with that model's numbers (src/analysis/interventions.ts). */
  interventions: GroupInterventions[];
  /** The guard replay ("what the recommended fixes would have caught"), when the run replayed its traces (`analyze`). */
  replay?: ReplaySummary;
}

/** Summarises diagnoses per model with the analysis stage's statistics. */
export async function summarize(runId: string, annotator: string, counts: Record<string, number>, diagnoses: Diagnosis[]): Promise<RunSummary> {
  const load = await labelsFromRecords(diagnoses.map((value) => ({ value })), "findings.jsonl");
  const report = groupStatistics(load.rows, { by: "model" });
  const models = report.groups.map((g): ModelSummary => ({
    model: g.value,
    traces: g.traces,
    annotated: g.annotated,
    successes: g.successes,
    failures: g.failures,
    unknown_outcome: g.unknown_outcome,
    success_rate: g.success_rate.estimate,
    modes_per_failed_trace: g.modes_per_failed_trace.mean,
    top_modes: g.modes
      .filter((m) => m.counts.all > 0)
      .sort((a, b) => b.counts.all - a.counts.all || a.code.localeCompare(b.code))
      .slice(0, 3)
      .map((m) => ({ code: m.code, name: m.name, traces: m.counts.all, prevalence: m.prevalence.all ?? 0 })),
  }));
  const rowsByModel = groupRows(load.rows, "model");
  const interventions = rankAllGroups(report.groups, { rowsOf: (v) => rowsByModel.get(v) });
  return { run_id: runId, annotator, counts, models, statistics: report.groups, interventions };
}

/**
 * What the readers left out, for every report's footer: nothing is dropped silently. Runs stored before steps were
 * counted have no `skipped_steps`; they show 0, as they showed nothing before.
 */
export function skippedText(c: Readonly<Record<string, number | undefined>>): string {
  const n = (k: string) => c[k] ?? 0;
  return `${n("skipped_lines")} skipped lines/records, ${n("skipped_steps")} skipped steps, ${n("skipped_traces")} skipped traces`;
}
