import { isAbsolute, relative, sep } from "node:path";
import { ADAPTERS, findAdapter } from "./registry.js";
import { declaresJson, openSource } from "./source.js";
import { walkFiles } from "./walk.js";
import { lineOfPointer } from "./io/pointer-line.js";
import { MAX_DEPTH, sanitizeValue } from "./io/sanitize.js";
import type { Diagnostic, FileSummary, FormatAdapter, ReadEvent, ReadOptions, Sample, SourceFile } from "./types.js";

/** Extensions that are never traces on their own; skipped with a notice unless an adapter claims the file. */
const NON_TRACE_EXT = new Set([".md", ".markdown", ".rst", ".toml", ".ini", ".cfg", ".py", ".ts", ".js", ".sh", ".png", ".jpg", ".svg", ".html", ".css", ".lock", ".csv", ".parquet"]);

function supportingRole(sample: Sample): string | undefined {
  for (const a of ADAPTERS) {
    const what = a.supports?.(sample);
    if (what) return `${a.id}: ${what}`;
  }
  return undefined;
}

function supportingBeforeDetect(sample: Sample): string | undefined {
  for (const a of ADAPTERS) {
    try {
      const what = a.supportsBeforeDetect?.(sample);
      if (what) return `${a.id}: ${what}`;
    } catch {
      /* a failing check claims nothing */
    }
  }
  return undefined;
}

/**
 * Trace ids, unique across one read and stable per (file, position) whatever else is read:
 * - a trace keeps the id its format gives it unless a trace read before it already has that id;
 * - the second, third … trace of one file with the same id get `#2`, `#3` … (counted within that file);
 * - a trace whose id another file already gave gets `@<its file>` appended: the file's path relative to the input
 *   folder it was found under (or the path as given for a file named on the command line), then `#n` as above.
 * So a trace's id is its own or `<id>@<its path>[#n]`, never a number that depends on how many other files
 * repeated it. (The first file in read order keeps the plain id; that cannot be decided without reading everything
 * first.) The original id is kept in `metadata.originalId`.
 */
export class TraceIds {
  private readonly owner = new Map<string, string>();
  private readonly taken = new Set<string>();
  private readonly perFile = new Map<string, Map<string, number>>();
  constructor(private readonly roots: string[]) {}

  /** How a file is named in a disambiguated id: relative to the input folder it came from. */
  label(path: string): string {
    for (const root of this.roots) {
      const rel = relative(root, path);
      if (rel !== "" && !rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
    }
    return path.split(sep).join("/");
  }

  assign(id: string, path: string): string {
    let local = this.perFile.get(path);
    if (!local) this.perFile.set(path, (local = new Map()));
    const k = (local.get(id) ?? 0) + 1;
    local.set(id, k);
    const owner = this.owner.get(id);
    if (owner === undefined) this.owner.set(id, path);
    let out = owner === undefined || owner === path ? id : `${id}@${this.label(path)}`;
    if (k > 1) out += `#${k}`;
    // only when a format's own ids look like ours (`a#2` given by the file itself): order-dependent, but unique
    if (this.taken.has(out)) {
      let n = 2;
      while (this.taken.has(`${out}#${n}`)) n++;
      out = `${out}#${n}`;
    }
    this.taken.add(out);
    return out;
  }
}

/** What a JSON document that is not a container is, for the refusal message. */
function describeScalar(v: unknown): string | undefined {
  if (v === null) return "null";
  if (typeof v === "string") return `a bare string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`;
  if (typeof v === "number" || typeof v === "boolean") return `a bare ${typeof v} (${String(v)})`;
  return undefined;
}

/**
 * Reads traces from files and folders: walks them in a stable order, detects each file's format, streams records
 * with bounded memory, and yields traces, diagnostics and one summary per file. Bad input never stops the rest.
 */
export async function* readTraces(paths: string | string[], options: ReadOptions = {}): AsyncGenerator<ReadEvent> {
  const roots = Array.isArray(paths) ? paths : [paths];
  const forced = options.format ? findAdapter(options.format) : undefined;
  if (options.format && !forced) throw new Error(`unknown format "${options.format}"; known: ${ADAPTERS.map((a) => a.id).join(", ")}`);
  const walk = await walkFiles(roots);
  const files = walk.files;
  // one options object for the whole read: adapters key per-read caches (the ground-truth index) on it
  options = { ...options, inputRoots: options.inputRoots ?? roots };
  // missing paths, unreadable folders, symlink loops, pipes inside folders: each names its path
  for (const d of walk.diagnostics) yield { type: "diagnostic", diagnostic: d };
  const ids = new TraceIds(roots);

  for (let fi = 0; fi < files.length; fi++) {
    options.onFile?.(files[fi]!, fi, files.length);
    yield* readFile(files[fi]!, options, (id, path) => ids.assign(id, path));
  }
}

/**
 * One file of a read: its format detected, its traces streamed, its diagnostics and summary. `assignId` gives each
 * trace its id in the whole read ({@link TraceIds}); a reader of one file in isolation (a worker of a parallel
 * analysis) passes the identity and the caller assigns ids in read order. `options` must carry `inputRoots` and stay
 * the same object for the whole read (adapters key per-read caches on it).
 */
export async function* readFile(path: string, options: ReadOptions, assignId: (id: string, path: string) => string): AsyncGenerator<ReadEvent> {
  const forced = options.format ? findAdapter(options.format) : undefined;
  const queue: Diagnostic[] = [];
  const summary: FileSummary = {
    path, format: "unrecognised", role: "refused", traces: 0, steps: 0, models: [],
    hasOutcome: false, hasGoldLabels: false, errors: 0, warnings: 0, skippedLines: 0, skippedSteps: 0, skippedTraces: 0,
  };
  const ctx = {
    options,
    report: (d: Omit<Diagnostic, "file"> & { file?: string }) => queue.push({ ...d, file: d.file ?? path }),
  };
  let source: SourceFile | undefined;
  let docText: Promise<string> | undefined;
  /** A problem inside a single JSON document gets the line of its pointer. */
  const locate = async (d: Diagnostic): Promise<void> => {
    if (d.line !== undefined || d.pointer === undefined || d.file !== path || source?.sample.kind !== "json") return;
    try {
      docText ??= source.text();
      d.line = lineOfPointer(await docText, d.pointer);
    } catch {
      /* no line, then */
    }
  };
  const flush = async function* (): AsyncGenerator<ReadEvent> {
    for (const d of queue.splice(0)) {
      await locate(d);
      if (d.level === "error") summary.errors++;
      if (d.level === "warning") summary.warnings++;
      if (d.skipped === "line" || d.skipped === "record") summary.skippedLines++;
      if (d.skipped === "step") summary.skippedSteps++;
      if (d.skipped === "trace") summary.skippedTraces++;
      yield { type: "diagnostic", diagnostic: d };
    }
  };

  try {
    source = await openSource(path, ctx);
  } catch (e) {
    ctx.report({ level: "error", message: `cannot open: ${(e as Error).message}`, skipped: "file" });
    yield* flush();
    yield { type: "file", file: summary };
    return;
  }
  const sample = source.sample;
  let adapter: FormatAdapter | undefined = forced;
  const claimed = !adapter && sample.kind !== "empty" && sample.kind !== "binary" ? supportingBeforeDetect(sample) : undefined;
  if (!adapter && !claimed && sample.kind !== "empty" && sample.kind !== "binary") adapter = ADAPTERS.find((a) => safeDetect(a, sample));

  if (!adapter) {
    const support = claimed ?? (sample.kind === "empty" || sample.kind === "binary" ? undefined : supportingRole(sample));
    const scalar = sample.kind === "json" && sample.records.length === 1 ? describeScalar(sample.records[0]) : undefined;
    if (support) {
      summary.role = "supporting";
      summary.format = `supporting`;
      summary.note = support;
      ctx.report({ level: "notice", message: `supporting file (${support}); read by the trace files that use it` });
    } else if (sample.kind === "empty") {
      ctx.report({ level: "error", line: 1, message: "empty file", skipped: "file" });
    } else if (sample.kind === "binary" && declaresJson(sample.ext)) {
      // named JSON but not text: refused by name, never skipped quietly
      ctx.report({ level: "error", message: `not JSON: binary content (NUL bytes) in a ${sample.ext} file`, skipped: "file" });
    } else if (sample.kind === "binary" || NON_TRACE_EXT.has(sample.ext) || sample.kind === "text") {
      summary.role = "skipped";
      summary.format = "skipped";
      summary.note = sample.kind === "binary" ? "binary file" : "not a trace format";
      ctx.report({ level: "notice", message: `skipped: ${summary.note} (${sample.ext || sample.kind})` });
    } else if (scalar) {
      ctx.report({ level: "error", message: `unrecognised json file: the document is ${scalar}, not an object or array`, skipped: "file" });
    } else {
      const why = sample.parseError
        ? `it does not parse as JSON (${sample.parseError.message})`
        : `no format matched; tried ${ADAPTERS.map((a) => a.id).join(", ")}`;
      ctx.report({ level: "error", line: sample.parseError?.line, message: `unrecognised ${sample.kind} file: ${why}`, skipped: "file" });
    }
    yield* flush();
    yield { type: "file", file: summary };
    return;
  }

  summary.format = adapter.id;
  summary.role = "trace";
  const models = new Set<string>();
  try {
    for await (const trace of adapter.read(source, ctx)) {
      yield* flush();
      const id = assignId(trace.id, path);
      if (id !== trace.id) {
        trace.metadata.originalId = trace.id;
        trace.id = id;
      }
      // a value an adapter parsed out of a string can still be nested deep enough to overflow recursive code later
      const guarded = sanitizeValue(trace, { keepNonFinite: true });
      if (guarded.cut)
        ctx.report({ level: "warning", line: trace.source.line, message: `repaired: cut ${guarded.cut} value(s) nested deeper than ${MAX_DEPTH} levels in trace ${trace.id}` });
      summary.traces++;
      summary.steps += trace.steps.length;
      if (trace.model) models.add(trace.model);
      if (trace.outcome && (trace.outcome.success !== undefined || trace.outcome.reward !== undefined || trace.outcome.score !== undefined || trace.outcome.groundTruth))
        summary.hasOutcome = true;
      if (trace.goldLabels?.length) summary.hasGoldLabels = true;
      yield* flush();
      yield { type: "trace", trace };
    }
  } catch (e) {
    ctx.report({ level: "error", message: `${adapter.id} reader failed, rest of the file skipped: ${(e as Error).message}`, skipped: "file" });
  }
  yield* flush();
  summary.models = [...models].sort();
  if (summary.traces === 0 && summary.errors === 0)
    ctx.report({ level: "warning", message: `${adapter.id}: the file holds no traces` });
  yield* flush();
  yield { type: "file", file: summary };
}

function safeDetect(a: FormatAdapter, s: Sample): boolean {
  try {
    return a.detect(s);
  } catch {
    return false;
  }
}

/** Collects traces only, with diagnostics gathered aside (for tests and small inputs). */
export async function readAll(paths: string | string[], options: ReadOptions = {}) {
  const traces = [];
  const diagnostics: Diagnostic[] = [];
  const files: FileSummary[] = [];
  for await (const ev of readTraces(paths, options)) {
    if (ev.type === "trace") traces.push(ev.trace);
    else if (ev.type === "diagnostic") diagnostics.push(ev.diagnostic);
    else files.push(ev.file);
  }
  return { traces, diagnostics, files };
}
