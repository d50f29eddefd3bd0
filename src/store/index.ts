export { Store, DEFAULT_DB, contentHash, runIdFor, runName, type RunInfo, type RunStatus, type TraceRow, type BeginRunOptions, type FinishRunOptions } from "./store.js";
export type { FaultlineStore, RunProgress } from "./types.js";
export { SqliteStore } from "./sqlite.js";
export { PgStore } from "./pg/store.js";
export { openStore, storeExists, defaultDb, displayUrl, isPostgresUrl, DB_ENV } from "./open.js";
