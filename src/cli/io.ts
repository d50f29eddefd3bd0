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
