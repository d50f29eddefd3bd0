import { existsSync } from "node:fs";
import { labelsFromRecords, loadLabels, rowFromTrace, type LabelDiagnostic, type LabelLoad, type LabelOptions, type LabelRow } from "../analysis/index.js";
import { readTraces } from "../formats/index.js";
import { openStore, storeExists } from "../store/index.js";
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
  if (!opts.db || !storeExists(opts.db)) throw new UsageError(`${spec}: no such file or folder${opts.db ? `, and no store at ${opts.db}` : ""}`);
  const store = openStore(opts.db);
  try {
    const run = await store.run(spec);
    if (!run) throw new UsageError(`${spec}: no such file or folder, and no run with that id in ${displayPath(opts.db)} (faultline analyze prints run ids)`);
    const diagnoses = await store.diagnoses(run.id, opts.annotator);
    const load = await labelsFromRecords(diagnoses.map((value) => ({ value })), `store:${run.id}`, opts);
    if (run.status === "incomplete")
      load.diagnostics.unshift({
        level: "warning",
        file: `store:${run.id}`,
        message: `run ${run.id} is incomplete (interrupted or still running): ${run.trace_count} traces stored so far`,
      });
    return { load, source: `store:${run.id}` };
  } finally {
    await store.close();
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether a row's fields have `path` (a literal key, or a dot path through objects), whatever its value. */
function hasField(fields: Record<string, unknown>, path: string): boolean {
  if (path in fields) return true;
  let cur: unknown = fields;
  const parts = path.split(".");
  for (const [i, part] of parts.entries()) {
    if (!isPlainObject(cur) || !(part in cur)) return false;
    if (i === parts.length - 1) return true;
    cur = cur[part];
  }
  return false;
}

/** The keys `--by` can take over these rows: top-level fields and one level of dot paths into objects. */
export function groupKeys(rows: readonly LabelRow[]): string[] {
  const keys = new Set<string>();
  for (const r of rows)
    for (const [k, v] of Object.entries(r.fields)) {
      keys.add(k);
      if (isPlainObject(v)) for (const [k2, v2] of Object.entries(v)) if (!isPlainObject(v2) && !Array.isArray(v2)) keys.add(`${k}.${k2}`);
    }
  return [...keys].sort((a, b) => a.split(".").length - b.split(".").length || a.localeCompare(b));
}

/**
 * `--by KEY` must name a field the rows have: an unknown key would put every trace under "(none)" without a word.
 * A usage error lists the keys there are.
 */
export function checkGroupKey(rows: readonly LabelRow[], by: string | undefined, flag = "--by"): void {
  if (by === undefined || rows.length === 0 || rows.some((r) => hasField(r.fields, by))) return;
  const keys = groupKeys(rows);
  const shown = keys.slice(0, 40).join(", ");
  throw new UsageError(`${flag} ${by}: no trace has that field; the keys are ${shown}${keys.length > 40 ? `, … (${keys.length - 40} more)` : ""}`);
}

/** Problems met while loading, one line each, for stderr (first `max`). */
export function diagnosticLines(diagnostics: readonly LabelDiagnostic[], max = 20): string[] {
  const lines = diagnostics.slice(0, max).map((d) => `${d.level.padEnd(7)} ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}  ${d.message}`);
  if (diagnostics.length > max) lines.push(`… ${diagnostics.length - max} more (--json lists all)`);
  return lines;
}
