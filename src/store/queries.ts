import type { Diagnosis } from "../trace/index.js";
import type { Store } from "./store.js";

/*
 * Read queries for the dashboard: paged, filtered and sorted trace lists and the facets that drive the filters.
 * Everything is pushed into SQL so a 10 000-trace run never has to be loaded whole to show one page.
 */

/** The outcome filter: success = 1, failure = 0, unknown = NULL (or no diagnosis at all). */
export type OutcomeFilter = "success" | "failure" | "unknown";

export const TRACE_SORT_KEYS = ["trace_id", "model", "format", "steps", "outcome", "modes", "score", "file"] as const;
export type TraceSortKey = (typeof TRACE_SORT_KEYS)[number];

export interface TraceQuery {
  annotator: string;
  /** `(none)` selects traces without a model. */
  model?: string;
  format?: string;
  outcome?: OutcomeFilter;
  /** A taxonomy code: only traces with at least one finding of this mode. */
  mode?: string;
  /**
   * Search text: traces whose id, file, model or content hold words beginning with each of its words (case-insensitive,
   * through the FTS5 word index), or whose evidence holds it as a substring. Text without words (punctuation only) is
   * matched as a literal substring.
   */
  q?: string;
  sort?: TraceSortKey;
  dir?: "asc" | "desc";
  offset?: number;
  limit?: number;
}

export interface TraceListRow {
  trace_id: string;
  file: string;
  format: string;
  model: string | null;
  framework: string | null;
  steps: number;
  /** true / false / null (unknown or not diagnosed). */
  success: boolean | null;
  score: number | null;
  /** Modes found (1s of the failure vector); unmeasured modes count as nothing. Null when the trace was not annotated. */
  mode_count: number | null;
  /** Codes of the modes present (from the diagnosis's failure vector); null when the trace was not annotated. */
  modes: string[] | null;
  /**
   * Codes of the modes no detector or judge examined on this trace (null in the failure vector): unknown, neither
   * found nor absent. Null when the trace was not annotated.
   */
  unmeasured: string[] | null;
  error: string | null;
}

export interface TracePage {
  total: number;
  offset: number;
  limit: number;
  rows: TraceListRow[];
}

export interface Facet {
  value: string | null;
  count: number;
}

export interface RunFacets {
  models: Facet[];
  formats: Facet[];
  outcomes: { success: number; failure: number; unknown: number };
  /** Traces with at least one finding of each mode (by this annotator). */
  modes: Facet[];
  /**
   * Per mode of the stored failure vectors: annotated traces where it was measured (1 or 0), of `annotated`. A mode
   * with `measured: 0` was examined by no detector or judge: not measured, which is not the same as never found.
   */
  coverage: { code: string; measured: number; annotated: number }[];
  annotators: Facet[];
}

/** The label groupStatistics uses for a missing grouping value; the trace list accepts it as "model IS NULL". */
export const NO_VALUE = "(none)";

const SORT_SQL: Record<TraceSortKey, string> = {
  trace_id: "t.trace_id",
  model: "t.model",
  format: "t.format",
  steps: "t.steps",
  outcome: "d.success",
  modes: "d.mode_count",
  score: "d.score",
  file: "t.file, t.idx",
};

export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The FTS5 query for a search text: each of its words as a prefix (`"reserv"*`), all required; undefined when the text
 * has no word (punctuation only), which is searched by a scan instead. A word inside a longer word (`servation` in
 * `reservation`) is not a prefix of any indexed word: the index finds words and their beginnings.
 */
export function ftsQuery(text: string): string | undefined {
  return ftsWords(text)
    ?.map((w) => `"${w}"*`)
    .join(" AND ");
}

/** The words of a search text (lower case, letters and digits), each a prefix to find; undefined when it has none. */
export function ftsWords(text: string): string[] | undefined {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu);
  return words?.length ? words : undefined;
}

/**
 * The trace list's filters other than text search (run, model, format, outcome, mode), as SQL both engines run as they
 * are; each store adds its own text search (SQLite: LIKE and FTS5; PostgreSQL: ILIKE and regular expressions).
 */
export function filterClauses(runId: string, q: TraceQuery): { parts: string[]; params: Record<string, unknown> } {
  const parts = ["t.run_id = @run"];
  const params: Record<string, unknown> = { run: runId, annotator: q.annotator };
  if (q.model !== undefined) {
    if (q.model === NO_VALUE) parts.push("t.model IS NULL");
    else {
      parts.push("t.model = @model");
      params.model = q.model;
    }
  }
  if (q.format !== undefined) {
    parts.push("t.format = @format");
    params.format = q.format;
  }
  if (q.outcome === "success") parts.push("d.success = 1");
  else if (q.outcome === "failure") parts.push("d.success = 0");
  else if (q.outcome === "unknown") parts.push("d.success IS NULL");
  if (q.mode !== undefined) {
    parts.push("EXISTS (SELECT 1 FROM findings f WHERE f.run_id = t.run_id AND f.trace_id = t.trace_id AND f.annotator = @annotator AND f.mode = @mode)");
    params.mode = q.mode;
  }
  return { parts, params };
}

function whereFor(runId: string, q: TraceQuery): { sql: string; params: Record<string, unknown> } {
  const { parts, params } = filterClauses(runId, q);
  const text = q.q?.trim();
  if (text) {
    // LIKE is case-insensitive for ASCII; the trace column holds the canonical JSON, so this finds step text too.
    params.q = `%${likeEscape(text)}%`;
    const inTrace = "(t.trace_id LIKE @q ESCAPE '\\' OR t.file LIKE @q ESCAPE '\\' OR t.model LIKE @q ESCAPE '\\' OR t.trace LIKE @q ESCAPE '\\')";
    const inEvidence = "EXISTS (SELECT 1 FROM findings f WHERE f.run_id = t.run_id AND f.trace_id = t.trace_id AND f.annotator = @annotator AND f.evidence LIKE @q ESCAPE '\\')";
    const words = ftsQuery(text);
    if (words) {
      // the word index (trace_text, FTS5): traces holding a word that starts with each of the query's words (anywhere
      // in the trace, id, file or model); evidence is matched as a substring
      params.fts = words;
      parts.push(`(${inEvidence} OR t.rowid IN (SELECT rowid FROM trace_text WHERE trace_text MATCH @fts))`);
    } else parts.push(`(${inEvidence} OR ${inTrace})`);
  }
  return { sql: parts.join(" AND "), params };
}

const FROM = "FROM traces t LEFT JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = @annotator";

/** One page of a run's traces, filtered and sorted in SQL. */
export function listTraces(store: Store, runId: string, q: TraceQuery): TracePage {
  const limit = Math.max(1, Math.min(500, Math.floor(q.limit ?? 50)));
  // SQLite binds 64-bit integers only: an offset past every row is clamped, never a "datatype mismatch"
  const offset = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.floor(q.offset ?? 0)));
  const { sql: where, params } = whereFor(runId, q);
  const dir = q.dir === "desc" ? "DESC" : "ASC";
  const order = SORT_SQL[q.sort ?? "file"]
    .split(", ")
    .map((c) => `${c} ${dir}`)
    .join(", ");
  // One pass: the window count is taken over every matching row before LIMIT applies (a text search scans once).
  const rows = store.db
    .prepare(
      `SELECT t.trace_id, t.file, t.format, t.model, t.framework, t.steps, d.success, d.score, d.mode_count, d.modes, d.error, count(*) OVER () AS total ${FROM} WHERE ${where} ORDER BY ${order}, t.trace_id ${dir} LIMIT @limit OFFSET @offset`,
    )
    .all({ ...params, limit, offset }) as {
    trace_id: string;
    file: string;
    format: string;
    model: string | null;
    framework: string | null;
    steps: number;
    success: number | null;
    score: number | null;
    mode_count: number | null;
    modes: string | null;
    error: string | null;
    total: number;
  }[];
  // Past the last page there is no row to carry the count: count apart.
  const total = rows[0]?.total ?? (offset === 0 ? 0 : (store.db.prepare(`SELECT count(*) AS n ${FROM} WHERE ${where}`).get(params) as { n: number }).n);
  return {
    total,
    offset,
    limit,
    rows: rows.map((r) => ({
      trace_id: r.trace_id,
      file: r.file,
      format: r.format,
      model: r.model,
      framework: r.framework,
      steps: r.steps,
      success: r.success === null ? null : r.success === 1,
      score: r.score,
      mode_count: r.mode_count,
      ...vectorCodes(r.modes),
      error: r.error,
    })),
  };
}

/** A stored failure vector as the codes present and the codes not measured (null entries). */
export function vectorCodes(json: string | null): { modes: string[] | null; unmeasured: string[] | null } {
  if (json === null) return { modes: null, unmeasured: null };
  const v = Object.entries(JSON.parse(json) as Record<string, 0 | 1 | null>);
  return { modes: v.filter(([, x]) => x === 1).map(([k]) => k), unmeasured: v.filter(([, x]) => x === null).map(([k]) => k) };
}

/** The values the trace filters can take in one run, with counts. */
export function runFacets(store: Store, runId: string, annotator: string): RunFacets {
  const facet = (sql: string, ...args: unknown[]) => store.db.prepare(sql).all(...args) as Facet[];
  const outcomes = { success: 0, failure: 0, unknown: 0 };
  const rows = store.db
    .prepare(`SELECT d.success AS s, count(*) AS n FROM traces t LEFT JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = ? WHERE t.run_id = ? GROUP BY d.success`)
    .all(annotator, runId) as { s: number | null; n: number }[];
  for (const r of rows) outcomes[r.s === 1 ? "success" : r.s === 0 ? "failure" : "unknown"] += r.n;
  return {
    models: facet("SELECT model AS value, count(*) AS count FROM traces WHERE run_id = ? GROUP BY model ORDER BY count DESC, model", runId),
    formats: facet("SELECT format AS value, count(*) AS count FROM traces WHERE run_id = ? GROUP BY format ORDER BY count DESC, format", runId),
    outcomes,
    modes: facet("SELECT mode AS value, count(DISTINCT trace_id) AS count FROM findings WHERE run_id = ? AND annotator = ? GROUP BY mode ORDER BY mode", runId, annotator),
    annotators: facet("SELECT annotator AS value, count(*) AS count FROM diagnoses WHERE run_id = ? GROUP BY annotator ORDER BY annotator", runId),
    coverage: modeCoverage(store, runId, annotator),
  };
}

/** Per mode of the run's failure vectors (one annotator): annotated traces where it was measured (not null). */
export function modeCoverage(store: Store, runId: string, annotator: string): RunFacets["coverage"] {
  const annotated = (store.db.prepare("SELECT count(*) AS n FROM diagnoses WHERE run_id = ? AND annotator = ? AND modes IS NOT NULL").get(runId, annotator) as { n: number }).n;
  const rows = store.db
    .prepare(
      "SELECT j.key AS code, sum(CASE WHEN j.type = 'null' THEN 0 ELSE 1 END) AS measured FROM diagnoses d, json_each(d.modes) j WHERE d.run_id = ? AND d.annotator = ? AND d.modes IS NOT NULL GROUP BY j.key",
    )
    .all(runId, annotator) as { code: string; measured: number }[];
  return rows
    .map((r) => ({ code: r.code, measured: r.measured, annotated }))
    .sort((a, b) => a.code.localeCompare(b.code, undefined, { numeric: true }));
}

/** Annotators with diagnoses in a run (a run may carry a judge's diagnoses beside the rules'); reads only the key index. */
export function annotatorsOf(store: Store, runId: string): string[] {
  return (store.db.prepare("SELECT DISTINCT annotator FROM diagnoses WHERE run_id = ? ORDER BY annotator").all(runId) as { annotator: string }[]).map((r) => r.annotator);
}

/** One trace's diagnosis by one annotator. */
export function traceDiagnosis(store: Store, runId: string, traceId: string, annotator: string): Diagnosis | undefined {
  const r = store.db.prepare("SELECT diagnosis FROM diagnoses WHERE run_id = ? AND trace_id = ? AND annotator = ?").get(runId, traceId, annotator) as
    | { diagnosis: string }
    | undefined;
  return r ? (JSON.parse(r.diagnosis) as Diagnosis) : undefined;
}

/** Runs that contain a trace id, most recently updated first. */
export function runsWithTrace(store: Store, traceId: string): string[] {
  return (
    store.db.prepare("SELECT t.run_id AS id FROM traces t JOIN runs r ON r.id = t.run_id WHERE t.trace_id = ? ORDER BY r.updated_at DESC").all(traceId) as { id: string }[]
  ).map((r) => r.id);
}
