import { existsSync } from "node:fs";
import { labelsFromRecords, loadLabels, rowFromTrace, type LabelDiagnostic, type LabelLoad, type LabelOptions } from "../analysis/index.js";
import { readTraces } from "../formats/index.js";
import { Store } from "../store/index.js";
import { displayPath, UsageError } from "./io.js";

/*
 * Where `stats`, `eval` and `diff` get label rows: a label file or folder (findings.jsonl, the label CSV, MAST-Data
 * records), a run stored by `faultline analyze` (its id or an id prefix, looked up in --db), or — for references —
 * trace files whose dataset carries gold labels (Who&When, AgentRx…), read through the format adapters.
 */

export interface LabelInputOptions extends LabelOptions {
  db?: string;
  /** Annotator whose stored diagnoses to read (default: every annotator of the run). */
  annotator?: string;
  /** When the path holds no label records, read it as traces and take the gold labels they carry. */
  tracesAsGold?: boolean;
}

export interface LabelInput {
  load: LabelLoad;
  /** What was read, for messages: a path, `store:<run>` or `traces:<path>`. */
  source: string;
}

async function fromTraces(path: string, opts: LabelInputOptions): Promise<LabelLoad> {
  const load: LabelLoad = { format: "trace-gold", rows: [], diagnostics: [], records: 0, skipped: 0 };
  for await (const ev of readTraces(path)) {
    if (ev.type === "diagnostic" && ev.diagnostic.level !== "notice") {
      const d = ev.diagnostic;
      load.diagnostics.push({ level: d.level === "error" ? "error" : "warning", file: d.file, line: d.line, message: d.message, ...(d.skipped === "file" ? { skipped: "file" as const } : {}) });
    }
    if (ev.type !== "trace") continue;
    load.records++;
    const { row, warnings } = rowFromTrace(ev.trace, opts);
    for (const w of warnings) load.diagnostics.push({ level: "warning", file: ev.trace.source.file, line: ev.trace.source.line, message: w });
    if (row) load.rows.push(row);
    else {
      load.skipped++;
      load.diagnostics.push({ level: "warning", file: ev.trace.source.file, line: ev.trace.source.line, message: `${ev.trace.id}: no gold labels${opts.goldSource ? ` from ${opts.goldSource}` : ""}; not a reference`, skipped: "row" });
    }
  }
  return load;
}

/** Loads label rows from a path or a stored run id. */
export async function loadLabelInput(spec: string, opts: LabelInputOptions = {}): Promise<LabelInput> {
  if (existsSync(spec)) {
    const load = await loadLabels(spec, opts);
    if (load.rows.length === 0 && opts.tracesAsGold) {
      const traces = await fromTraces(spec, opts);
      if (traces.rows.length > 0) return { load: traces, source: `traces:${displayPath(spec)}` };
    }
    return { load, source: displayPath(spec) };
  }
  if (!opts.db || !existsSync(opts.db)) throw new UsageError(`${spec}: no such file or folder${opts.db ? `, and no store at ${opts.db}` : ""}`);
  const store = new Store(opts.db);
  try {
    const run = store.run(spec);
    if (!run) throw new UsageError(`${spec}: no such file or folder, and no run with that id in ${displayPath(opts.db)} (faultline analyze prints run ids)`);
    const diagnoses = store.diagnoses(run.id, opts.annotator);
    const load = await labelsFromRecords(diagnoses.map((value) => ({ value })), `store:${run.id}`, opts);
    return { load, source: `store:${run.id}` };
  } finally {
    store.close();
  }
}

/** Problems met while loading, one line each, for stderr (first `max`). */
export function diagnosticLines(diagnostics: readonly LabelDiagnostic[], max = 20): string[] {
  const lines = diagnostics.slice(0, max).map((d) => `${d.level.padEnd(7)} ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}  ${d.message}`);
  if (diagnostics.length > max) lines.push(`… ${diagnostics.length - max} more (--json lists all)`);
  return lines;
}
