import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ADAPTERS, findAdapter, TraceIds, walkFiles, type ReadOptions } from "../formats/index.js";
import { storedTrace, type StoredTrace } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import type { TraceReplay } from "../trace/index.js";
import { countReadEvent, type DiagnosedInputOptions, type RunCounts } from "./diagnosed.js";
import type { WorkerInit } from "./diagnose-worker.js";
import type { FromWorker, ToWorker, WorkerEvent } from "./pool-messages.js";

/** The default `--jobs`: one worker per core. */
export const defaultJobs = (): number => availableParallelism();

/** A trace as a parallel analysis yields it: serialised, diagnosed and replayed, its id assigned in read order. */
export interface PooledTrace {
  stored: StoredTrace;
  diagnosis: Diagnosis;
  replay: TraceReplay;
}

export interface PoolOptions extends DiagnosedInputOptions {
  jobs: number;
  guards: WorkerInit["guards"];
}

/** Files a worker may be given ahead of the one being written: bounds what waits in memory, keeps workers busy. */
const LOOKAHEAD_PER_WORKER = 3;

/**
 * The worker module beside this one: the build, or in a checkout run from its sources the .ts module, loaded through
 * tsx by a small bootstrap (a worker does not inherit the main thread's loader hooks).
 */
function workerEntry(): { url: URL | string; eval?: true } {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    const url = new URL("./diagnose-worker.ts", here).href;
    return { url: `import("tsx/esm/api").then((t) => { t.register(); return import(${JSON.stringify(url)}); });`, eval: true };
  }
  // dist/pipeline/pool.js, or the bundled CLI in dist/cli/
  for (const rel of ["./diagnose-worker.js", "../pipeline/diagnose-worker.js"]) {
    const url = new URL(rel, here);
    if (existsSync(fileURLToPath(url))) return { url };
  }
  throw new Error(`the analysis worker module is missing beside ${fileURLToPath(here)}; rebuild (npm run build)`);
}

/**
 * {@link diagnosedTraces} on `jobs` worker threads: the main thread walks the inputs and hands whole files to the
 * workers, which read, diagnose, replay and serialise their traces; results come back in read order (files in walk
 * order, traces in file order) with the same ids, diagnostics, counts and progress callbacks as a serial read.
 */
export async function* pooledTraces(paths: string[], opts: PoolOptions, counts: RunCounts): AsyncGenerator<PooledTrace> {
  if (opts.format && !findAdapter(opts.format)) throw new Error(`unknown format "${opts.format}"; known: ${ADAPTERS.map((a) => a.id).join(", ")}`);
  const walk = await walkFiles(paths);
  for (const d of walk.diagnostics) countReadEvent({ type: "diagnostic", diagnostic: d }, counts, opts);
  const files = walk.files;
  if (!files.length) return;
  const read: ReadOptions = { inputRoots: paths, ...(opts.format ? { format: opts.format } : {}), ...(opts.groundTruth ? { groundTruth: opts.groundTruth } : {}) };
  const init: WorkerInit = { read, outcome: opts.itbenchRule ? { itbenchRule: opts.itbenchRule } : {}, guards: opts.guards };
  const entry = workerEntry();
  const n = Math.max(1, Math.min(opts.jobs, files.length));

  const buffers = new Map<number, { events: WorkerEvent[]; done: boolean; error?: string }>();
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const idle: Worker[] = [];
  const workers: Worker[] = [];
  let next = 0; // next file to hand out
  let cursor = 0; // file being yielded
  const dispatch = () => {
    while (idle.length && next < files.length && next < cursor + n * LOOKAHEAD_PER_WORKER) {
      const w = idle.pop()!;
      buffers.set(next, { events: [], done: false });
      w.postMessage({ path: files[next]!, fi: next } satisfies ToWorker);
      next++;
    }
  };
  for (let i = 0; i < n; i++) {
    const w = new Worker(entry.url, { workerData: init, ...(entry.eval ? { eval: true } : {}) });
    w.on("message", (m: FromWorker) => {
      const b = buffers.get(m.fi)!;
      if (m.done) {
        b.done = true;
        b.error = m.error;
        idle.push(w);
        dispatch();
      } else b.events.push(m.event);
      notify();
    });
    w.on("error", (e) => {
      failure ??= e;
      notify();
    });
    w.on("exit", (code) => {
      if (code !== 0) failure ??= new Error(`an analysis worker exited with code ${code}`);
      notify();
    });
    workers.push(w);
    idle.push(w);
  }

  const ids = new TraceIds(paths);
  try {
    dispatch();
    opts.onFile?.(files[0]!, 0, files.length);
    for (; cursor < files.length; ) {
      const path = files[cursor]!;
      const b = buffers.get(cursor);
      if (failure) throw failure;
      if (b?.events.length) {
        const ev = b.events.shift()!;
        if (ev.type !== "trace") countReadEvent(ev, counts, opts);
        else {
          counts.traces++;
          yield withId(ev, ids.assign(ev.stored.trace_id, path));
        }
        continue;
      }
      if (b?.done) {
        if (b.error) throw new Error(`analysis worker failed on ${path}: ${b.error}`);
        buffers.delete(cursor);
        cursor++;
        if (cursor < files.length) opts.onFile?.(files[cursor]!, cursor, files.length);
        dispatch();
        continue;
      }
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Gives a worker's trace its id in the whole read; a changed id keeps the format's one as metadata.originalId. */
function withId(t: WorkerEvent & { type: "trace" }, id: string): PooledTrace {
  if (id === t.stored.trace_id) return { stored: t.stored, diagnosis: t.diagnosis, replay: t.replay };
  const trace = JSON.parse(t.stored.json) as Trace;
  trace.metadata.originalId = trace.id;
  trace.id = id;
  return { stored: storedTrace(trace), diagnosis: { ...t.diagnosis, trace_id: id }, replay: { ...t.replay, trace_id: id } };
}
