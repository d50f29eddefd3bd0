import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { modeCount as countModes, type Diagnosis, type Trace } from "../trace/index.js";
import { SCHEMA, STORE_VERSION } from "./schema.sql.js";

/** Where `analyze` keeps its store unless told otherwise. */
export const DEFAULT_DB = ".faultline/faultline.db";

export interface RunInfo {
  id: string;
  created_at: string;
  updated_at: string;
  inputs: string[];
  annotator: string;
  taxonomy: string;
  trace_count: number;
  diagnostics: Record<string, number>;
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

/** A stable digest of a trace's content (for idempotent re-analysis and the judge cache). */
export function contentHash(trace: Trace): string {
  const { id: _id, source: _source, ...content } = trace;
  return createHash("sha256").update(JSON.stringify(content)).digest("hex").slice(0, 32);
}

/** The run id is a function of what was analysed and how, so re-analysing the same input replaces the same run. */
export function runIdFor(inputs: string[], annotator: string): string {
  const key = JSON.stringify({ inputs: inputs.map((p) => resolve(p)).sort(), annotator });
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** The SQLite store: the only place in faultline that knows SQL. */
export class Store {
  readonly db: Database.Database;

  constructor(readonly path: string = DEFAULT_DB) {
    if (path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("foreign_keys = ON");
    this.db.exec(SCHEMA);
    const v = this.db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
    if (!v) this.db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?)").run(String(STORE_VERSION));
    else if (Number(v.value) > STORE_VERSION)
      throw new Error(`${path}: store version ${v.value} is newer than this faultline understands (${STORE_VERSION})`);
  }

  close(): void {
    this.db.close();
  }

  /** Starts (or restarts) a run: an earlier run of the same inputs and annotator is cleared and reused. */
  beginRun(inputs: string[], annotator: string, taxonomy: string): string {
    const id = runIdFor(inputs, annotator);
    const now = new Date().toISOString();
    const tx = this.db.transaction(() => {
      const existing = this.db.prepare("SELECT created_at FROM runs WHERE id = ?").get(id) as { created_at: string } | undefined;
      this.db.prepare("DELETE FROM runs WHERE id = ?").run(id); // cascades to traces, diagnoses, findings
      this.db
        .prepare("INSERT INTO runs (id, created_at, updated_at, inputs, annotator, taxonomy) VALUES (?, ?, ?, ?, ?, ?)")
        .run(id, existing?.created_at ?? now, now, JSON.stringify(inputs), annotator, taxonomy);
    });
    tx();
    return id;
  }

  finishRun(runId: string, diagnostics: Record<string, number>): void {
    this.db
      .prepare("UPDATE runs SET trace_count = (SELECT count(*) FROM traces WHERE run_id = ?), diagnostics = ?, updated_at = ? WHERE id = ?")
      .run(runId, JSON.stringify(diagnostics), new Date().toISOString(), runId);
  }

  private insertTrace = () =>
    this.db.prepare(
      "INSERT OR REPLACE INTO traces (run_id, trace_id, file, format, idx, model, framework, steps, content_hash, trace) VALUES (?,?,?,?,?,?,?,?,?,?)",
    );

  /** Saves a batch of traces with their diagnoses and findings in one transaction. */
  saveBatch(runId: string, items: { trace: Trace; diagnosis: Diagnosis }[]): void {
    const insTrace = this.insertTrace();
    const delDiag = this.db.prepare("DELETE FROM findings WHERE run_id = ? AND trace_id = ? AND annotator = ?");
    const insDiag = this.db.prepare(
      "INSERT OR REPLACE INTO diagnoses (run_id, trace_id, annotator, success, score, modes, mode_count, diagnosis, error) VALUES (?,?,?,?,?,?,?,?,?)",
    );
    const insFinding = this.db.prepare(
      "INSERT INTO findings (run_id, trace_id, annotator, mode, confidence, first_step, steps, agent, evidence, detector) VALUES (?,?,?,?,?,?,?,?,?,?)",
    );
    this.db.transaction(() => {
      for (const { trace, diagnosis: d } of items) {
        insTrace.run(runId, trace.id, trace.source.file, trace.source.format, trace.source.index, trace.model ?? null, trace.framework ?? null, trace.steps.length, contentHash(trace), JSON.stringify(trace));
        delDiag.run(runId, trace.id, d.annotator);
        const modeCount = d.modes ? countModes(d.modes) : null;
        insDiag.run(runId, trace.id, d.annotator, d.outcome.success === null ? null : d.outcome.success ? 1 : 0, d.outcome.score ?? null, d.modes ? JSON.stringify(d.modes) : null, modeCount, JSON.stringify(d), d.error ?? null);
        for (const f of d.findings)
          insFinding.run(runId, trace.id, d.annotator, f.mode, f.confidence, f.steps[0] ?? null, JSON.stringify(f.steps), f.agent ?? null, f.evidence, f.detector);
      }
    })();
  }

  runs(): RunInfo[] {
    return (this.db.prepare("SELECT * FROM runs ORDER BY updated_at DESC").all() as Record<string, unknown>[]).map(toRun);
  }

  run(id: string): RunInfo | undefined {
    const r = this.db.prepare("SELECT * FROM runs WHERE id = ? OR id LIKE ? ORDER BY updated_at DESC").get(id, `${id}%`) as Record<string, unknown> | undefined;
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

  cacheGet(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM cache WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  cachePut(key: string, value: string): void {
    this.db.prepare("INSERT OR REPLACE INTO cache (key, value, created_at) VALUES (?, ?, ?)").run(key, value, new Date().toISOString());
  }
}

function toRun(r: Record<string, unknown>): RunInfo {
  return {
    id: String(r.id),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    inputs: JSON.parse(String(r.inputs)) as string[],
    annotator: String(r.annotator),
    taxonomy: String(r.taxonomy),
    trace_count: Number(r.trace_count),
    diagnostics: JSON.parse(String(r.diagnostics)) as Record<string, number>,
  };
}
