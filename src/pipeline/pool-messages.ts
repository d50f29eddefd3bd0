import type { Diagnostic, FileSummary } from "../formats/index.js";
import type { TraceReplay } from "../trace/index.js";
import type { StoredTrace } from "../store/index.js";
import type { Diagnosis } from "../trace/index.js";

/** Main thread → worker: read this file (its index in the read order). */
export interface ToWorker {
  path: string;
  fi: number;
}

/** A trace, diagnosed, replayed and serialised by a worker; its id is still the one its format gave it. */
export interface WorkerTrace {
  type: "trace";
  stored: StoredTrace;
  diagnosis: Diagnosis;
  replay: TraceReplay;
}

export type WorkerEvent = { type: "diagnostic"; diagnostic: Diagnostic } | { type: "file"; file: FileSummary } | WorkerTrace;

/** Worker → main thread: the next event of file `fi`, or that the file is done (`error`: the worker failed on it). */
export type FromWorker = { fi: number; event: WorkerEvent; done?: undefined } | { fi: number; done: true; error?: string };
