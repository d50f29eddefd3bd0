import { groupLabel, INTERVENTIONS } from "../analysis/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import type { Diagnosis } from "../trace/index.js";
import type { RunSummary } from "./summary.js";

/*
 * What every report renders (Markdown, CSV, HTML): the run summary as written to summary.json — the only source of
 * the statistics shown — plus per-trace rows with their evidence and the modes-per-failed-trace histogram, both
 * counted straight from the diagnoses. Renderers format; they never compute a statistic.
 */

export interface TraceFinding {
  mode: string;
  name: string;
  confidence: number;
  steps: number[];
  agent?: string;
  evidence: string;
  detector: string;
  rationale?: string;
}

/** A trace's decisive step as the report shows it: the record's `decisive`, with the mode's name. */
export interface TraceDecisive {
  mode: string;
  name: string;
  /** 0-based index of a step of the recorded trace. */
  step: number;
  agent: string | null;
  confidence: number;
  basis: string[];
  rationale: string;
}

export interface TraceEntry {
  trace_id: string;
  /** The model group the trace falls in (`(none)` without a model), as in summary.json. */
  model: string;
  framework: string | null;
  source: { file: string; format: string; index: number };
  success: boolean | null;
  score: number | null;
  metric: string | null;
  /** Codes of the modes present; null when the trace could not be annotated. */
  modes: string[] | null;
  /** Codes no detector or judge examined on this trace (null in its vector): unknown, not absent. Null when not annotated. */
  unmeasured: string[] | null;
  findings: TraceFinding[];
  /**
   * Where and by whom the run first went wrong. null when the record says nothing supports a decisive step (with
   * `decisive_reason`); absent when the record does not address it (e.g. an annotator that predates the field).
   */
  decisive?: TraceDecisive | null;
  decisive_reason?: string;
  error?: string;
}

/** Where a guard's fix stands in one model's ranking: indices into summary.json `interventions[group].ranking[rank]`. */
export interface GuardFixRank {
  model: string;
  group: number;
  position: number;
  id: string;
  rank: number;
  leverage: number;
}

/**
 * A row of the replay's per-guard table joined to the analysis: the catalogue interventions whose `guard.id` is the
 * row's guard, and where they are ranked (leverage > 0), best rank first.
 */
export interface ReplayGuardJoin {
  /** Index into summary.json `replay.guards_summary`. */
  index: number;
  guard: string;
  fixes: { id: string; name: string }[];
  ranks: GuardFixRank[];
}

export interface ReportData {
  summary: RunSummary;
  taxonomy: Taxonomy;
  /** Per model: counts[k] = annotated failed traces with exactly k distinct modes (k = 0 … max seen). */
  modesPerFailed: { model: string; counts: number[] }[];
  traces: TraceEntry[];
  /** The replay's guards joined to the ranked interventions; null when the run has no replay (e.g. `analyze --judge`). */
  replayGuards: ReplayGuardJoin[] | null;
}

const outcomeOrder = (s: boolean | null) => (s === false ? 0 : s === null ? 1 : 2);

/** Builds the report data from a run summary and the diagnoses it summarises. */
export function buildReportData(summary: RunSummary, diagnoses: readonly Diagnosis[], taxonomy: Taxonomy = mast): ReportData {
  const names = new Map(taxonomy.modes.map((m) => [m.code, m.name]));
  const traces: TraceEntry[] = diagnoses.map((d) => {
    const present = d.modes ? taxonomy.codes.filter((c) => d.modes![c] === 1) : null;
    // a code missing from the vector was not measured either (records may carry only part of the taxonomy)
    const unmeasured = d.modes ? taxonomy.codes.filter((c) => d.modes![c] !== 1 && d.modes![c] !== 0) : null;
    return {
      trace_id: d.trace_id,
      model: groupLabel(d.model),
      framework: d.framework,
      source: d.source,
      success: d.outcome.success,
      score: d.outcome.score ?? null,
      metric: d.outcome.metric ?? null,
      modes: present,
      unmeasured,
      findings: d.findings.map((f) => ({
        mode: f.mode,
        name: names.get(f.mode) ?? f.mode,
        confidence: f.confidence,
        steps: f.steps,
        ...(f.agent ? { agent: f.agent } : {}),
        evidence: f.evidence,
        detector: f.detector,
        ...(f.rationale ? { rationale: f.rationale } : {}),
      })),
      ...(d.decisive
        ? {
            decisive: {
              mode: d.decisive.mode,
              name: names.get(d.decisive.mode) ?? d.decisive.mode,
              step: d.decisive.step,
              agent: d.decisive.agent,
              confidence: d.decisive.confidence,
              basis: [...d.decisive.basis],
              rationale: d.decisive.rationale,
            },
          }
        : d.decisive === null
          ? { decisive: null, decisive_reason: d.decisive_reason ?? "" }
          : {}),
      ...(d.error ? { error: d.error } : {}),
    };
  });
  traces.sort(
    (a, b) =>
      a.model.localeCompare(b.model) ||
      outcomeOrder(a.success) - outcomeOrder(b.success) ||
      (b.modes?.length ?? -1) - (a.modes?.length ?? -1) ||
      a.trace_id.localeCompare(b.trace_id),
  );
  const histograms = new Map<string, number[]>();
  for (const t of traces) {
    if (t.success !== false || t.modes === null) continue;
    const h = histograms.get(t.model) ?? [];
    while (h.length <= t.modes.length) h.push(0);
    h[t.modes.length]!++;
    histograms.set(t.model, h);
  }
  const modesPerFailed = summary.models.map((m) => ({ model: m.model, counts: histograms.get(m.model) ?? [] }));
  return { summary, taxonomy, modesPerFailed, traces, replayGuards: summary.replay ? joinReplayGuards(summary) : null };
}

/** Joins each replayed guard to the catalogue and the per-model rankings on the catalogue's `guard.id`. */
function joinReplayGuards(summary: RunSummary): ReplayGuardJoin[] {
  return summary.replay!.guards_summary.map((g, index) => {
    const fixes = INTERVENTIONS.interventions.filter((iv) => iv.guard.id === g.guard).map((iv) => ({ id: iv.id, name: iv.name }));
    const ranks: GuardFixRank[] = [];
    summary.interventions.forEach((gi, group) =>
      gi.ranking.forEach((r, position) => {
        if (r.guard.id === g.guard && r.leverage > 0) ranks.push({ model: gi.value, group, position, id: r.id, rank: r.rank, leverage: r.leverage });
      }),
    );
    ranks.sort((a, b) => a.rank - b.rank || b.leverage - a.leverage || a.model.localeCompare(b.model));
    return { index, guard: g.guard, fixes, ranks };
  });
}
