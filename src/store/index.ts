export { Store, DEFAULT_DB, contentHash, storedTrace, runIdFor, runName, type StoredTrace, type RunInfo, type RunStatus, type TraceRow, type BeginRunOptions, type FinishRunOptions } from "./store.js";
export type { FaultlineStore, RunProgress, StoredTraceState } from "./types.js";
export { SqliteStore } from "./sqlite.js";
export { PgStore, QUEUE_SCHEMA, DIAGNOSE_QUEUE, JUDGE_QUEUE } from "./pg/store.js";
export { openStore, storeExists, defaultDb, displayUrl, isPostgresUrl, DB_ENV } from "./open.js";
// Read queries for the API and the CLI: callers go through this index, never store/queries.ts directly.
export {
  listTraces,
  runFacets,
  modeCoverage,
  annotatorsOf,
  traceDiagnosis,
  runsWithTrace,
  TRACE_SORT_KEYS,
  NO_VALUE,
  type OutcomeFilter,
  type TraceSortKey,
  type TraceQuery,
  type TraceListRow,
  type TracePage,
  type Facet,
  type RunFacets,
} from "./queries.js";
