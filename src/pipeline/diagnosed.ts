import { readTraces, type Diagnostic, type ReadEvent, type ReadOptions } from "../formats/index.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";

/** What a run read and annotated: every file, problem and skipped record is counted. */
// a type alias (not an interface) so it stays assignable to Record<string, number>
export type RunCounts = {
  files: number;
  traces: number;
  annotated: number;
  failed: number;
  errors: number;
  warnings: number;
  skipped_lines: number;
  /** Steps a reader could not read and left out of their trace (the rest of the trace was kept). */
  skipped_steps: number;
  skipped_traces: number;
  refused_files: number;
};

export const emptyRunCounts = (): RunCounts => ({ files: 0, traces: 0, annotated: 0, failed: 0, errors: 0, warnings: 0, skipped_lines: 0, skipped_steps: 0, skipped_traces: 0, refused_files: 0 });

export interface DiagnosedInputOptions extends DiagnoseOptions, Pick<ReadOptions, "format" | "groundTruth" | "onFile"> {
  onDiagnostic?: (d: Diagnostic) => void;
  /** A diagnosis already made for this very trace (a resumed run): used instead of diagnosing it again. */
  reuse?: (trace: Trace) => Diagnosis | undefined;
}

/**
 * Reads traces and runs the rules diagnosis on each, counting files, reader problems and skipped records into
 * `counts` as it goes. `annotated` / `failed` are left to the caller, whose final diagnosis may differ (the judge).
 */
export async function* diagnosedTraces(paths: string[], opts: DiagnosedInputOptions, counts: RunCounts): AsyncGenerator<{ trace: Trace; rules: Diagnosis; reused: boolean }> {
  for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth, onFile: opts.onFile })) {
    if (ev.type !== "trace") countReadEvent(ev, counts, opts);
    else {
      counts.traces++;
      const reused = opts.reuse?.(ev.trace);
      yield { trace: ev.trace, rules: reused ?? (await diagnoseTrace(ev.trace, opts)), reused: reused !== undefined };
    }
  }
}

/** Counts a file summary or a reader diagnostic into `counts` (and passes diagnostics to `onDiagnostic`). */
export function countReadEvent(ev: Exclude<ReadEvent, { type: "trace" }>, counts: RunCounts, opts: Pick<DiagnosedInputOptions, "onDiagnostic">): void {
  if (ev.type === "file") {
    counts.files++;
    counts.skipped_lines += ev.file.skippedLines;
    counts.skipped_steps += ev.file.skippedSteps;
    counts.skipped_traces += ev.file.skippedTraces;
    if (ev.file.role === "refused") counts.refused_files++;
  } else {
    if (ev.diagnostic.level === "error") counts.errors++;
    if (ev.diagnostic.level === "warning") counts.warnings++;
    opts.onDiagnostic?.(ev.diagnostic);
  }
}
