export { Store, DEFAULT_DB, contentHash, runIdFor, type RunInfo, type TraceRow } from "./store.js";
