import { existsSync } from "node:fs";
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

/** One ITBench run whose outcome needs explaining, as listed under `analyze`. */
interface OutcomeNote {
  trace_id: string;
  why: string;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v.trim() : undefined);

/**
 * Why ITBench runs could not be scored, or were scored 0 for want of a deliverable, for the terminal after `analyze`
 * and `judge` (the same facts are in findings.jsonl under `outcome.details`: `error`, `deliverable_problem`,
 * `deliverable_missing_reason`). A v2 ground truth, which has no root-cause groups to score against, gets a notice of
 * its own naming the files. Empty when every ITBench run was scored from a deliverable (or there is none).
 */
export function outcomeNotes(diagnoses: readonly { trace_id: string; outcome: { success: boolean | null; score?: number | null; metric?: string | null; rule?: string | null; details?: Record<string, unknown> } }[], max = 10): string[] {
  const unscored: OutcomeNote[] = [];
  const missing: OutcomeNote[] = [];
  const partial: OutcomeNote[] = [];
  const v2 = new Map<string, number>();
  let itbench = 0;
  for (const d of diagnoses) {
    const o = d.outcome;
    const det = o.details ?? {};
    if (!(o.rule ?? "").startsWith("itbench")) continue;
    itbench++;
    const error = str(det.error);
    const problem = str(det.deliverable_problem);
    const reason = str(det.deliverable_missing_reason);
    if (det.ground_truth_version === "v2" || (error && /ground truth v2/.test(error))) {
      const gt = str(det.ground_truth) ?? "(unnamed ground truth)";
      v2.set(gt, (v2.get(gt) ?? 0) + 1);
      continue;
    }
    if (o.score === null || o.score === undefined) unscored.push({ trace_id: d.trace_id, why: error ?? problem ?? "no score and no reason recorded" });
    else if (det.deliverable_source === "missing") missing.push({ trace_id: d.trace_id, why: reason ?? problem ?? "no deliverable" });
    else if (o.success === null) partial.push({ trace_id: d.trace_id, why: `${o.metric ?? "score"} ${o.score} is between the failure and success thresholds${problem ? `; ${problem}` : ""}` });
    else if (problem) partial.push({ trace_id: d.trace_id, why: `scored ${o.score}: ${problem}` });
  }
  const out: string[] = [];
  const list = (title: string, notes: OutcomeNote[]) => {
    if (!notes.length) return;
    out.push(`  ${title} (${notes.length}):`);
    for (const n of notes.slice(0, max)) out.push(`    ${n.trace_id}  ${n.why}`);
    if (notes.length > max) out.push(`    … ${notes.length - max} more: outcome.details in findings.jsonl`);
  };
  list("not scored (outcome unknown)", unscored);
  list("no deliverable, scored 0", missing);
  list("scored, outcome unknown or the deliverable had problems", partial);
  if (out.length || v2.size) out.unshift(`\nITBench outcomes: ${itbench} run${itbench === 1 ? "" : "s"}, ${unscored.length + [...v2.values()].reduce((a, b) => a + b, 0)} not scored, ${missing.length} without a deliverable`);
  for (const [gt, n] of v2) {
    const v1 = gt.replace(/(\.ya?ml)$/i, "_v1$1");
    const hint = v1 !== gt && existsSync(v1) ? `--ground-truth ${v1}` : "the scenario's v1 file (…_groundtruth_v1.yaml) with --ground-truth, or put it beside the runs";
    out.push(
      `\nNotice: ${gt} is an ITBench ground truth in the v2 format, which has no root-cause groups: the ${n} run${n === 1 ? "" : "s"} scored against it ${n === 1 ? "has" : "have"} no outcome. ` +
        `Root-cause scoring needs a v1 ground truth: give ${hint}.`,
    );
  }
  return out;
}
