import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { modeCount as countModes, type Diagnosis, type Trace } from "../trace/index.js";
import { INDEXES, SCHEMA, STORE_VERSION, TRACE_TEXT, traceTextOf } from "./schema.sql.js";

/** Where `analyze` keeps its store unless told otherwise. */
export const DEFAULT_DB = ".faultline/faultline.db";

/** `incomplete` from the moment a run starts until it finished; a run killed or interrupted midway stays so. */
export type RunStatus = "complete" | "incomplete";

export interface RunInfo {
  /** The run's name, e.g. `examples-20260115-122609` (stores written before version 2: a 16-digit hash). */
  id: string;
  created_at: string;
  updated_at: string;
  inputs: string[];
  annotator: string;
  taxonomy: string;
  /** Traces stored (of an incomplete run: those stored so far). */
  trace_count: number;
  diagnostics: Record<string, number>;
  status: RunStatus;
}

export interface BeginRunOptions {
  /** The run's name (default: {@link runName} of the inputs); made unique with a `-2`, `-3`… suffix. */
  name?: string;
  /** The time the name carries (default: now). */
  now?: Date;
}

export interface FinishRunOptions {
  /** Default `complete`. An interrupted run is finished `incomplete`: what was read is kept and marked so. */
  status?: RunStatus;
  /**
   * Delete the other runs of the same inputs and annotator (`--replace`). Only a complete run replaces anything, and
   * only once it is complete, so an interrupted re-analysis never costs the previous run.
   */
  replace?: boolean;
}

export interface TraceRow {
  trace_id: string;
  file: string;
  format: string;
  idx: number;
  model: string | null;
  framework: string | null;
  steps: number;
}

/**
 * A trace as the store keeps it: its list columns, content digest and canonical JSON. A parallel analysis serialises
 * traces in its workers ({@link storedTrace}) and hands the store these, not the objects.
 */
export interface StoredTrace extends TraceRow {
  content_hash: string;
  json: string;
}

export function storedTrace(trace: Trace): StoredTrace {
  return {
    trace_id: trace.id,
    file: trace.source.file,
    format: trace.source.format,
    idx: trace.source.index,
    model: trace.model ?? null,
    framework: trace.framework ?? null,
    steps: trace.steps.length,
    content_hash: contentHash(trace),
    json: JSON.stringify(trace),
  };
}

/** A stable digest of a trace's content (for idempotent re-analysis and the judge cache). */
export function contentHash(trace: Trace): string {
  const { id: _id, source: _source, ...content } = trace;
  return createHash("sha256").update(JSON.stringify(content)).digest("hex").slice(0, 32);
}

/**
 * What was analysed and how, as a digest of the resolved inputs and the annotator: runs with the same key are
 * analyses of the same inputs, which `--replace` supersedes. (Stores of version 1 used it as the run id.)
 */
export function runIdFor(inputs: string[], annotator: string): string {
  const key = JSON.stringify({ inputs: inputs.map((p) => resolve(p)).sort(), annotator });
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

const pad = (n: number) => String(n).padStart(2, "0");

/**
 * A run's human-readable name: the first input's base name (without trace-file extensions) and the local time,
 * `<name>-<YYYYMMDD-HHMMSS>`, e.g. `examples-20260115-122609`.
 */
export function runName(inputs: readonly string[], now: Date = new Date()): string {
  const first = inputs[0] === undefined ? "" : basename(resolve(inputs[0]));
  const base =
    first
      .replace(/(\.(jsonl|ndjson|json|gz|yaml|yml|txt|log|csv))+$/i, "")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[-.]+|-+$/g, "")
      .slice(0, 48) || "run";
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}-${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  return `${base}-${stamp}`;
}

/** The SQLite store: the only place in faultline that knows SQL. */
export class Store {
  readonly db: Database.Database;

  constructor(readonly path: string = DEFAULT_DB) {
    if (path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("foreign_keys = ON");
    // a REPLACE of a trace row fires its delete trigger, which keeps the text index (trace_text) in step
    this.db.pragma("recursive_triggers = ON");
    this.db.exec(SCHEMA);
    const v = this.db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
    if (!v) this.db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?)").run(String(STORE_VERSION));
    else if (Number(v.value) > STORE_VERSION)
      throw new Error(`${path}: store version ${v.value} is newer than this faultline understands (${STORE_VERSION})`);
    else if (Number(v.value) < STORE_VERSION) this.migrate(Number(v.value));
    this.db.exec(TRACE_TEXT);
    this.db.exec(INDEXES);
  }

  /** Brings an older store up to STORE_VERSION in one transaction; everything it held stays readable. */
  private migrate(from: number): void {
    this.db.transaction(() => {
      if (from < 3) {
        // the text index, filled with the traces already stored
        this.db.exec(TRACE_TEXT);
        this.db.exec(`INSERT INTO trace_text (rowid, text) SELECT rowid, ${traceTextOf("traces")} FROM traces`);
      }
      if (from < 2) {
        const cols = new Set((this.db.prepare("PRAGMA table_info(runs)").all() as { name: string }[]).map((c) => c.name));
        // runs of version 1 finished or were replaced whole: they count as complete; their id was their input key
        if (!cols.has("status")) this.db.exec("ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'complete'");
        if (!cols.has("input_key")) this.db.exec("ALTER TABLE runs ADD COLUMN input_key TEXT");
        this.db.exec("UPDATE runs SET input_key = id WHERE input_key IS NULL");
      }
      this.db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(STORE_VERSION));
    })();
  }

  close(): void {
    this.db.close();
  }

  /**
   * Starts a new run, written as `incomplete` before anything else: a run killed midway shows as such. Nothing earlier
   * is touched (see {@link finishRun} for replacing on purpose). Returns the run's id, its unique name.
   */
  beginRun(inputs: string[], annotator: string, taxonomy: string, opts: BeginRunOptions = {}): string {
    const now = opts.now ?? new Date();
    const base = opts.name ?? runName(inputs, now);
    const exists = this.db.prepare("SELECT 1 FROM runs WHERE id = ?");
    const insert = this.db.prepare(
      "INSERT INTO runs (id, created_at, updated_at, inputs, annotator, taxonomy, status, input_key) VALUES (?, ?, ?, ?, ?, ?, 'incomplete', ?)",
    );
    // immediate: two processes starting a run of the same folder in the same second get distinct names
    return this.db
      .transaction(() => {
        let id = base;
        for (let n = 2; exists.get(id); n++) id = `${base}-${n}`;
        const at = now.toISOString();
        insert.run(id, at, at, JSON.stringify(inputs), annotator, taxonomy, runIdFor(inputs, annotator));
        return id;
      })
      .immediate();
  }

  /**
   * Records a run's counts and marks it complete (or `incomplete`, for an interrupted run). With `replace`, a complete
   * run deletes the other runs of the same inputs and annotator; returns the ids it deleted.
   */
  finishRun(runId: string, diagnostics: Record<string, number>, opts: FinishRunOptions = {}): { replaced: string[] } {
    const status = opts.status ?? "complete";
    return this.db.transaction(() => {
      this.db
        .prepare("UPDATE runs SET trace_count = (SELECT count(*) FROM traces WHERE run_id = ?), diagnostics = ?, updated_at = ?, status = ? WHERE id = ?")
        .run(runId, JSON.stringify(diagnostics), new Date().toISOString(), status, runId);
      if (!opts.replace || status !== "complete") return { replaced: [] };
      const own = this.db.prepare("SELECT input_key, annotator FROM runs WHERE id = ?").get(runId) as { input_key: string | null; annotator: string } | undefined;
      if (!own?.input_key) return { replaced: [] };
      const others = (
        this.db.prepare("SELECT id FROM runs WHERE input_key = ? AND annotator = ? AND id != ? ORDER BY created_at").all(own.input_key, own.annotator, runId) as { id: string }[]
      ).map((r) => r.id);
      const del = this.db.prepare("DELETE FROM runs WHERE id = ?"); // cascades to traces, diagnoses, findings
      for (const id of others) del.run(id);
      return { replaced: others };
    })();
  }

  /** Deletes a run and everything stored under it. */
  deleteRun(runId: string): void {
    this.db.prepare("DELETE FROM runs WHERE id = ?").run(runId);
  }

  private insertTrace = () =>
    this.db.prepare(
      "INSERT OR REPLACE INTO traces (run_id, trace_id, file, format, idx, model, framework, steps, content_hash, trace) VALUES (?,?,?,?,?,?,?,?,?,?)",
    );

  /** Saves a batch of traces (objects, or serialised by {@link storedTrace}) with their diagnoses and findings in one transaction. */
  saveBatch(runId: string, items: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[]): void {
    const insTrace = this.insertTrace();
    const delDiag = this.db.prepare("DELETE FROM findings WHERE run_id = ? AND trace_id = ? AND annotator = ?");
    const insDiag = this.db.prepare(
      "INSERT OR REPLACE INTO diagnoses (run_id, trace_id, annotator, success, score, modes, mode_count, diagnosis, error) VALUES (?,?,?,?,?,?,?,?,?)",
    );
    const insFinding = this.db.prepare(
      "INSERT INTO findings (run_id, trace_id, annotator, mode, confidence, first_step, steps, agent, evidence, detector) VALUES (?,?,?,?,?,?,?,?,?,?)",
    );
    this.db.transaction(() => {
      let last: Trace | StoredTrace | undefined;
      for (const { trace, diagnosis: d } of items) {
        const t = "json" in trace ? trace : storedTrace(trace);
        // a trace stored with several diagnoses (the judge's and the rules') is written once
        if (trace !== last) insTrace.run(runId, t.trace_id, t.file, t.format, t.idx, t.model, t.framework, t.steps, t.content_hash, t.json);
        last = trace;
        delDiag.run(runId, t.trace_id, d.annotator);
        const modeCount = d.modes ? countModes(d.modes) : null;
        insDiag.run(runId, t.trace_id, d.annotator, d.outcome.success === null ? null : d.outcome.success ? 1 : 0, d.outcome.score ?? null, d.modes ? JSON.stringify(d.modes) : null, modeCount, JSON.stringify(d), d.error ?? null);
        for (const f of d.findings)
          insFinding.run(runId, t.trace_id, d.annotator, f.mode, f.confidence, f.steps[0] ?? null, JSON.stringify(f.steps), f.agent ?? null, f.evidence, f.detector);
      }
    })();
  }

  /**
   * The run to resume for these inputs and annotator: the most recently started run of them, when it is incomplete
   * (an interrupted or killed analysis). A newer complete run means there is nothing to resume.
   */
  resumableRun(inputs: string[], annotator: string): string | undefined {
    const r = this.db.prepare("SELECT id, status FROM runs WHERE input_key = ? AND annotator = ? ORDER BY created_at DESC, rowid DESC LIMIT 1").get(runIdFor(inputs, annotator), annotator) as
      | { id: string; status: string }
      | undefined;
    return r?.status === "incomplete" ? r.id : undefined;
  }

  /** A run's stored traces by id: each one's content hash and its diagnosis by `annotator`. */
  storedTraces(runId: string, annotator: string): Map<string, { hash: string; diagnosis: Diagnosis }> {
    const rows = this.db
      .prepare("SELECT t.trace_id, t.content_hash, d.diagnosis FROM traces t JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = ? WHERE t.run_id = ?")
      .all(annotator, runId) as { trace_id: string; content_hash: string; diagnosis: string }[];
    return new Map(rows.map((r) => [r.trace_id, { hash: r.content_hash, diagnosis: JSON.parse(r.diagnosis) as Diagnosis }]));
  }

  /** Deletes a run's stored traces (with their diagnoses and findings) other than `keep`: a resumed run's inputs lost them. */
  pruneTraces(runId: string, keep: ReadonlySet<string>): number {
    const gone = (this.db.prepare("SELECT trace_id FROM traces WHERE run_id = ?").all(runId) as { trace_id: string }[]).map((r) => r.trace_id).filter((id) => !keep.has(id));
    this.db.transaction(() => {
      for (const table of ["findings", "diagnoses", "traces"]) {
        const del = this.db.prepare(`DELETE FROM ${table} WHERE run_id = ? AND trace_id = ?`);
        for (const id of gone) del.run(runId, id);
      }
    })();
    return gone.length;
  }

  runs(): RunInfo[] {
    return (this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY updated_at DESC, id DESC`).all() as Record<string, unknown>[]).map(toRun);
  }

  /** A run by its id, else the most recently updated run whose id starts with `id` (a hash prefix, a name without its time). */
  run(id: string): RunInfo | undefined {
    const r = (this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`).get(id) ??
      this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE substr(id, 1, length(@p)) = @p ORDER BY updated_at DESC, id DESC`).get({ p: id })) as
      | Record<string, unknown>
      | undefined;
    return r ? toRun(r) : undefined;
  }

  diagnoses(runId: string, annotator?: string): Diagnosis[] {
    const rows = (annotator
      ? this.db.prepare("SELECT diagnosis FROM diagnoses WHERE run_id = ? AND annotator = ?").all(runId, annotator)
      : this.db.prepare("SELECT diagnosis FROM diagnoses WHERE run_id = ?").all(runId)) as { diagnosis: string }[];
    return rows.map((r) => JSON.parse(r.diagnosis) as Diagnosis);
  }

  trace(runId: string, traceId: string): Trace | undefined {
    const r = this.db.prepare("SELECT trace FROM traces WHERE run_id = ? AND trace_id = ?").get(runId, traceId) as { trace: string } | undefined;
    return r ? (JSON.parse(r.trace) as Trace) : undefined;
  }

  traceRows(runId: string): TraceRow[] {
    return this.db.prepare("SELECT trace_id, file, format, idx, model, framework, steps FROM traces WHERE run_id = ? ORDER BY file, idx").all(runId) as TraceRow[];
  }

  /** A run's stored aggregate (JSON text) of this kind, if it was computed at the run's current version (updated_at). */
  aggregate(runId: string, annotator: string, kind: string, version: string): string | undefined {
    const r = this.db.prepare("SELECT value FROM aggregates WHERE run_id = ? AND annotator = ? AND kind = ? AND version = ?").get(runId, annotator, kind, version) as { value: string } | undefined;
    return r?.value;
  }

  /** Stores a run's aggregate (JSON text) computed at `version` (the run's updated_at), replacing an earlier one. */
  putAggregate(runId: string, annotator: string, kind: string, version: string, value: string): void {
    this.db.prepare("INSERT OR REPLACE INTO aggregates (run_id, annotator, kind, version, value) VALUES (?, ?, ?, ?, ?)").run(runId, annotator, kind, version, value);
  }

  cacheGet(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM cache WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  cachePut(key: string, value: string): void {
    this.db.prepare("INSERT OR REPLACE INTO cache (key, value, created_at) VALUES (?, ?, ?)").run(key, value, new Date().toISOString());
  }
}

/** A run's columns; an incomplete run's trace count is what is stored so far (its counts were never recorded). */
export const RUN_COLUMNS =
  "id, created_at, updated_at, inputs, annotator, taxonomy, diagnostics, status, " +
  "CASE WHEN status = 'complete' THEN trace_count ELSE (SELECT count(*) FROM traces t WHERE t.run_id = runs.id) END AS trace_count";

export function toRun(r: Record<string, unknown>): RunInfo {
  return {
    id: String(r.id),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    inputs: JSON.parse(String(r.inputs)) as string[],
    annotator: String(r.annotator),
    taxonomy: String(r.taxonomy),
    trace_count: Number(r.trace_count),
    diagnostics: JSON.parse(String(r.diagnostics)) as Record<string, number>,
    status: r.status === "incomplete" ? "incomplete" : "complete",
  };
}
