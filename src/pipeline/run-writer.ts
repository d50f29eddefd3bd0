import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { Store } from "../store/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import type { RunCounts } from "./diagnosed.js";

const BATCH = 200;

/**
 * Where a run's results go: findings.jsonl (one line per trace, streamed) and the store (traces, diagnoses and
 * findings, saved in batches). Shared by `analyze` and `judge`; also counts annotated vs failed traces.
 */
export class RunWriter {
  readonly store: Store;
  readonly runId: string;
  readonly findingsPath: string;
  readonly diagnoses: Diagnosis[] = [];
  private readonly out: WriteStream;
  private batch: { trace: Trace; diagnosis: Diagnosis }[] = [];

  constructor(paths: string[], opts: { out: string; db: string; annotator: string; taxonomy: string }) {
    mkdirSync(opts.out, { recursive: true });
    this.store = new Store(opts.db);
    this.runId = this.store.beginRun(paths, opts.annotator, opts.taxonomy);
    this.findingsPath = join(opts.out, "findings.jsonl");
    this.out = createWriteStream(this.findingsPath);
  }

  /** Records a trace's final diagnosis (written to findings.jsonl) and any extra diagnoses kept only in the store. */
  async write(trace: Trace, d: Diagnosis, counts: RunCounts, alsoStore: Diagnosis[] = []): Promise<void> {
    if (d.modes) counts.annotated++;
    else counts.failed++;
    if (!this.out.write(`${JSON.stringify(d)}\n`)) await new Promise<void>((r) => this.out.once("drain", () => r()));
    this.diagnoses.push(d);
    for (const extra of alsoStore) this.batch.push({ trace, diagnosis: extra });
    this.batch.push({ trace, diagnosis: d });
    if (this.batch.length >= BATCH) this.flush();
  }

  private flush(): void {
    if (this.batch.length) this.store.saveBatch(this.runId, this.batch);
    this.batch = [];
  }

  /** Saves what is pending and the run's counts. */
  finish(counts: RunCounts): void {
    this.flush();
    this.store.finishRun(this.runId, counts);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.out.end(r));
    this.store.close();
  }
}
