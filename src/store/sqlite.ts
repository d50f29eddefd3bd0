import type { Diagnosis, Trace } from "../trace/index.js";
import { annotatorsOf, listTraces, runFacets, runsWithTrace, traceDiagnosis, type TraceQuery } from "./queries.js";
import { Store, type BeginRunOptions, type FinishRunOptions, type StoredTrace } from "./store.js";
import type { FaultlineStore, RunProgress } from "./types.js";

/**
 * The embedded SQLite store behind the asynchronous {@link FaultlineStore} interface: each call is the synchronous
 * better-sqlite3 call of {@link Store}, unchanged, so the SQLite path behaves exactly as before.
 */
export class SqliteStore implements FaultlineStore {
  readonly kind = "sqlite" as const;
  readonly sync: Store;

  constructor(pathOrStore: string | Store) {
    this.sync = typeof pathOrStore === "string" ? new Store(pathOrStore) : pathOrStore;
  }

  get path(): string {
    return this.sync.path;
  }

  async beginRun(inputs: string[], annotator: string, taxonomy: string, opts?: BeginRunOptions) {
    return this.sync.beginRun(inputs, annotator, taxonomy, opts);
  }
  async finishRun(runId: string, diagnostics: Record<string, number>, opts?: FinishRunOptions) {
    return this.sync.finishRun(runId, diagnostics, opts);
  }
  async deleteRun(runId: string) {
    this.sync.deleteRun(runId);
  }
  async saveBatch(runId: string, items: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[]) {
    this.sync.saveBatch(runId, items);
  }
  async resumableRun(inputs: string[], annotator: string) {
    return this.sync.resumableRun(inputs, annotator);
  }
  async storedTraces(runId: string, annotator: string) {
    return this.sync.storedTraces(runId, annotator);
  }
  async pruneTraces(runId: string, keep: ReadonlySet<string>) {
    return this.sync.pruneTraces(runId, keep);
  }
  async aggregate(runId: string, annotator: string, kind: string, version: string) {
    return this.sync.aggregate(runId, annotator, kind, version);
  }
  async putAggregate(runId: string, annotator: string, kind: string, version: string, value: string) {
    this.sync.putAggregate(runId, annotator, kind, version, value);
  }
  async runs() {
    return this.sync.runs();
  }
  async run(id: string) {
    return this.sync.run(id);
  }
  async diagnoses(runId: string, annotator?: string) {
    return this.sync.diagnoses(runId, annotator);
  }
  async trace(runId: string, traceId: string) {
    return this.sync.trace(runId, traceId);
  }
  async traceRows(runId: string) {
    return this.sync.traceRows(runId);
  }
  async cacheGet(key: string) {
    return this.sync.cacheGet(key);
  }
  async cachePut(key: string, value: string) {
    this.sync.cachePut(key, value);
  }
  async listTraces(runId: string, q: TraceQuery) {
    return listTraces(this.sync, runId, q);
  }
  async runFacets(runId: string, annotator: string) {
    return runFacets(this.sync, runId, annotator);
  }
  async annotatorsOf(runId: string) {
    return annotatorsOf(this.sync, runId);
  }
  async traceDiagnosis(runId: string, traceId: string, annotator: string) {
    return traceDiagnosis(this.sync, runId, traceId, annotator);
  }
  async runsWithTrace(traceId: string) {
    return runsWithTrace(this.sync, traceId);
  }
  async progress(_runId: string): Promise<RunProgress | undefined> {
    return undefined;
  }
  async close() {
    this.sync.close();
  }
}
