import { ADAPTERS, findAdapter } from "./registry.js";
import { openSource } from "./source.js";
import { walkFiles } from "./walk.js";
import type { Diagnostic, FileSummary, FormatAdapter, ReadEvent, ReadOptions, Sample } from "./types.js";

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
 * Reads traces from files and folders: walks them in a stable order, detects each file's format, streams records
 * with bounded memory, and yields traces, diagnostics and one summary per file. Bad input never stops the rest.
 */
export async function* readTraces(paths: string | string[], options: ReadOptions = {}): AsyncGenerator<ReadEvent> {
  const roots = Array.isArray(paths) ? paths : [paths];
  const { files, missing } = await walkFiles(roots);
  // one options object for the whole read: adapters key per-read caches (the ground-truth index) on it
  options = { ...options, inputRoots: options.inputRoots ?? roots };
  for (const m of missing)
    yield { type: "diagnostic", diagnostic: { level: "error", file: m, message: "no such file or folder", skipped: "file" } };
  const seenIds = new Map<string, number>();
  const forced = options.format ? findAdapter(options.format) : undefined;
  if (options.format && !forced) throw new Error(`unknown format "${options.format}"; known: ${ADAPTERS.map((a) => a.id).join(", ")}`);

  for (let fi = 0; fi < files.length; fi++) {
    const path = files[fi]!;
    options.onFile?.(path, fi, files.length);
    const queue: Diagnostic[] = [];
    const summary: FileSummary = {
      path, format: "unrecognised", role: "refused", traces: 0, steps: 0, models: [],
      hasOutcome: false, hasGoldLabels: false, errors: 0, warnings: 0, skippedLines: 0, skippedTraces: 0,
    };
    const ctx = {
      options,
      report: (d: Omit<Diagnostic, "file"> & { file?: string }) => queue.push({ ...d, file: d.file ?? path }),
    };
    const flush = function* (): Generator<ReadEvent> {
      for (const d of queue.splice(0)) {
        if (d.level === "error") summary.errors++;
        if (d.level === "warning") summary.warnings++;
        if (d.skipped === "line" || d.skipped === "record") summary.skippedLines++;
        if (d.skipped === "trace") summary.skippedTraces++;
        yield { type: "diagnostic", diagnostic: d };
      }
    };

    let source;
    try {
      source = await openSource(path, ctx);
    } catch (e) {
      ctx.report({ level: "error", message: `cannot open: ${(e as Error).message}`, skipped: "file" });
      yield* flush();
      yield { type: "file", file: summary };
      continue;
    }
    const sample = source.sample;
    let adapter: FormatAdapter | undefined = forced;
    const claimed = !adapter && sample.kind !== "empty" && sample.kind !== "binary" ? supportingBeforeDetect(sample) : undefined;
    if (!adapter && !claimed && sample.kind !== "empty" && sample.kind !== "binary") adapter = ADAPTERS.find((a) => safeDetect(a, sample));

    if (!adapter) {
      const support = claimed ?? (sample.kind === "empty" || sample.kind === "binary" ? undefined : supportingRole(sample));
      if (support) {
        summary.role = "supporting";
        summary.format = `supporting`;
        summary.note = support;
        ctx.report({ level: "notice", message: `supporting file (${support}); read by the trace files that use it` });
      } else if (sample.kind === "empty") {
        ctx.report({ level: "error", line: 1, message: "empty file", skipped: "file" });
      } else if (sample.kind === "binary" || NON_TRACE_EXT.has(sample.ext) || sample.kind === "text") {
        summary.role = "skipped";
        summary.format = "skipped";
        summary.note = sample.kind === "binary" ? "binary file" : "not a trace format";
        ctx.report({ level: "notice", message: `skipped: ${summary.note} (${sample.ext || sample.kind})` });
      } else {
        const why = sample.parseError
          ? `it does not parse as JSON (${sample.parseError.message})`
          : `no format matched; tried ${ADAPTERS.map((a) => a.id).join(", ")}`;
        ctx.report({ level: "error", line: sample.parseError?.line, message: `unrecognised ${sample.kind} file: ${why}`, skipped: "file" });
      }
      yield* flush();
      yield { type: "file", file: summary };
      continue;
    }

    summary.format = adapter.id;
    summary.role = "trace";
    const models = new Set<string>();
    try {
      for await (const trace of adapter.read(source, ctx)) {
        yield* flush();
        const n = seenIds.get(trace.id) ?? 0;
        seenIds.set(trace.id, n + 1);
        if (n > 0) {
          trace.metadata.originalId = trace.id;
          trace.id = `${trace.id}#${n + 1}`;
        }
        summary.traces++;
        summary.steps += trace.steps.length;
        if (trace.model) models.add(trace.model);
        if (trace.outcome && (trace.outcome.success !== undefined || trace.outcome.reward !== undefined || trace.outcome.score !== undefined || trace.outcome.groundTruth))
          summary.hasOutcome = true;
        if (trace.goldLabels?.length) summary.hasGoldLabels = true;
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
