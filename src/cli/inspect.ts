import type { Command } from "commander";
import { readTraces, type Diagnostic, type FileSummary } from "../formats/index.js";
import { displayPath, EXIT, table, writeJson } from "./io.js";
import { fileProgress } from "./progress.js";

interface InspectOptions {
  json?: boolean;
  format?: string;
  verbose?: boolean;
  groundTruth?: string;
}

export async function inspect(paths: string[], opts: InspectOptions): Promise<number> {
  const progress = fileProgress(!opts.json);
  const files: FileSummary[] = [];
  const diags: Diagnostic[] = [];
  for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth, onFile: progress.update })) {
    if (ev.type === "file") files.push(ev.file);
    else if (ev.type === "diagnostic") diags.push(ev.diagnostic);
  }
  progress.stop();
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of diags) byFile.set(d.file, [...(byFile.get(d.file) ?? []), d]);
  const totals = {
    files: files.length,
    traces: files.reduce((a, f) => a + f.traces, 0),
    steps: files.reduce((a, f) => a + f.steps, 0),
    errors: diags.filter((d) => d.level === "error").length,
    warnings: diags.filter((d) => d.level === "warning").length,
    skipped_lines: files.reduce((a, f) => a + f.skippedLines, 0),
    skipped_steps: files.reduce((a, f) => a + f.skippedSteps, 0),
    skipped_traces: files.reduce((a, f) => a + f.skippedTraces, 0),
    trace_files: files.filter((f) => f.role === "trace").length,
    supporting_files: files.filter((f) => f.role === "supporting").length,
    skipped_files: files.filter((f) => f.role === "skipped").length,
    refused_files: files.filter((f) => f.role === "refused").length,
  };
  // paths that are not files read: missing paths, unreadable folders, symlink loops, pipes inside folders
  const read = new Set(files.map((f) => f.path));
  const others = [...byFile].filter(([path]) => !read.has(path));
  const otherKind = (ds: Diagnostic[]) =>
    ds.some((d) => d.level === "error" && /no such file/.test(d.message)) ? "missing" : ds.some((d) => d.level === "error") ? "unreadable" : "not read";
  const refused = [...files.filter((f) => f.role === "refused").map((f) => f.path), ...others.filter(([, ds]) => ds.some((d) => d.level === "error")).map(([p]) => p)];
  if (opts.json) {
    const pick = (path: string, level: Diagnostic["level"]) =>
      (byFile.get(path) ?? []).filter((d) => d.level === level).map((d) => ({ line: d.line ?? null, message: d.message }));
    writeJson({
      files: [
        ...files.map((f) => ({
          path: f.path,
          format: f.format,
          role: f.role,
          traces: f.traces,
          steps: f.steps,
          models: f.models,
          outcomes: f.hasOutcome,
          reference_labels: f.hasGoldLabels,
          skipped_lines: f.skippedLines,
          skipped_steps: f.skippedSteps,
          skipped_traces: f.skippedTraces,
          note: f.note ?? null,
          errors: pick(f.path, "error"),
          warnings: pick(f.path, "warning"),
        })),
        ...others.map(([path, ds]) => ({
          path,
          format: otherKind(ds),
          role: ds.some((d) => d.level === "error") ? "refused" : "skipped",
          traces: 0,
          steps: 0,
          models: [],
          note: ds.find((d) => d.level === "notice")?.message ?? null,
          errors: pick(path, "error"),
          warnings: pick(path, "warning"),
        })),
      ],
      totals,
    });
  } else {
    const shown = opts.verbose ? files : files.filter((f) => f.role !== "skipped");
    const rows = shown.map((f) => [
      displayPath(f.path),
      f.role === "supporting" ? `supporting (${(f.note ?? "").split(":")[0]})` : f.format,
      f.traces,
      f.steps,
      f.models.join(",") || "-",
      f.hasOutcome ? "yes" : "-",
      f.hasGoldLabels ? "yes" : "-",
      f.errors,
    ]);
    if (rows.length) console.log(table(["file", "format", "traces", "steps", "models", "outcome", "labels", "errors"], rows));
    const notable = diags.filter((d) => d.level !== "notice" || opts.verbose);
    if (notable.length) {
      console.log("\nDiagnostics:");
      for (const d of notable.slice(0, opts.verbose ? Infinity : 50))
        console.log(`  ${d.level.padEnd(7)} ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}  ${d.message}`);
      if (!opts.verbose && notable.length > 50) console.log(`  … ${notable.length - 50} more (use --verbose)`);
    }
    console.log(
      `\n${totals.files} files (${totals.trace_files} with traces, ${totals.supporting_files} supporting, ${totals.skipped_files} skipped, ${totals.refused_files} refused), ` +
        `${totals.traces} traces, ${totals.steps} steps, ${totals.errors} errors, ${totals.warnings} warnings` +
        (totals.skipped_lines || totals.skipped_steps || totals.skipped_traces
          ? `; skipped ${totals.skipped_lines} lines/records, ${totals.skipped_steps} steps and ${totals.skipped_traces} traces`
          : ""),
    );
    // every input refused is named here, however long the diagnostics list above was
    if (refused.length)
      console.log(`Not read (${refused.length}): ${refused.slice(0, 20).map(displayPath).join(", ")}${refused.length > 20 ? `, … ${refused.length - 20} more (see --json)` : ""}`);
  }
  return totals.errors > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("inspect")
    .description("Show what faultline reads from trace files: format, traces, steps, models, outcomes, labels, problems")
    .argument("<paths...>", "trace files or folders (read recursively)")
    .option("--json", "print one JSON document instead of a table")
    .option("--format <id>", "skip detection and read every file with this format (see `faultline formats`)")
    .option("--ground-truth <file>", "ITBench ground-truth YAML for rollouts that have none beside them")
    .option("-v, --verbose", "also list skipped files and notices")
    .addHelpText(
      "after",
      `
Exit status: 0 when everything was read, 2 when some input was refused (the rest is still read), 1 on usage errors.

Examples:
  faultline inspect ../shared/corpus/tau-bench
  faultline inspect runs/ --json | jq '.totals'`,
    )
    .action((paths: string[], opts: InspectOptions) => run(inspect(paths, opts)));
}
