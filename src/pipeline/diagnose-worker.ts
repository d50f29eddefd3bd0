/**
 * A worker of a parallel analysis (see pool.ts): reads the files it is sent, one at a time, and for each trace runs
 * the rules diagnosis and the guard replay and serialises the trace for the store. Trace ids are left as the format
 * gives them: the main thread assigns ids in read order. Everything posted back is plain data.
 */
import { parentPort, workerData } from "node:worker_threads";
import { readFile, type ReadEvent, type ReadOptions } from "../formats/index.js";
import type { GuardConfig } from "../guards/index.js";
import { ReplayCollector } from "./replay.js";
import type { OutcomeOptions } from "../outcome/index.js";
import { storedTrace } from "../store/index.js";
import { diagnoseTrace } from "./diagnose.js";
import type { FromWorker, ToWorker } from "./pool-messages.js";

export interface WorkerInit {
  /** Serialisable read options, the same for every file of the read (`inputRoots` included). */
  read: Pick<ReadOptions, "format" | "groundTruth" | "inputRoots">;
  outcome: OutcomeOptions;
  guards: string | GuardConfig;
}

const init = workerData as WorkerInit;
// one options object for the whole read: adapters key per-read caches (the ground-truth index) on it
const readOptions: ReadOptions = { ...init.read };
const replay = new ReplayCollector(init.guards);
const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);

async function readOne(path: string, fi: number): Promise<void> {
  for await (const ev of readFile(path, readOptions, (id) => id) as AsyncGenerator<ReadEvent>) {
    if (ev.type !== "trace") {
      post({ fi, event: ev });
      continue;
    }
    const trace = ev.trace;
    const diagnosis = await diagnoseTrace(trace, init.outcome);
    // a trace whose detectors all failed is replayed with the detectors run again: their failures show in the replay
    const r = replay.replay(trace, diagnosis.modes === null && trace.steps.length > 0 ? undefined : diagnosis.findings);
    post({ fi, event: { type: "trace", stored: storedTrace(trace), diagnosis, replay: r } });
  }
}

port.on("message", (m: ToWorker) => {
  readOne(m.path, m.fi).then(
    () => post({ fi: m.fi, done: true }),
    (e: unknown) => post({ fi: m.fi, done: true, error: (e as Error).message ?? String(e) }),
  );
});
