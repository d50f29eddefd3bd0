import { existsSync } from "node:fs";
import { relative, isAbsolute } from "node:path";
import { displayUrl, isPostgresUrl } from "../store/index.js";
import { skippedText } from "../report/index.js";

/**
 * Exit statuses shared by every command. `interrupted` (128 + SIGINT): Ctrl-C or SIGTERM stopped `analyze`/`judge`
 * midway; what was read is stored and written, marked incomplete.
 */
export const EXIT = { ok: 0, usage: 1, partial: 2, interrupted: 130 } as const;

export class UsageError extends Error {}

/** Input paths that do not exist are a usage error, found before anything is read or written. */
export function requireInputs(paths: readonly string[]): void {
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length) throw new UsageError(`${missing.map(displayPath).join(", ")}: no such file or folder; nothing was analysed or written`);
}

/**
 * An AbortSignal raised by the first Ctrl-C or SIGTERM while `run` is going: the run finishes with what it has read,
 * marked incomplete. A second signal ends the process at once (the store keeps the run marked incomplete, and the
 * output folder is left as it was).
 */
export async function interruptible<T>(run: (signal: AbortSignal) => Promise<T>, say: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<T> {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted);
    say(`\nfaultline: ${sig === "SIGINT" ? "interrupted" : "terminated"}: finishing with what was read (the run is marked incomplete); again to quit at once`);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    return await run(controller.signal);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** Paths shown to people: relative to the working directory when that is shorter. */
export function displayPath(p: string): string {
  if (isPostgresUrl(p)) return displayUrl(p);
  if (!isAbsolute(p)) return p;
  const r = relative(process.cwd(), p);
  return r.length < p.length ? r : p;
}

export function writeJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Renders a plain-text table with left-aligned columns (numbers right-aligned). */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => String(c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const fmt = (r: string[], isHeader = false) =>
    r
      .map((c, i) => {
        const raw = rows[0]?.[i];
        return !isHeader && typeof raw === "number" ? c.padStart(widths[i]!) : c.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [fmt(cells[0]!, true), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map((r) => fmt(r))].join("\n");
}

/** Problems the reader reported, as printed under a run: at most 20, then a pointer to the full list. */
export function printProblems(problems: string[]): void {
  if (!problems.length) return;
  console.log(`\nProblems (${problems.length}):`);
  for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
  if (problems.length > 20) console.log(`  … ${problems.length - 20} more: run \`faultline inspect\` on the inputs for the full list`);
}

/** One line per reader diagnostic worth showing (notices are left to `inspect --verbose`). */
export const problemLine = (d: { level: string; file: string; line?: number; message: string }): string =>
  `${d.level.padEnd(7)} ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}  ${d.message}`;

/** The closing lines of `analyze` and `judge`: what was read and annotated, and where everything went. */
export function printRunFooter(
  c: { traces: number; files: number; annotated: number; failed: number; errors: number; skipped_lines: number; skipped_steps: number; skipped_traces: number; refused_files: number },
  out: { findings: string; summary: string; runId: string; db: string; reports: object; status?: "complete" | "incomplete"; replaced?: readonly string[] },
): void {
  console.log(
    `\n${c.traces} traces from ${c.files} files (${c.annotated} annotated${c.failed ? `, ${c.failed} could not be annotated` : ""}); ` +
      `${c.errors} errors, ${skippedText(c)}, ${c.refused_files} refused files.`,
  );
  const replaced = out.replaced?.length ? ` (replacing ${out.replaced.join(", ")})` : "";
  console.log(`Wrote ${displayPath(out.findings)}, ${displayPath(out.summary)}; run ${out.runId} stored in ${displayPath(out.db)}${replaced}.`);
  const reports = Object.values(out.reports).filter((v): v is string => typeof v === "string");
  console.log(`Reports: ${reports.map(displayPath).join(", ")}.`);
  if (out.status === "incomplete")
    console.log(`Run ${out.runId} is INCOMPLETE: it was interrupted after ${c.traces} traces; its counts and statistics cover only those.`);
}

/**
 * The message and exit status for inputs that held no trace (nothing was stored or written): 2 when some input was
 * refused (its problems are printed above), 1 when there was nothing to read, 130 when interrupted first.
 */
export function noTracesExit(e: { message: string; counts: { errors: number; refused_files: number; files: number }; interrupted: boolean }): number {
  process.stderr.write(`faultline: ${e.message}\n`);
  if (e.interrupted) return EXIT.interrupted;
  return e.counts.errors > 0 || e.counts.refused_files > 0 ? EXIT.partial : EXIT.usage;
}
