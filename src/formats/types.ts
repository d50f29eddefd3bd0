import type { Trace } from "../trace/index.js";

/** What the reader tells the user about an input: always with the file, and the line when there is one. */
export interface Diagnostic {
  level: "error" | "warning" | "notice";
  file: string;
  line?: number;
  /**
   * Where in the file's JSON the problem is (`/messages/4`). For a single JSON document the reader fills in `line`
   * from it when the adapter could not.
   */
  pointer?: string;
  message: string;
  /**
   * What was lost because of it, so nothing is dropped silently: a JSONL line or array element, one step of a trace
   * (a message or event the adapter could not place), a whole trace, or the file (or folder).
   */
  skipped?: "line" | "record" | "step" | "trace" | "file";
}

export type FileKind = "jsonl" | "json" | "json-array" | "zip" | "text" | "empty" | "binary";

/** A cheap look at a file, enough for every adapter's `detect`. */
export interface Sample {
  path: string;
  /** Lower-cased base name, e.g. `report.json`. */
  name: string;
  ext: string;
  kind: FileKind;
  size: number;
  /** Up to the first 64 KiB, decoded (lossy) — for text signatures. */
  head: string;
  /** The first parsed records: JSONL lines, array elements, or the whole JSON document. */
  records: unknown[];
  /** Entry names of a zip container. */
  entries?: string[];
  /** Why the sample has no records although the file looked like JSON. */
  parseError?: { message: string; line?: number };
}

export interface RecordItem {
  value: unknown;
  /** 1-based line where the record starts (JSONL line, array element start); absent for a single document. */
  line?: number;
  /** 0-based position among the file's records. */
  index: number;
}

/** A file opened for an adapter. Malformed records are reported and counted by the reader, not by the adapter. */
export interface SourceFile {
  readonly path: string;
  readonly sample: Sample;
  /** JSONL lines, JSON array elements (streamed), or the single JSON document as one record. */
  records(): AsyncIterable<RecordItem>;
  /** The whole JSON document (parsed leniently; cached). */
  document(): Promise<unknown>;
  text(): Promise<string>;
  bytes(): Promise<Buffer>;
  /** Decompressed entries of a zip container (kind `zip`). */
  zipEntries?: Record<string, Uint8Array>;
}

export interface ReadContext {
  /** Report a problem; `skipped` says what was lost. */
  report(d: Omit<Diagnostic, "file"> & { file?: string }): void;
  /** Options of this read, e.g. an ITBench ground-truth path. */
  options: ReadOptions;
}

export interface ReadOptions {
  /** Force one adapter for every file instead of detecting. */
  format?: string;
  /** Ground-truth file for ITBench rollouts that have none beside them. */
  groundTruth?: string;
  /**
   * The paths being read (files and folders). `readTraces` sets it from its arguments when absent; ITBench adapters
   * look for a run's ground truth anywhere under them by scenario id.
   */
  inputRoots?: string[];
  /** Called when a file starts, for progress. */
  onFile?: (path: string, index: number, total: number) => void;
}

/**
 * One adapter per trace format. `detect` must be cheap and specific; adapters are tried in registry order.
 * `read` yields canonical traces; per-record problems go to `ctx.report` and the adapter carries on.
 */
export interface FormatAdapter {
  id: string;
  title: string;
  detect(sample: Sample): boolean;
  read(file: SourceFile, ctx: ReadContext): AsyncIterable<Trace>;
  /**
   * Supporting files this format uses (reports, run metadata, ground truth): returns what the file is, so the
   * reader can list it as read-for-support instead of refusing it.
   */
  supports?(sample: Sample): string | undefined;
  /**
   * Like `supports`, but asked before any adapter's `detect`: for supporting files that have the shape of a trace
   * format further down the list (an earlier OpenHands LLM call is also a valid chat conversation).
   */
  supportsBeforeDetect?(sample: Sample): string | undefined;
}

/** What the reader streams out. */
export type ReadEvent =
  | { type: "trace"; trace: Trace }
  | { type: "diagnostic"; diagnostic: Diagnostic }
  | { type: "file"; file: FileSummary };

export interface FileSummary {
  path: string;
  /** Adapter id, `supporting:<what>`, or `skipped`/`unrecognised`. */
  format: string;
  role: "trace" | "supporting" | "skipped" | "refused";
  traces: number;
  steps: number;
  models: string[];
  hasOutcome: boolean;
  hasGoldLabels: boolean;
  errors: number;
  warnings: number;
  skippedLines: number;
  /** Messages or events dropped from traces that were read (diagnostics with `skipped: "step"`). */
  skippedSteps: number;
  skippedTraces: number;
  note?: string;
}
