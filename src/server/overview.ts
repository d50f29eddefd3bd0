import {
  evaluateAgreement,
  groupStatistics,
  INTERVENTIONS,
  labelsFromRecords,
  newcombeInterval,
  rankInterventions,
  type GroupInterventions,
  type GroupStats,
  type LabelDiagnostic,
  type LabelRow,
} from "../analysis/index.js";
import type { FaultlineStore } from "../store/index.js";
import type { Diagnosis } from "../trace/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import type { Comparison, CompareSide, GroupShift, InterventionEntry, ModeShift, Overview, RunSummary, TaxonomyInfo } from "./api-types.js";

/*
 * The overview and compare views: stored diagnoses → label rows → the analysis stage's group statistics. Nothing here
 * computes a statistic of its own beyond counting; intervals and tests come from src/analysis.
 */

/** The largest bucket of the modes-per-failed-trace histogram ("k or more"). */
const HISTOGRAM_TOP = 6;

export function taxonomyInfo(tax: Taxonomy = mast): TaxonomyInfo {
  return {
    id: tax.id,
    version: tax.version,
    modes: tax.modes.map((m) => ({ code: m.code, name: m.name, category: m.category, definition: m.definition })),
    categories: tax.categories.map((c) => ({ id: c.id, name: c.name })),
  };
}

/** The stored diagnoses of one run and annotator as label rows (the same reader `faultline stats` uses on findings.jsonl). */
export async function runRows(store: FaultlineStore, runId: string, annotator: string, tax: Taxonomy = mast) {
  return rowsOf(await store.diagnoses(runId, annotator), runId, annotator, tax);
}

async function rowsOf(diagnoses: readonly Diagnosis[], runId: string, annotator: string, tax: Taxonomy) {
  return labelsFromRecords(
    diagnoses.map((d) => ({ value: d })),
    `store:${runId}/${annotator}`,
    { taxonomy: tax },
  );
}

function histogram(rows: readonly LabelRow[], codes: readonly string[]): number[] {
  const counts = new Array<number>(HISTOGRAM_TOP + 1).fill(0);
  for (const r of rows) {
    if (r.success !== false || !r.modes) continue;
    const k = codes.reduce((n, c) => n + (r.modes![c] === 1 ? 1 : 0), 0);
    counts[Math.min(k, HISTOGRAM_TOP)]!++;
  }
  return counts;
}

/** A run's label rows and group statistics: computed once per run, annotator and update, shared by every view. */
export interface RunStats {
  rows: LabelRow[];
  diagnostics: LabelDiagnostic[];
  all: GroupStats;
  models: GroupStats[];
}

export async function computeRunStats(store: FaultlineStore, runId: string, annotator: string, tax: Taxonomy = mast): Promise<RunStats> {
  return statsOf(await store.diagnoses(runId, annotator), runId, annotator, tax);
}

async function statsOf(diagnoses: readonly Diagnosis[], runId: string, annotator: string, tax: Taxonomy): Promise<RunStats> {
  const load = await rowsOf(diagnoses, runId, annotator, tax);
  return {
    rows: load.rows,
    diagnostics: load.diagnostics,
    all: groupStatistics(load.rows, { taxonomy: tax }).groups[0]!,
    models: groupStatistics(load.rows, { by: "model", taxonomy: tax }).groups,
  };
}

/** The catalogue entries as the overview ships them: what to build, why, and the evidence with its source named. */
function catalogueEntries(): Record<string, InterventionEntry> {
  return Object.fromEntries(
    INTERVENTIONS.interventions.map((iv) => [
      iv.id,
      { action: iv.action, why: iv.why, evidence: iv.evidence.map((e) => ({ claim: e.claim, source: INTERVENTIONS.sources[e.source] ?? e.source, ref: e.ref })) },
    ]),
  );
}

export function buildOverview(run: RunSummary, annotator: string, stats: RunStats, tax: Taxonomy = mast): Overview {
  const { all, models } = stats;
  const byModel = new Map<string, LabelRow[]>();
  for (const r of stats.rows) {
    const m = typeof r.fields.model === "string" && r.fields.model !== "" ? r.fields.model : "(none)";
    const list = byModel.get(m);
    if (list) list.push(r);
    else byModel.set(m, [r]);
  }
  // Ranked by the analysis stage, each group with its own rows for the reach (failed traces a guard would act on).
  const rank = (g: GroupStats, rows: readonly LabelRow[]): GroupInterventions => ({
    key: g.key,
    value: g.value,
    catalogue: INTERVENTIONS.version,
    ranking: rankInterventions(g, { taxonomy: tax, rows }),
  });
  return {
    run,
    annotator,
    taxonomy: taxonomyInfo(tax),
    all,
    models,
    modesPerFailed: models.map((g) => ({ model: g.value, counts: histogram(byModel.get(g.value) ?? [], tax.codes) })),
    interventions: [rank(all, stats.rows), ...models.map((g) => rank(g, byModel.get(g.value) ?? []))],
    interventionCatalogue: { version: INTERVENTIONS.version, entries: catalogueEntries() },
    diagnostics: stats.diagnostics.slice(0, 20),
    diagnosticCount: stats.diagnostics.length,
  };
}

/** What the store keeps of an overview (aggregates, kind `overview`): all of it but the run, filled in per request. */
const OVERVIEW = "overview";

/**
 * Computes a run's overview for each annotator of `diagnoses` and stores it with the run (the store's aggregates), so
 * the dashboard's first view reads it instead of computing it. Called when a run is written, after it is finished:
 * the stored overview is tied to the run's updated_at and ignored once the run changes.
 */
export async function storeOverviews(store: FaultlineStore, runId: string, diagnoses: readonly Diagnosis[], tax: Taxonomy = mast): Promise<void> {
  const run = await store.run(runId);
  if (!run || run.id !== runId) return;
  const by = new Map<string, Diagnosis[]>();
  for (const d of diagnoses) {
    const list = by.get(d.annotator);
    if (list) list.push(d);
    else by.set(d.annotator, [d]);
  }
  for (const [annotator, ds] of by) {
    const { run: _run, ...rest } = buildOverview({ ...run, annotators: [] }, annotator, await statsOf(ds, runId, annotator, tax), tax);
    await store.putAggregate(runId, annotator, OVERVIEW, run.updated_at, JSON.stringify(rest));
  }
}

/** The overview stored for this run and annotator at the run's current version, if any. */
export async function storedOverview(store: FaultlineStore, run: RunSummary, annotator: string): Promise<Overview | undefined> {
  const v = await store.aggregate(run.id, annotator, OVERVIEW, run.updated_at);
  return v === undefined ? undefined : ({ run, ...(JSON.parse(v) as Omit<Overview, "run">) } as Overview);
}

/** Keeps an overview computed on first view (a run written before aggregates existed); a read-only store keeps none. */
export async function keepOverview(store: FaultlineStore, overview: Overview): Promise<void> {
  const { run, ...rest } = overview;
  try {
    await store.putAggregate(run.id, overview.annotator, OVERVIEW, run.updated_at, JSON.stringify(rest));
  } catch {
    /* read-only or busy: computed again next time */
  }
}

function shift(a: GroupStats | undefined, b: GroupStats | undefined, group: string, tax: Taxonomy): GroupShift {
  const modes: ModeShift[] = tax.modes.map((m) => {
    const sa = a?.modes.find((x) => x.code === m.code);
    const sb = b?.modes.find((x) => x.code === m.code);
    const ca = { count: sa?.counts.all ?? 0, judged: sa?.judged.all ?? 0, prevalence: sa?.prevalence.all ?? null };
    const cb = { count: sb?.counts.all ?? 0, judged: sb?.judged.all ?? 0, prevalence: sb?.prevalence.all ?? null };
    const d = newcombeInterval(cb.count, cb.judged, ca.count, ca.judged);
    const f = (x: number) => (Number.isFinite(x) ? 100 * x : null);
    const delta = { value: f(d.estimate), lo: f(d.lo), hi: f(d.hi) };
    return { code: m.code, name: m.name, a: ca, b: cb, delta_pp: delta, moved: delta.lo !== null && delta.hi !== null && (delta.lo > 0 || delta.hi < 0) };
  });
  return { group, a_traces: a?.traces ?? 0, b_traces: b?.traces ?? 0, modes };
}

type Side = { run: RunSummary; annotator: string; stats: RunStats };

/** Two runs (or two annotators on one run) side by side: which modes moved overall and per model. */
export function buildComparison(a: Side, b: Side, tax: Taxonomy = mast): Comparison {
  const ma = new Map(a.stats.models.map((g) => [g.value, g]));
  const mb = new Map(b.stats.models.map((g) => [g.value, g]));
  const models = [...new Set([...ma.keys(), ...mb.keys()])].sort((x, y) => (x === "(none)" ? 1 : y === "(none)" ? -1 : x.localeCompare(y)));
  const groups = [shift(a.stats.all, b.stats.all, "all", tax), ...models.map((m) => shift(ma.get(m), mb.get(m), m, tax))];
  const side = (s: Side): CompareSide => ({ run: s.run, annotator: s.annotator, traces: s.stats.rows.length });
  const report = evaluateAgreement(a.stats.rows, b.stats.rows, { taxonomy: tax });
  const cut = (xs: string[]) => xs.slice(0, 20);
  const agreement =
    report.matching.matched > 0
      ? {
          matching: {
            ...report.matching,
            reference_only: cut(report.matching.reference_only),
            predicted_only: cut(report.matching.predicted_only),
            ambiguous: report.matching.ambiguous.slice(0, 20),
            duplicate_reference: cut(report.matching.duplicate_reference),
            duplicate_predicted: cut(report.matching.duplicate_predicted),
          },
          vectors: report.vectors,
          modes: report.modes,
          macro: report.macro,
        }
      : null;
  return { a: side(a), b: side(b), taxonomy: taxonomyInfo(tax), groups, agreement };
}
