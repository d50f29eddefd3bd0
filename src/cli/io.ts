import { relative, isAbsolute } from "node:path";

/** Exit statuses shared by every command. */
export const EXIT = { ok: 0, usage: 1, partial: 2 } as const;

export class UsageError extends Error {}

/** Paths shown to people: relative to the working directory when that is shorter. */
export function displayPath(p: string): string {
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
  c: { traces: number; files: number; annotated: number; failed: number; errors: number; skipped_lines: number; skipped_traces: number; refused_files: number },
  out: { findings: string; summary: string; runId: string; db: string; reports: object },
): void {
  console.log(
    `\n${c.traces} traces from ${c.files} files (${c.annotated} annotated${c.failed ? `, ${c.failed} could not be annotated` : ""}); ` +
      `${c.errors} errors, ${c.skipped_lines} skipped lines/records, ${c.skipped_traces} skipped traces, ${c.refused_files} refused files.`,
  );
  console.log(`Wrote ${displayPath(out.findings)}, ${displayPath(out.summary)}; run ${out.runId} stored in ${displayPath(out.db)}.`);
  const reports = Object.values(out.reports).filter((v): v is string => typeof v === "string");
  console.log(`Reports: ${reports.map(displayPath).join(", ")}.`);
}
