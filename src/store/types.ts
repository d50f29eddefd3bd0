import type { Diagnosis, Trace } from "../trace/index.js";
import type { RunFacets, TracePage, TraceQuery } from "./queries.js";
import type { BeginRunOptions, FinishRunOptions, RunInfo, StoredTrace, TraceRow } from "./store.js";

/** Where a distributed run's work stands: jobs queued, being worked on, diagnosed, and failed for good. */
export interface RunProgress {
  queued: number;
  running: number;
  done: number;
  failed: number;
}

/** What a run holds of one trace, for `analyze --resume`: its content hash and its diagnosis by the resumed annotator. */
export interface StoredTraceState {
  hash: string;
  diagnosis: Diagnosis;
}

/**
 * The store every stage and command talks to: the embedded SQLite file (the default) or a PostgreSQL database, behind
 * one asynchronous interface. Only src/store knows SQL; the implementations answer every method identically (the
 * query tests in src/store/contract.test.ts run against both).
 */
export interface FaultlineStore {
  /** Which engine: `sqlite` (a file) or `postgres` (a server shared by many processes). */
  readonly kind: "sqlite" | "postgres";
  /** Where the store is, for messages (a file path, or a postgres URL without its password). */
  readonly path: string;

  beginRun(inputs: string[], annotator: string, taxonomy: string, opts?: BeginRunOptions): Promise<string>;
  finishRun(runId: string, diagnostics: Record<string, number>, opts?: FinishRunOptions): Promise<{ replaced: string[] }>;
  deleteRun(runId: string): Promise<void>;
  /**
   * Saves traces (objects, or rows serialised by `storedTrace` in a worker of a parallel analysis) with their diagnoses
   * and findings in one transaction; saving the same (run, trace, annotator) again replaces it.
   */
  saveBatch(runId: string, items: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[]): Promise<void>;
  /**
   * The run to resume for these inputs and annotator (`analyze --resume`): the most recently started run of them, when
   * it is incomplete. A newer complete run means there is nothing to resume.
   */
  resumableRun(inputs: string[], annotator: string): Promise<string | undefined>;
  /** A run's stored traces by id: each one's content hash and its diagnosis by `annotator`. */
  storedTraces(runId: string, annotator: string): Promise<Map<string, StoredTraceState>>;
  /** Deletes a run's stored traces (with their diagnoses and findings) other than `keep`; how many went. */
  pruneTraces(runId: string, keep: ReadonlySet<string>): Promise<number>;
  runs(): Promise<RunInfo[]>;
  run(id: string): Promise<RunInfo | undefined>;
  diagnoses(runId: string, annotator?: string): Promise<Diagnosis[]>;
  trace(runId: string, traceId: string): Promise<Trace | undefined>;
  traceRows(runId: string): Promise<TraceRow[]>;
  /** A run's stored aggregate (JSON text) of this kind, if it was computed at the run's current version (updated_at). */
  aggregate(runId: string, annotator: string, kind: string, version: string): Promise<string | undefined>;
  /** Stores a run's aggregate (JSON text) computed at `version` (the run's updated_at), replacing an earlier one. */
  putAggregate(runId: string, annotator: string, kind: string, version: string, value: string): Promise<void>;
  cacheGet(key: string): Promise<string | undefined>;
  cachePut(key: string, value: string): Promise<void>;

  /** One page of a run's traces, filtered and sorted by the store. */
  listTraces(runId: string, q: TraceQuery): Promise<TracePage>;
  runFacets(runId: string, annotator: string): Promise<RunFacets>;
  annotatorsOf(runId: string): Promise<string[]>;
  traceDiagnosis(runId: string, traceId: string, annotator: string): Promise<Diagnosis | undefined>;
  /** Runs that contain a trace id, most recently updated first. */
  runsWithTrace(traceId: string): Promise<string[]>;
  /** A distributed run's queue progress; undefined for a run analysed in one process (every SQLite run). */
  progress(runId: string): Promise<RunProgress | undefined>;

  close(): Promise<void>;
}
