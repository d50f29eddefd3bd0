export { Store, DEFAULT_DB, contentHash, runIdFor, runName, type RunInfo, type RunStatus, type TraceRow, type BeginRunOptions, type FinishRunOptions } from "./store.js";
