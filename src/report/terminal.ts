import type { RunSummary } from "./summary.js";

const pct = (x: number | null) => (x === null ? "-" : `${Math.round(x * 100)}%`);

/** The per-model table printed after `analyze`. */
export function modelTable(s: RunSummary): string {
  const headers = ["model", "traces", "success", "failed", "modes/failed", "top modes"];
  const rows = s.models.map((m) => [
    m.model,
    String(m.traces),
    m.successes + m.failures ? `${pct(m.success_rate)} (${m.successes}/${m.successes + m.failures})` : "unknown",
    String(m.failures),
    m.modes_per_failed_trace === null ? "-" : m.modes_per_failed_trace.toFixed(2),
    m.top_modes.map((t) => `FM-${t.code} ${t.name} ${pct(t.prevalence)}`).join("; ") || "none",
  ]);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 1 || i === 3 || i === 4 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
