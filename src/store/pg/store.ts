import pg from "pg";
import { modeCount as countModes, type Diagnosis, type Trace } from "../../trace/index.js";
import { filterClauses, ftsWords, likeEscape, vectorCodes, type Facet, type RunFacets, type TracePage, type TraceQuery, type TraceSortKey } from "../queries.js";
import { RUN_COLUMNS, runIdFor, runName, storedTrace, toRun, type BeginRunOptions, type FinishRunOptions, type RunInfo, type StoredTrace, type TraceRow } from "../store.js";
import type { FaultlineStore, RunProgress, StoredTraceState } from "../types.js";
import { MIGRATIONS, PG_STORE_VERSION } from "./migrations.js";

/** The pg-boss schema and queue a submitted run's jobs live in (src/distributed owns the queue; its progress is read here). */
export const QUEUE_SCHEMA = "pgboss";
export const DIAGNOSE_QUEUE = "faultline-diagnose";
/** Jobs whose run asks for the LLM judge: a queue of their own, so a worker sizes their batches to the judge's concurrency. */
export const JUDGE_QUEUE = "faultline-judge";
const QUEUES = [DIAGNOSE_QUEUE, JUDGE_QUEUE];

/** `postgres://…` or `postgresql://…`: a PostgreSQL store rather than a SQLite file. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/** A postgres URL without its password, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparseable URL)";
  }
}

/** bigint (count) and numeric (sum) arrive as strings by default; every count here fits a double exactly. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 || oid === 1700 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Queries written with `@name` parameters (as the SQLite ones are) become PostgreSQL's `$n`. */
export function named(text: string, params: Record<string, unknown>): { text: string; values: unknown[] } {
  const order: string[] = [];
  const out = text.replace(/@([A-Za-z_]\w*)/g, (_m, name: string) => {
    if (!(name in params)) throw new Error(`query parameter @${name} has no value`);
    let i = order.indexOf(name);
    if (i < 0) i = order.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text: out, values: order.map((n) => params[n]) };
}

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

type Queryable = pg.Pool | pg.PoolClient;

/**
 * The PostgreSQL store: the same runs, traces, diagnoses, findings and call cache as the SQLite store, shared by any
 * number of processes on any number of machines. Connects on first use and applies pending migrations then.
 * SQLite's orderings are kept where PostgreSQL's differ (NULLs sort first ascending; text compares bytewise).
 */
export class PgStore implements FaultlineStore {
  readonly kind = "postgres" as const;
  readonly path: string;
  readonly pool: pg.Pool;
  private ready?: Promise<void>;

  constructor(
    readonly url: string,
    opts: { max?: number } = {},
  ) {
    this.path = displayUrl(url);
    this.pool = new pg.Pool({ connectionString: url, max: opts.max ?? 4, types });
    // an idle client losing its server must not crash the process; the next query reports the problem
    this.pool.on("error", () => {});
  }

  /** Connects and migrates (once). Every method awaits it; call it to fail early with a clear message. */
  init(): Promise<void> {
    this.ready ??= this.migrate().catch((e: Error) => {
      this.ready = undefined;
      throw new Error(`PostgreSQL store ${this.path}: ${e.message}`);
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    await this.tx(async (c) => {
      // one migrator at a time across every process sharing the database
      await c.query("SELECT pg_advisory_xact_lock(hashtext('faultline-migrations'))");
      await c.query("CREATE TABLE IF NOT EXISTS faultline_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
      const done = new Set((await c.query<{ version: number }>("SELECT version FROM faultline_migrations")).rows.map((r) => r.version));
      const newest = Math.max(0, ...done);
      if (newest > PG_STORE_VERSION) throw new Error(`store version ${newest} is newer than this faultline understands (${PG_STORE_VERSION})`);
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        await c.query(m.sql);
        await c.query("INSERT INTO faultline_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      }
    }, false);
  }

  /** Runs `fn` in a transaction on one connection. */
  async tx<T>(fn: (c: pg.PoolClient) => Promise<T>, init = true): Promise<T> {
    if (init) await this.init();
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const r = await fn(c);
      await c.query("COMMIT");
      return r;
    } catch (e) {
      await c.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      c.release();
    }
  }

  /** A query with `@name` parameters. */
  async q<R extends pg.QueryResultRow>(text: string, params: Record<string, unknown> = {}, on: Queryable = this.pool): Promise<R[]> {
    if (on === this.pool) await this.init();
    return (await on.query<R>(named(text, params))).rows;
  }

  async beginRun(inputs: string[], annotator: string, taxonomy: string, opts: BeginRunOptions = {}): Promise<string> {
    const now = opts.now ?? new Date();
    const base = opts.name ?? runName(inputs, now);
    const at = now.toISOString();
    for (let n = 1; ; n++) {
      const id = n === 1 ? base : `${base}-${n}`;
      const rows = await this.q<{ id: string }>(
        "INSERT INTO runs (id, created_at, updated_at, inputs, annotator, taxonomy, status, input_key) VALUES (@id, @at, @at, @inputs, @annotator, @taxonomy, 'incomplete', @key) ON CONFLICT (id) DO NOTHING RETURNING id",
        { id, at, inputs: JSON.stringify(inputs), annotator, taxonomy, key: runIdFor(inputs, annotator) },
      );
      if (rows.length) return id;
    }
  }

  async finishRun(runId: string, diagnostics: Record<string, number>, opts: FinishRunOptions = {}): Promise<{ replaced: string[] }> {
    const status = opts.status ?? "complete";
    return this.tx(async (c) => {
      await this.q(
        "UPDATE runs SET trace_count = (SELECT count(*) FROM traces WHERE run_id = @id), diagnostics = @diag, updated_at = @at, status = @status WHERE id = @id",
        { id: runId, diag: JSON.stringify(diagnostics), at: new Date().toISOString(), status },
        c,
      );
      if (!opts.replace || status !== "complete") return { replaced: [] };
      const [own] = await this.q<{ input_key: string | null; annotator: string }>("SELECT input_key, annotator FROM runs WHERE id = @id", { id: runId }, c);
      if (!own?.input_key) return { replaced: [] };
      const others = (
        await this.q<{ id: string }>("SELECT id FROM runs WHERE input_key = @k AND annotator = @a AND id != @id ORDER BY created_at", { k: own.input_key, a: own.annotator, id: runId }, c)
      ).map((r) => r.id);
      if (others.length) await c.query("DELETE FROM runs WHERE id = ANY($1)", [others]);
      return { replaced: others };
    });
  }

  async deleteRun(runId: string): Promise<void> {
    await this.q("DELETE FROM runs WHERE id = @id", { id: runId });
  }

  async saveBatch(runId: string, items: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[]): Promise<void> {
    if (!items.length) return;
    await this.tx((c) => this.saveBatchOn(c, runId, items));
  }

  /** saveBatch inside a caller's transaction. */
  async saveBatchOn(c: pg.PoolClient, runId: string, items: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[]): Promise<void> {
    await this.saveTracesOn(c, runId, items.map((i) => i.trace));
    for (const { trace, diagnosis: d } of items) await this.saveDiagnosisOn(c, runId, "json" in trace ? trace.trace_id : trace.id, d);
  }

  /**
   * Traces without diagnoses (a submitted run's, diagnosed later by the workers); a trace saved again is replaced. A
   * trace may come serialised already ({@link storedTrace}, a worker of a parallel analysis): its row is stored as is.
   */
  async saveTracesOn(c: pg.PoolClient, runId: string, traces: (Trace | StoredTrace)[]): Promise<void> {
    const seen = new Set<string>();
    for (const trace of traces) {
      const t = "json" in trace ? trace : storedTrace(trace);
      if (seen.has(t.trace_id)) continue;
      seen.add(t.trace_id);
      await c.query(
        `INSERT INTO traces (run_id, trace_id, file, format, idx, model, framework, steps, content_hash, trace) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
         ON CONFLICT (run_id, trace_id) DO UPDATE SET file = EXCLUDED.file, format = EXCLUDED.format, idx = EXCLUDED.idx, model = EXCLUDED.model,
           framework = EXCLUDED.framework, steps = EXCLUDED.steps, content_hash = EXCLUDED.content_hash, trace = EXCLUDED.trace`,
        [runId, t.trace_id, t.file, t.format, t.idx, t.model, t.framework, t.steps, t.content_hash, t.json],
      );
    }
  }

  /** Diagnoses of traces already stored, in one transaction (a worker's result for one job). */
  async saveDiagnoses(runId: string, items: { traceId: string; diagnosis: Diagnosis }[]): Promise<void> {
    await this.tx(async (c) => {
      for (const { traceId, diagnosis } of items) await this.saveDiagnosisOn(c, runId, traceId, diagnosis);
    });
  }

  /** Records what the workers are to do for a submitted run (`spec`, JSON) and, once every job is enqueued, `sealed`. */
  async setWorkSpec(runId: string, spec: unknown, submitted = 0, sealed = false, on?: pg.PoolClient): Promise<void> {
    await this.q(
      "INSERT INTO distributed_runs (run_id, spec, submitted, sealed) VALUES (@run, @spec, @n, @sealed) ON CONFLICT (run_id) DO UPDATE SET spec = EXCLUDED.spec, submitted = EXCLUDED.submitted, sealed = EXCLUDED.sealed",
      { run: runId, spec: JSON.stringify(spec), n: submitted, sealed },
      on,
    );
  }

  async workSpec(runId: string): Promise<{ spec: unknown; submitted: number; sealed: boolean } | undefined> {
    const [r] = await this.q<{ spec: string; submitted: number; sealed: boolean }>("SELECT spec, submitted, sealed FROM distributed_runs WHERE run_id = @run", { run: runId });
    return r ? { spec: JSON.parse(r.spec), submitted: r.submitted, sealed: r.sealed } : undefined;
  }

  /** A job's trace, and whether it already has a diagnosis by `annotator` (one round trip). */
  async traceForJob(runId: string, traceId: string, annotator: string): Promise<{ trace?: Trace; done: boolean }> {
    const [r] = await this.q<{ trace: string | null; done: boolean }>(
      "SELECT (SELECT trace FROM traces WHERE run_id = @run AND trace_id = @id) AS trace, EXISTS (SELECT 1 FROM diagnoses WHERE run_id = @run AND trace_id = @id AND annotator = @a) AS done",
      { run: runId, id: traceId, a: annotator },
    );
    return { trace: r?.trace ? (JSON.parse(r.trace) as Trace) : undefined, done: r?.done ?? false };
  }

  /** The traces of a batch of jobs, and whether each already has a diagnosis by its annotator (one round trip). */
  async tracesForJobs(jobs: { run: string; trace: string; annotator: string }[]): Promise<{ trace?: Trace; done: boolean }[]> {
    if (!jobs.length) return [];
    const rows = await this.q<{ i: number; trace: string | null; done: boolean }>(
      `SELECT j.i::int AS i, t.trace, EXISTS (SELECT 1 FROM diagnoses d WHERE d.run_id = j.run AND d.trace_id = j.trace AND d.annotator = j.annotator) AS done
       FROM unnest(@runs::text[], @traces::text[], @annotators::text[]) WITH ORDINALITY AS j(run, trace, annotator, i)
       LEFT JOIN traces t ON t.run_id = j.run AND t.trace_id = j.trace`,
      { runs: jobs.map((j) => j.run), traces: jobs.map((j) => j.trace), annotators: jobs.map((j) => j.annotator) },
    );
    const out: { trace?: Trace; done: boolean }[] = jobs.map(() => ({ done: false }));
    for (const r of rows) out[r.i - 1] = { trace: r.trace ? (JSON.parse(r.trace) as Trace) : undefined, done: r.done };
    return out;
  }

  /** Diagnoses of stored traces, of any runs, in one transaction of three statements (a worker's batch of jobs). */
  async saveDiagnosesMany(items: { run: string; traceId: string; diagnosis: Diagnosis }[]): Promise<void> {
    if (!items.length) return;
    await this.tx(async (c) => {
      const col = <T>(f: (i: (typeof items)[number]) => T) => items.map(f);
      await c.query("DELETE FROM findings f USING unnest($1::text[], $2::text[], $3::text[]) AS k(run, trace, annotator) WHERE f.run_id = k.run AND f.trace_id = k.trace AND f.annotator = k.annotator", [
        col((i) => i.run),
        col((i) => i.traceId),
        col((i) => i.diagnosis.annotator),
      ]);
      await c.query(
        `INSERT INTO diagnoses (run_id, trace_id, annotator, success, score, modes, mode_count, diagnosis, error)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::smallint[], $5::float8[], $6::text[], $7::int[], $8::text[], $9::text[])
         ON CONFLICT (run_id, trace_id, annotator) DO UPDATE SET success = EXCLUDED.success, score = EXCLUDED.score, modes = EXCLUDED.modes,
           mode_count = EXCLUDED.mode_count, diagnosis = EXCLUDED.diagnosis, error = EXCLUDED.error`,
        [
          col((i) => i.run),
          col((i) => i.traceId),
          col((i) => i.diagnosis.annotator),
          col((i) => (i.diagnosis.outcome.success === null ? null : i.diagnosis.outcome.success ? 1 : 0)),
          col((i) => i.diagnosis.outcome.score ?? null),
          col((i) => (i.diagnosis.modes ? JSON.stringify(i.diagnosis.modes) : null)),
          col((i) => (i.diagnosis.modes ? countModes(i.diagnosis.modes) : null)),
          col((i) => JSON.stringify(i.diagnosis)),
          col((i) => i.diagnosis.error ?? null),
        ],
      );
      const fs = items.flatMap((i) => i.diagnosis.findings.map((f) => ({ i, f })));
      if (fs.length)
        await c.query(
          `INSERT INTO findings (run_id, trace_id, annotator, mode, confidence, first_step, steps, agent, evidence, detector)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::int[], $7::text[], $8::text[], $9::text[], $10::text[])`,
          [
            fs.map((x) => x.i.run),
            fs.map((x) => x.i.traceId),
            fs.map((x) => x.i.diagnosis.annotator),
            fs.map((x) => x.f.mode),
            fs.map((x) => x.f.confidence),
            fs.map((x) => x.f.steps[0] ?? null),
            fs.map((x) => JSON.stringify(x.f.steps)),
            fs.map((x) => x.f.agent ?? null),
            fs.map((x) => x.f.evidence),
            fs.map((x) => x.f.detector),
          ],
        );
    });
  }

  /** Whether a trace already has a diagnosis by an annotator (a job whose worker died after storing it). */
  async hasDiagnosis(runId: string, traceId: string, annotator: string): Promise<boolean> {
    return (await this.q("SELECT 1 FROM diagnoses WHERE run_id = @run AND trace_id = @id AND annotator = @a", { run: runId, id: traceId, a: annotator })).length > 0;
  }

  /** One diagnosis and its findings, replacing an earlier one of the same (run, trace, annotator): saving twice is saving once. */
  async saveDiagnosisOn(c: pg.PoolClient, runId: string, traceId: string, d: Diagnosis): Promise<void> {
    await c.query("DELETE FROM findings WHERE run_id = $1 AND trace_id = $2 AND annotator = $3", [runId, traceId, d.annotator]);
    await c.query(
      `INSERT INTO diagnoses (run_id, trace_id, annotator, success, score, modes, mode_count, diagnosis, error) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)
       ON CONFLICT (run_id, trace_id, annotator) DO UPDATE SET success = EXCLUDED.success, score = EXCLUDED.score, modes = EXCLUDED.modes,
         mode_count = EXCLUDED.mode_count, diagnosis = EXCLUDED.diagnosis, error = EXCLUDED.error`,
      [
        runId,
        traceId,
        d.annotator,
        d.outcome.success === null ? null : d.outcome.success ? 1 : 0,
        d.outcome.score ?? null,
        d.modes ? JSON.stringify(d.modes) : null,
        d.modes ? countModes(d.modes) : null,
        JSON.stringify(d),
        d.error ?? null,
      ],
    );
    if (!d.findings.length) return;
    const values: unknown[] = [];
    const rows = d.findings.map((f, i) => {
      values.push(runId, traceId, d.annotator, f.mode, f.confidence, f.steps[0] ?? null, JSON.stringify(f.steps), f.agent ?? null, f.evidence, f.detector);
      return `(${Array.from({ length: 10 }, (_, k) => `$${i * 10 + k + 1}`).join(",")})`;
    });
    await c.query(`INSERT INTO findings (run_id, trace_id, annotator, mode, confidence, first_step, steps, agent, evidence, detector) VALUES ${rows.join(",")}`, values);
  }

  async resumableRun(inputs: string[], annotator: string): Promise<string | undefined> {
    // seq: the order runs were begun in (created_at ties within a millisecond), as SQLite's rowid
    const [r] = await this.q<{ id: string; status: string }>("SELECT id, status FROM runs WHERE input_key = @k AND annotator = @a ORDER BY created_at DESC, seq DESC LIMIT 1", {
      k: runIdFor(inputs, annotator),
      a: annotator,
    });
    return r?.status === "incomplete" ? r.id : undefined;
  }

  async storedTraces(runId: string, annotator: string): Promise<Map<string, StoredTraceState>> {
    const rows = await this.q<{ trace_id: string; content_hash: string; diagnosis: string }>(
      "SELECT t.trace_id, t.content_hash, d.diagnosis FROM traces t JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = @a WHERE t.run_id = @run",
      { run: runId, a: annotator },
    );
    return new Map(rows.map((r) => [r.trace_id, { hash: r.content_hash, diagnosis: JSON.parse(r.diagnosis) as Diagnosis }]));
  }

  async pruneTraces(runId: string, keep: ReadonlySet<string>): Promise<number> {
    return this.tx(async (c) => {
      const gone = (await c.query<{ trace_id: string }>("SELECT trace_id FROM traces WHERE run_id = $1", [runId])).rows.map((r) => r.trace_id).filter((id) => !keep.has(id));
      if (!gone.length) return 0;
      for (const table of ["findings", "diagnoses", "traces"]) await c.query(`DELETE FROM ${table} WHERE run_id = $1 AND trace_id = ANY($2)`, [runId, gone]);
      return gone.length;
    });
  }

  async aggregate(runId: string, annotator: string, kind: string, version: string): Promise<string | undefined> {
    const [r] = await this.q<{ value: string }>("SELECT value FROM aggregates WHERE run_id = @run AND annotator = @a AND kind = @kind AND version = @v", {
      run: runId,
      a: annotator,
      kind,
      v: version,
    });
    return r?.value;
  }

  async putAggregate(runId: string, annotator: string, kind: string, version: string, value: string): Promise<void> {
    await this.q(
      "INSERT INTO aggregates (run_id, annotator, kind, version, value) VALUES (@run, @a, @kind, @v, @value) ON CONFLICT (run_id, annotator, kind) DO UPDATE SET version = EXCLUDED.version, value = EXCLUDED.value",
      { run: runId, a: annotator, kind, v: version, value },
    );
  }

  async runs(): Promise<RunInfo[]> {
    return (await this.q(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY updated_at DESC, id DESC`)).map(toRun);
  }

  async run(id: string): Promise<RunInfo | undefined> {
    const r =
      (await this.q(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = @id`, { id }))[0] ??
      (await this.q(`SELECT ${RUN_COLUMNS} FROM runs WHERE substr(id, 1, length(@p)) = @p ORDER BY updated_at DESC, id DESC LIMIT 1`, { p: id }))[0];
    return r ? toRun(r) : undefined;
  }

  async diagnoses(runId: string, annotator?: string): Promise<Diagnosis[]> {
    const rows = annotator
      ? await this.q<{ diagnosis: string }>("SELECT diagnosis FROM diagnoses WHERE run_id = @run AND annotator = @a", { run: runId, a: annotator })
      : await this.q<{ diagnosis: string }>("SELECT diagnosis FROM diagnoses WHERE run_id = @run", { run: runId });
    return rows.map((r) => JSON.parse(r.diagnosis) as Diagnosis);
  }

  async trace(runId: string, traceId: string): Promise<Trace | undefined> {
    const [r] = await this.q<{ trace: string }>("SELECT trace FROM traces WHERE run_id = @run AND trace_id = @id", { run: runId, id: traceId });
    return r ? (JSON.parse(r.trace) as Trace) : undefined;
  }

  async traceRows(runId: string): Promise<TraceRow[]> {
    return this.q<TraceRow>("SELECT trace_id, file, format, idx, model, framework, steps FROM traces WHERE run_id = @run ORDER BY file, idx", { run: runId });
  }

  async cacheGet(key: string): Promise<string | undefined> {
    const [r] = await this.q<{ value: string }>("SELECT value FROM cache WHERE key = @key", { key });
    return r?.value;
  }

  async cachePut(key: string, value: string): Promise<void> {
    await this.q("INSERT INTO cache (key, value, created_at) VALUES (@key, @value, @at) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, created_at = EXCLUDED.created_at", {
      key,
      value,
      at: new Date().toISOString(),
    });
  }

  async listTraces(runId: string, q: TraceQuery): Promise<TracePage> {
    const limit = Math.max(1, Math.min(500, Math.floor(q.limit ?? 50)));
    const offset = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.floor(q.offset ?? 0)));
    const { sql: where, params } = whereFor(runId, q);
    const dir = q.dir === "desc" ? "DESC" : "ASC";
    // SQLite sorts NULL before everything: the same here
    const nulls = dir === "ASC" ? "NULLS FIRST" : "NULLS LAST";
    const order = SORT_SQL[q.sort ?? "file"]
      .split(", ")
      .map((c) => `${c} ${dir} ${nulls}`)
      .join(", ");
    const rows = await this.q<{
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
    }>(
      `SELECT t.trace_id, t.file, t.format, t.model, t.framework, t.steps, d.success, d.score, d.mode_count, d.modes, d.error, count(*) OVER () AS total ${FROM} WHERE ${where} ORDER BY ${order}, t.trace_id ${dir} LIMIT @limit OFFSET @offset`,
      { ...params, limit, offset },
    );
    const total = rows[0]?.total ?? (offset === 0 ? 0 : (await this.q<{ n: number }>(`SELECT count(*) AS n ${FROM} WHERE ${where}`, params))[0]!.n);
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

  async runFacets(runId: string, annotator: string): Promise<RunFacets> {
    const p = { run: runId, a: annotator };
    const outcomes = { success: 0, failure: 0, unknown: 0 };
    const rows = await this.q<{ s: number | null; n: number }>(
      "SELECT d.success AS s, count(*) AS n FROM traces t LEFT JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = @a WHERE t.run_id = @run GROUP BY d.success",
      p,
    );
    for (const r of rows) outcomes[r.s === 1 ? "success" : r.s === 0 ? "failure" : "unknown"] += r.n;
    const [models, formats, modes, annotators, coverage] = await Promise.all([
      this.q<Facet>("SELECT model AS value, count(*) AS count FROM traces WHERE run_id = @run GROUP BY model ORDER BY count DESC, model NULLS FIRST", p),
      this.q<Facet>("SELECT format AS value, count(*) AS count FROM traces WHERE run_id = @run GROUP BY format ORDER BY count DESC, format", p),
      this.q<Facet>("SELECT mode AS value, count(DISTINCT trace_id) AS count FROM findings WHERE run_id = @run AND annotator = @a GROUP BY mode ORDER BY mode", p),
      this.q<Facet>("SELECT annotator AS value, count(*) AS count FROM diagnoses WHERE run_id = @run GROUP BY annotator ORDER BY annotator", p),
      this.modeCoverage(runId, annotator),
    ]);
    return { models, formats, outcomes, modes, annotators, coverage };
  }

  async modeCoverage(runId: string, annotator: string): Promise<RunFacets["coverage"]> {
    const p = { run: runId, a: annotator };
    const [{ n: annotated }] = (await this.q<{ n: number }>("SELECT count(*) AS n FROM diagnoses WHERE run_id = @run AND annotator = @a AND modes IS NOT NULL", p)) as [{ n: number }];
    const rows = await this.q<{ code: string; measured: number }>(
      "SELECT j.key AS code, sum(CASE WHEN jsonb_typeof(j.value) = 'null' THEN 0 ELSE 1 END) AS measured FROM diagnoses d, jsonb_each(d.modes::jsonb) j WHERE d.run_id = @run AND d.annotator = @a AND d.modes IS NOT NULL GROUP BY j.key",
      p,
    );
    return rows.map((r) => ({ code: r.code, measured: r.measured, annotated })).sort((a, b) => a.code.localeCompare(b.code, undefined, { numeric: true }));
  }

  async annotatorsOf(runId: string): Promise<string[]> {
    return (await this.q<{ annotator: string }>("SELECT DISTINCT annotator FROM diagnoses WHERE run_id = @run ORDER BY annotator", { run: runId })).map((r) => r.annotator);
  }

  async traceDiagnosis(runId: string, traceId: string, annotator: string): Promise<Diagnosis | undefined> {
    const [r] = await this.q<{ diagnosis: string }>("SELECT diagnosis FROM diagnoses WHERE run_id = @run AND trace_id = @id AND annotator = @a", { run: runId, id: traceId, a: annotator });
    return r ? (JSON.parse(r.diagnosis) as Diagnosis) : undefined;
  }

  async runsWithTrace(traceId: string): Promise<string[]> {
    return (
      await this.q<{ id: string }>("SELECT t.run_id AS id FROM traces t JOIN runs r ON r.id = t.run_id WHERE t.trace_id = @id ORDER BY r.updated_at DESC", { id: traceId })
    ).map((r) => r.id);
  }

  /**
   * A submitted run's progress: its jobs in the queue (pg-boss's job table, `QUEUE_SCHEMA`.job, queue `DIAGNOSE_QUEUE`)
   * by state, and its traces diagnosed by the run's annotator as done. Undefined for a run that was not submitted.
   */
  async progress(runId: string): Promise<RunProgress | undefined> {
    const [spec] = await this.q<{ annotator: string }>("SELECT r.annotator FROM distributed_runs w JOIN runs r ON r.id = w.run_id WHERE w.run_id = @run", { run: runId });
    if (!spec) return undefined;
    const [{ n: done }] = (await this.q<{ n: number }>("SELECT count(*) AS n FROM diagnoses WHERE run_id = @run AND annotator = @a", { run: runId, a: spec.annotator })) as [{ n: number }];
    const p: RunProgress = { queued: 0, running: 0, done, failed: 0 };
    const [exists] = await this.q<{ t: string | null }>("SELECT to_regclass(@t)::text AS t", { t: `${QUEUE_SCHEMA}.job` });
    if (!exists?.t) return p;
    const rows = await this.q<{ state: string; n: number }>(
      `SELECT state::text AS state, count(*) AS n FROM ${QUEUE_SCHEMA}.job WHERE name = ANY(@q) AND data->>'run' = @run AND state IN ('created', 'retry', 'active', 'failed') GROUP BY state`,
      { q: QUEUES, run: runId },
    );
    for (const r of rows) {
      if (r.state === "active") p.running += r.n;
      else if (r.state === "failed") p.failed += r.n;
      else p.queued += r.n;
    }
    return p;
  }

  /**
   * Stores spans received live (`faultline collect`), each as a one-span OTLP/JSON request, and keeps its trace open
   * for more. A span of a trace already handed to the workers is refused (returned), never silently merged.
   */
  async collectSpans(spans: { traceId: string; spanId: string; root: boolean; request: string }[]): Promise<{ refused: number; refusedTraces: string[] }> {
    if (!spans.length) return { refused: 0, refusedTraces: [] };
    return this.tx(async (c) => {
      const ids = [...new Set(spans.map((s) => s.traceId))].sort();
      // one row lock per trace, in a fixed order (no deadlock between concurrent requests)
      await c.query("INSERT INTO collected_traces (trace_id) SELECT unnest($1::text[]) ORDER BY 1 ON CONFLICT (trace_id) DO NOTHING", [ids]);
      const closed = new Set(
        (await c.query<{ trace_id: string }>("SELECT trace_id FROM collected_traces WHERE trace_id = ANY($1) AND state <> 'open' ORDER BY trace_id FOR UPDATE", [ids])).rows.map((r) => r.trace_id),
      );
      const kept = spans.filter((s) => !closed.has(s.traceId));
      if (kept.length) {
        await c.query(
          `INSERT INTO collected_spans (trace_id, span_id, request) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
           ON CONFLICT (trace_id, span_id) DO UPDATE SET request = EXCLUDED.request`,
          [kept.map((s) => s.traceId), kept.map((s) => s.spanId), kept.map((s) => s.request)],
        );
        const per = new Map<string, { n: number; root: boolean }>();
        for (const s of kept) {
          const e = per.get(s.traceId) ?? { n: 0, root: false };
          e.n++;
          e.root ||= s.root;
          per.set(s.traceId, e);
        }
        const keys = [...per.keys()];
        await c.query(
          `UPDATE collected_traces t SET last_seen = now(), spans = t.spans + u.n, root_ended = t.root_ended OR u.root
           FROM unnest($1::text[], $2::int[], $3::bool[]) AS u(trace_id, n, root) WHERE t.trace_id = u.trace_id`,
          [keys, keys.map((k) => per.get(k)!.n), keys.map((k) => per.get(k)!.root)],
        );
      }
      const refused = spans.length - kept.length;
      return { refused, refusedTraces: [...closed] };
    });
  }

  /**
   * Claims complete collected traces inside the caller's transaction — root span ended and nothing new for
   * `idleSeconds`, or first seen more than `maxAgeSeconds` ago — marking them submitted to `runId`; removes and returns
   * their spans. SKIP LOCKED: several collectors sweep without claiming a trace twice.
   */
  async claimCollectedOn(c: pg.PoolClient, runId: string, o: { idleSeconds: number; maxAgeSeconds: number; limit: number }): Promise<Map<string, string[]>> {
    const claimed = (
      await c.query<{ trace_id: string }>(
        `UPDATE collected_traces SET state = 'submitted', run_id = $1 WHERE trace_id IN (
           SELECT trace_id FROM collected_traces WHERE state = 'open'
             AND ((root_ended AND last_seen < now() - make_interval(secs => $2)) OR first_seen < now() - make_interval(secs => $3))
           ORDER BY last_seen LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING trace_id`,
        [runId, o.idleSeconds, o.maxAgeSeconds, o.limit],
      )
    ).rows.map((r) => r.trace_id);
    const out = new Map<string, string[]>(claimed.map((id) => [id, []]));
    if (!claimed.length) return out;
    // the spans leave with their trace (which the caller stores in the run): a collected trace is kept once, not twice
    for (const r of (await c.query<{ trace_id: string; span_id: string; request: string }>("DELETE FROM collected_spans WHERE trace_id = ANY($1) RETURNING trace_id, span_id, request", [claimed])).rows.sort((a, b) =>
      a.trace_id === b.trace_id ? (a.span_id < b.span_id ? -1 : 1) : a.trace_id < b.trace_id ? -1 : 1,
    ))
      out.get(r.trace_id)!.push(r.request);
    return out;
  }

  /** Collected traces by state (open: still collecting; submitted: handed to the workers). */
  async collectedCounts(): Promise<{ open: number; submitted: number; spans: number }> {
    const [r] = await this.q<{ open: number; submitted: number; spans: number }>(
      "SELECT count(*) FILTER (WHERE state = 'open') AS open, count(*) FILTER (WHERE state = 'submitted') AS submitted, coalesce(sum(spans), 0) AS spans FROM collected_traces",
    );
    return r!;
  }

  /** Jobs of the diagnose queue not yet finished (queued, waiting to retry, or active): 0 when the workers may rest. */
  async queueBacklog(): Promise<number> {
    const [exists] = await this.q<{ t: string | null }>("SELECT to_regclass(@t)::text AS t", { t: `${QUEUE_SCHEMA}.job` });
    if (!exists?.t) return 0;
    const [r] = await this.q<{ n: number }>(`SELECT count(*) AS n FROM ${QUEUE_SCHEMA}.job WHERE name = ANY(@q) AND state IN ('created', 'retry', 'active')`, { q: QUEUES });
    return r!.n;
  }

  /** A run's traces, those diagnosed by `annotator`, and of those the ones annotated (a failure vector, not an error). */
  async diagnosedTally(runId: string, annotator: string): Promise<{ traces: number; diagnosed: number; annotated: number }> {
    const [r] = await this.q<{ traces: number; diagnosed: number; annotated: number }>(
      "SELECT (SELECT count(*) FROM traces WHERE run_id = @run) AS traces, count(*) AS diagnosed, count(modes) AS annotated FROM diagnoses WHERE run_id = @run AND annotator = @a",
      { run: runId, a: annotator },
    );
    return r!;
  }

  /** A run's failed jobs with their errors (poison jobs, after every retry). */
  async failedJobs(runId: string): Promise<{ trace: string; error: string; retries: number }[]> {
    const [exists] = await this.q<{ t: string | null }>("SELECT to_regclass(@t)::text AS t", { t: `${QUEUE_SCHEMA}.job` });
    if (!exists?.t) return [];
    return this.q<{ trace: string; error: string; retries: number }>(
      `SELECT data->>'trace' AS trace, coalesce(output->>'message', output::text, '') AS error, retry_count AS retries FROM ${QUEUE_SCHEMA}.job WHERE name = ANY(@q) AND data->>'run' = @run AND state = 'failed' ORDER BY data->>'trace'`,
      { q: QUEUES, run: runId },
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** What SQLite's word index holds of a trace row (src/store/schema.sql.ts, traceTextOf). */
const TRACE_TEXT = "(t.trace_id || chr(10) || t.file || chr(10) || coalesce(t.model, '') || chr(10) || t.trace)";

const FROM = "FROM traces t LEFT JOIN diagnoses d ON d.run_id = t.run_id AND d.trace_id = t.trace_id AND d.annotator = @annotator";

function whereFor(runId: string, q: TraceQuery): { sql: string; params: Record<string, unknown> } {
  const { parts, params } = filterClauses(runId, q);
  const text = q.q?.trim();
  if (text) {
    // ILIKE: case-insensitive, as SQLite's LIKE is
    params.q = `%${likeEscape(text)}%`;
    const inTrace = "(t.trace_id ILIKE @q ESCAPE '\\' OR t.file ILIKE @q ESCAPE '\\' OR t.model ILIKE @q ESCAPE '\\' OR t.trace ILIKE @q ESCAPE '\\')";
    const inEvidence = "EXISTS (SELECT 1 FROM findings f WHERE f.run_id = t.run_id AND f.trace_id = t.trace_id AND f.annotator = @annotator AND f.evidence ILIKE @q ESCAPE '\\')";
    const words = ftsWords(text);
    if (words) {
      // SQLite's word index (FTS5, unicode61) finds traces holding a word that begins with each of the query's words:
      // here the same as a case-insensitive regular expression per word — the word after a non-alphanumeric character
      // (or at the start) — over the same text (id, file, model, canonical JSON). Evidence is matched as a substring.
      const each = words.map((w, i) => {
        params[`w${i}`] = `(^|[^[:alnum:]])${w}`;
        return `${TRACE_TEXT} ~* @w${i}`;
      });
      parts.push(`(${inEvidence} OR (${each.join(" AND ")}))`);
    } else parts.push(`(${inEvidence} OR ${inTrace})`);
  }
  return { sql: parts.join(" AND "), params };
}

