/*
 * The JSON API's response shapes, shared (as types only) by the server and the UI in web/.
 * Statistics are the analysis stage's own types: the dashboard shows them, it never recomputes them.
 */
import type { AgreementReport, GroupInterventions, GroupStats, LabelDiagnostic } from "../analysis/index.js";
import type { RunFacets, RunInfo, RunProgress, TracePage } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";

export type { GroupStats, ModeStats, CoOccurrence, Range, GroupInterventions, RankedIntervention } from "../analysis/index.js";
export type { RunFacets, TracePage, TraceListRow, TraceSortKey, OutcomeFilter } from "../store/index.js";
export type { Diagnosis, Decisive, Trace, Step, Finding, GoldLabels } from "../trace/index.js";

export interface RunSummary extends RunInfo {
  /** Annotators with diagnoses in this run (the run's own first). */
  annotators: string[];
  /** A distributed run's queue (submit + workers on PostgreSQL): jobs queued, running, done and failed. */
  progress?: RunProgress;
}

export interface TaxonomyInfo {
  id: string;
  version: string;
  modes: { code: string; name: string; category: string; definition: string }[];
  categories: { id: string; name: string }[];
}

/** What to build, why it works and the evidence for one catalogue intervention (src/analysis/interventions.v1.json). */
export interface InterventionEntry {
  action: string;
  why: string;
  evidence: { claim: string; source: string; ref: string }[];
}

export interface Overview {
  run: RunSummary;
  annotator: string;
  taxonomy: TaxonomyInfo;
  /** Every trace of the run as one group. */
  all: GroupStats;
  /** One group per model (`(none)` for traces without a model). */
  models: GroupStats[];
  /** Histogram of distinct modes per annotated failed trace, per model: counts[k] = traces with k modes (last = k or more). */
  modesPerFailed: { model: string; counts: number[] }[];
  /** The analysis stage's intervention ranking, per group (`all` and each model), by leverage. */
  interventions: GroupInterventions[];
  /** The catalogue behind the ranking: its version and each entry's action, mechanism and evidence, by id. */
  interventionCatalogue: { version: string; entries: Record<string, InterventionEntry> };
  /** Problems met while reading the stored diagnoses as label rows (first 20), and how many there were. */
  diagnostics: LabelDiagnostic[];
  diagnosticCount: number;
}

export interface TraceDetail {
  run: RunSummary;
  annotator: string;
  trace: Trace;
  diagnosis: Diagnosis | null;
  taxonomy: TaxonomyInfo;
  /** Other runs that hold a trace with the same id. */
  otherRuns: string[];
}

export interface RunsResponse {
  runs: RunSummary[];
}

export interface TracesResponse extends TracePage {
  facets?: RunFacets;
}

export interface CompareSide {
  run: RunSummary;
  annotator: string;
  traces: number;
}

export interface ModeShift {
  code: string;
  name: string;
  a: { count: number; judged: number; prevalence: number | null };
  b: { count: number; judged: number; prevalence: number | null };
  /** B − A prevalence in percentage points with a Newcombe interval. */
  delta_pp: { value: number | null; lo: number | null; hi: number | null };
  /** The interval excludes 0: the mode moved. */
  moved: boolean;
}

export interface GroupShift {
  /** `all`, or a model name. */
  group: string;
  a_traces: number;
  b_traces: number;
  modes: ModeShift[];
}

export interface Comparison {
  a: CompareSide;
  b: CompareSide;
  taxonomy: TaxonomyInfo;
  groups: GroupShift[];
  /** Agreement of B with A on the traces both sides share (two annotators on the same traces); null when none match. */
  agreement: Pick<AgreementReport, "matching" | "vectors" | "modes" | "macro"> | null;
}

export interface ApiError {
  error: string;
}
