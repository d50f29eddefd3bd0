import { createWriteStream, writeFileSync, type WriteStream } from "node:fs";
import { basename } from "node:path";
import { summarize, writeReports, type ReportPaths, type RunSummary } from "../report/index.js";
import { openStore, type FaultlineStore, type RunStatus, type StoredTrace } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import type { RunCounts } from "./diagnosed.js";
import { OutputDir } from "./output-dir.js";

const BATCH = 200;

export interface RunWriterOptions {
  /** The output folder (findings.jsonl, summary.json, the reports), written atomically. */
  out: string;
  /** The store: a SQLite file, or a `postgres://` URL. */
  db: string;
  annotator: string;
  taxonomy: string;
  /** Once complete, delete the store's other runs of the same inputs and annotator. */
  replace?: boolean;
  /** The run's name (default: `<first input>-<YYYYMMDD-HHMMSS>`, made unique). */
  name?: string;
  /** An incomplete run to continue (its id) instead of starting a new one. */
  resume?: string;
  /**
   * Called once the run is stored, before its reports: e.g. the dashboard's overview computed now rather than on its
   * first view (the CLI passes the server's `storeOverviews`; the pipeline does not depend on the server).
   */
  onRunStored?: RunStoredHook;
}

/** Work done with a finished run's store, id and diagnoses (see {@link RunWriterOptions.onRunStored}). */
export type RunStoredHook = (store: FaultlineStore, runId: string, diagnoses: readonly Diagnosis[]) => Promise<void>;

/** Where a finished run's files are. */
export interface RunOutputs {
  findings: string;
  summary: string;
  reports: ReportPaths;
}

export interface CompletedRun {
  runId: string;
  status: RunStatus;
  /** Runs of the same inputs and annotator deleted by `replace`. */
  replaced: string[];
  summary: RunSummary;
  outputs: RunOutputs;
}

/** The inputs held no trace: nothing was stored and nothing written. */
export class NoTracesError extends Error {
  constructor(
    readonly paths: readonly string[],
    readonly counts: RunCounts,
    /** The run was interrupted before its first trace. */
    readonly interrupted = false,
  ) {
    super(
      interrupted
        ? "interrupted before the first trace: nothing stored, nothing written"
        : `no traces in ${paths.join(", ")} (${counts.files} file${counts.files === 1 ? "" : "s"} read, ${counts.errors} error${counts.errors === 1 ? "" : "s"}): nothing stored, nothing written`,
    );
  }
}

/**
 * Where a run's results go: findings.jsonl (one line per trace, streamed) and the store (traces, diagnoses and
 * findings, saved in batches); at the end summary.json and the reports. Shared by `analyze` and `judge`; also counts
 * annotated vs failed traces.
 *
 * - The run is a new one, named `<first input>-<YYYYMMDD-HHMMSS>`; it is written to the store as `incomplete` when its
 *   first trace arrives and marked complete at the end ({@link complete}), so a run killed midway shows as incomplete
 *   and never costs an earlier run. `replace` deletes the earlier runs of the same inputs once this one is complete.
 * - The output folder is staged and committed whole at the end ({@link OutputDir}).
 * - Nothing is created (no store, no run, no folder) before the first trace: an input without traces writes nothing.
 */
export class RunWriter {
  readonly diagnoses: Diagnosis[] = [];
  readonly output: OutputDir;
  private _store?: FaultlineStore;
  private _runId?: string;
  private out?: WriteStream;
  private batch: { trace: Trace | StoredTrace; diagnosis: Diagnosis }[] = [];
  /** Traces written in this process (a resumed run drops stored ones its inputs no longer hold). */
  private readonly seen = new Set<string>();

  constructor(
    readonly paths: string[],
    private readonly opts: RunWriterOptions,
  ) {
    this.output = new OutputDir(opts.out);
    this._runId = opts.resume;
  }

  /** The store (opened on first use). */
  get store(): FaultlineStore {
    this._store ??= openStore(this.opts.db);
    return this._store;
  }

  /** The run's id, once its first trace was written. */
  get runId(): string | undefined {
    return this._runId;
  }

  /** Where findings.jsonl will be once the run is complete. */
  get findingsPath(): string {
    return this.output.finalPath("findings.jsonl");
  }

  /**
   * Records a trace's final diagnosis (written to findings.jsonl) and any extra diagnoses kept only in the store. The
   * trace may come serialised already (a worker of a parallel analysis); `stored` marks one a resumed run kept.
   */
  async write(trace: Trace | StoredTrace, d: Diagnosis, counts: RunCounts, alsoStore: Diagnosis[] = [], opts: { stored?: boolean } = {}): Promise<void> {
    this._runId ??= await this.store.beginRun(this.paths, this.opts.annotator, this.opts.taxonomy, this.opts.name ? { name: this.opts.name } : {});
    this.out ??= createWriteStream(this.output.path("findings.jsonl"));
    if (d.modes) counts.annotated++;
    else counts.failed++;
    if (!this.out.write(`${JSON.stringify(d)}\n`)) await new Promise<void>((r) => this.out!.once("drain", () => r()));
    this.diagnoses.push(d);
    this.seen.add("id" in trace ? trace.id : trace.trace_id);
    if (opts.stored) return; // already in the resumed run's store, unchanged
    for (const extra of alsoStore) this.batch.push({ trace, diagnosis: extra });
    this.batch.push({ trace, diagnosis: d });
    if (this.batch.length >= BATCH) await this.flush();
  }

  private async flush(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    if (batch.length) await this.store.saveBatch(this._runId!, batch);
  }

  private async endStream(): Promise<void> {
    const out = this.out;
    if (out && !out.writableFinished) await new Promise<void>((r) => out.end(r));
  }

  /**
   * Ends the run: saves what is pending and the counts, marks the run `status` in the store (replacing earlier runs
   * when asked and complete), writes summary.json (with `status`) and the reports, and commits the output folder.
   * Throws {@link NoTracesError} when no trace was written (nothing is stored or written then).
   */
  async complete(counts: RunCounts, status: RunStatus, extra: Pick<RunSummary, "replay"> = {}): Promise<CompletedRun> {
    const runId = this._runId;
    // (a resumed run has its id from the start: it too needs a trace read in this process)
    if (runId === undefined || this.seen.size === 0) throw new NoTracesError(this.paths, counts, status === "incomplete");
    await this.endStream();
    await this.flush();
    if (this.opts.resume && status === "complete") await this.store.pruneTraces(runId, this.seen);
    const { replaced } = await this.store.finishRun(runId, counts, { status, replace: this.opts.replace });
    await this.opts.onRunStored?.(this.store, runId, this.diagnoses);
    const base = await summarize(runId, this.opts.annotator, counts, this.diagnoses);
    const { run_id, ...rest } = base;
    const summary: RunSummary = { run_id, status, ...rest, ...extra };
    writeFileSync(this.output.path("summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    const staged = writeReports(this.output.stagingDir, summary, this.diagnoses);
    this.output.commit();
    const reports = Object.fromEntries(Object.entries(staged).map(([k, p]) => [k, this.output.finalPath(basename(p))])) as unknown as ReportPaths;
    return { runId, status, replaced, summary, outputs: { findings: this.findingsPath, summary: this.output.finalPath("summary.json"), reports } };
  }

  /** Releases the store and removes whatever was staged but not committed (an error midway). */
  async close(): Promise<void> {
    await this.endStream();
    await this._store?.close();
    this.output.discard();
  }
}
