import type { AgreementReport, DiffReport, GroupInterventions, GroupReport, GroupStats, ModeAgreement, ModeDiff } from "../analysis/index.js";
import { cleanText } from "./escape.js";
import { formatNumber } from "./html.js";

/*
 * Plain-text summaries for the terminal: `faultline stats`, `eval` and `diff`. Only formatting — every number comes
 * from the analysis reports. Trace-controlled text (group values, ids) goes through cleanText so control characters
 * and bidi overrides cannot rewrite the terminal.
 */

const pct = (x: number | null) => formatNumber(x, "pct");
const num2 = (x: number | null) => formatNumber(x, "num2");
const pp = (x: number | null) => formatNumber(x, "pp");
const p3 = (x: number | null) => formatNumber(x, "p");
const safe = (s: unknown) => cleanText(s).replace(/[\r\n\t]/g, " ");

/** Aligned columns; columns listed in `right` are right-aligned. */
export function columns(headers: string[], rows: string[][], right: number[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  ").trimEnd(), ...rows.map(line)].join("\n");
}

const share = (n: number, of: number) => (of > 0 ? `${n}/${of} ${pct(n / of)}` : "–");

function groupHeading(g: GroupStats, by: string | null): string {
  const sr = g.successes + g.failures ? `success ${pct(g.success_rate.estimate)} [${pct(g.success_rate.lo)}, ${pct(g.success_rate.hi)}] (${g.successes}/${g.successes + g.failures})` : "outcome unknown";
  const mpf = g.modes_per_failed_trace.mean === null ? "" : `; ${num2(g.modes_per_failed_trace.mean)} modes per failed trace`;
  return `${by ? `${safe(by)} = ${safe(g.value)}` : "all traces"}: ${g.traces} traces (${g.annotated} annotated), ${sr}${g.unknown_outcome ? `, ${g.unknown_outcome} unknown` : ""}${mpf}`;
}

/**
 * What a group's table leaves unsaid: modes found only because the run failed (left out of Δ, p and class, with the
 * circular all-findings Δ beside), and modes no annotator measured (unknown, not absent).
 */
export function measurementNotes(g: GroupStats, code = (c: string) => `FM-${c}`): string[] {
  const out: string[] = [];
  const circular = g.modes.filter((m) => m.counts.all > m.independent.counts.all);
  if (circular.length)
    out.push(
      `Δ, p and class count outcome-independent evidence only (circularity); found only through the outcome: ${circular
        .map((m) => {
          const n = m.counts.all - m.independent.counts.all;
          const d = m.delta_pp_all_findings.value;
          return `${code(m.code)} in ${n} trace${n === 1 ? "" : "s"} (${d === null ? "" : `Δ over all findings ${pp(d)} pp, `}circular)`;
        })
        .join("; ")}.`,
    );
  if (g.annotated > 0) {
    const none = g.modes.filter((m) => m.judged.all === 0).map((m) => code(m.code));
    if (none.length) out.push(`Not measured (no detector or judge examined them; unknown, not absent): ${none.join(", ")}.`);
    const part = g.modes.filter((m) => m.judged.all > 0 && m.judged.all < g.annotated);
    if (part.length) out.push(`Measured on part of the annotated traces only: ${part.map((m) => `${code(m.code)} ${m.judged.all}/${g.annotated}`).join(", ")}.`);
  }
  return out;
}

/** `faultline stats`: per group, the modes seen with prevalence, Δ, p and class, then the top interventions. */
export function statsText(report: GroupReport, interventions: GroupInterventions[] = [], topInterventions = 3): string {
  const out: string[] = [];
  report.groups.forEach((g, i) => {
    out.push(groupHeading(g, report.by));
    const rows = g.modes
      .filter((m) => m.counts.all > 0)
      .map((m) => [
        `FM-${m.code}`,
        m.name,
        share(m.counts.all, m.judged.all),
        share(m.counts.successful, m.judged.successful),
        share(m.counts.failed, m.judged.failed),
        m.delta_pp.value === null ? "–" : `${pp(m.delta_pp.value)} [${pp(m.delta_pp.lo)}, ${pp(m.delta_pp.hi)}]`,
        p3(m.p_value),
        m.class,
      ]);
    out.push(rows.length ? columns(["mode", "name", "all", "successful", "failed", "Δ pp [95% CI]", "p", "class"], rows, [2, 3, 4, 5, 6]) : "  no mode found");
    out.push(...measurementNotes(g));
    const iv = interventions[i]?.ranking.filter((r) => r.leverage > 0).slice(0, topInterventions) ?? [];
    if (iv.length) {
      out.push("Interventions by leverage:");
      for (const r of iv) out.push(`  ${r.rank}. ${safe(r.explanation)}`);
    }
    out.push("");
  });
  return out.join("\n").trimEnd();
}

function agreementRows(modes: ModeAgreement[]): string[][] {
  return modes.map((m) => [
    m.code.startsWith("FC") ? m.code : `FM-${m.code}`,
    String(m.n),
    m.n === 0 && m.not_measured > 0 ? "not measured" : `${m.tp}/${m.fp}/${m.fn}/${m.tn}`,
    m.not_measured ? String(m.not_measured) : "",
    num2(m.precision),
    num2(m.recall),
    num2(m.f1),
    num2(m.kappa),
    num2(m.accuracy),
  ]);
}

const listIds = (ids: string[], max: number) => (ids.length ? `${ids.slice(0, max).map(safe).join(", ")}${ids.length > max ? `, … ${ids.length - max} more (--json lists all)` : ""}` : "none");

/** `faultline eval`: matching, per-mode scores, macro/micro, attribution. */
export function agreementText(r: AgreementReport, maxIds = 10): string {
  const m = r.matching;
  const out: string[] = [];
  out.push(`Matched ${m.matched} traces (${m.matched_by_alias} by alias).`);
  out.push(`Only in reference (${m.reference_only.length}): ${listIds(m.reference_only, maxIds)}`);
  out.push(`Only in predictions (${m.predicted_only.length}): ${listIds(m.predicted_only, maxIds)}`);
  if (m.ambiguous.length) out.push(`Ambiguous aliases (${m.ambiguous.length}): ${m.ambiguous.slice(0, maxIds).map((a) => `${safe(a.reference)} → ${a.candidates.map(safe).join(" | ")}`).join("; ")}`);
  if (m.duplicate_reference.length) out.push(`Duplicate reference ids (first copy used): ${listIds(m.duplicate_reference, maxIds)}`);
  if (m.duplicate_predicted.length) out.push(`Duplicate predicted ids (first copy used): ${listIds(m.duplicate_predicted, maxIds)}`);
  out.push("");
  const v = r.vectors;
  if (v.compared > 0) {
    out.push(`Failure vectors compared on ${v.compared} matched traces${v.reference_without ? ` (${v.reference_without} references carry no vector` : ""}${v.predicted_without ? `${v.reference_without ? ", " : " ("}${v.predicted_without} predictions carry none` : ""}${v.reference_without || v.predicted_without ? ")" : ""}.`);
    const headers = ["mode", "n", "tp/fp/fn/tn", "unmeasured", "precision", "recall", "F1", "kappa", "accuracy"];
    out.push(columns(headers, [...agreementRows(r.modes), ...agreementRows(r.rollups)], [1, 3, 4, 5, 6, 7, 8]));
    if (r.not_measured.length)
      out.push(`Not measured by the prediction (no detector or judge examined them; left out of every score, never counted as negatives): ${r.not_measured.map((c) => `FM-${c}`).join(", ")}.`);
    if (r.modes.some((m) => m.n > 0 && m.not_measured > 0))
      out.push("unmeasured = matched traces with a reference label where the prediction did not measure the mode: left out of that mode's table.");
    out.push(
      `macro (over ${r.macro.modes} modes): precision ${num2(r.macro.precision)}, recall ${num2(r.macro.recall)}, F1 ${num2(r.macro.f1)}, kappa ${num2(r.macro.kappa)}, accuracy ${num2(r.macro.accuracy)}`,
    );
    out.push(
      `micro (pooled ${r.micro.tp}/${r.micro.fp}/${r.micro.fn}/${r.micro.tn}): precision ${num2(r.micro.precision)}, recall ${num2(r.micro.recall)}, F1 ${num2(r.micro.f1)}, kappa ${num2(r.micro.kappa)}, accuracy ${num2(r.micro.accuracy)}`,
    );
  } else out.push(`No matched trace has a failure vector on both sides${v.reference_without ? ` (${v.reference_without} references carry attribution only)` : ""}: no per-mode scores.`);
  const a = r.attribution;
  if (a) {
    out.push("");
    out.push(`Attribution on ${a.traces} matched traces whose reference blames an agent or a step:`);
    out.push(`  agent accuracy ${share(a.agent.correct, a.agent.total)}${a.agent.missing_prediction ? ` (${a.agent.missing_prediction} without a predicted agent, counted wrong)` : ""}`);
    out.push(
      `  step accuracy exact ${share(a.step.exact.correct, a.step.total)}; ${a.step.within.map((w) => `±${w.k} ${share(w.correct, a.step.total)}`).join("; ")}${a.step.missing_prediction ? ` (${a.step.missing_prediction} without a predicted step, counted wrong)` : ""}`,
    );
  }
  return out.join("\n");
}

function diffRow(m: ModeDiff): string[] {
  const d = m.test === "mcnemar-exact" ? m.paired!.delta_pp : m.unpaired.delta_pp;
  return [
    m.code.startsWith("FC") ? m.code : `FM-${m.code}`,
    share(m.before.count, m.before.judged),
    share(m.after.count, m.after.judged),
    m.delta_pp === null ? "–" : `${pp(m.delta_pp)} [${pp(d.lo)}, ${pp(d.hi)}]`,
    m.paired ? `+${m.paired.rose} −${m.paired.fell}` : "–",
    p3(m.p_value),
    m.test === "mcnemar-exact" ? "paired" : m.test === "fisher-exact" ? "unpaired" : "–",
    m.significant ? (m.direction === "rose" ? "ROSE" : "FELL") : "",
  ];
}

/** `faultline diff`: per group, modes that moved (all modes with a change), and the traces that changed label. */
export function diffText(r: DiffReport, maxTraces = 20): string {
  const m = r.matching;
  const out: string[] = [];
  out.push(`Matched ${m.matched} traces (${m.matched_by_alias} by alias); ${m.before_only.length} only before, ${m.after_only.length} only after${m.regrouped ? `; ${m.regrouped} matched traces changed group` : ""}.`);
  if (m.before_only.length) out.push(`Only before: ${listIds(m.before_only, 10)}`);
  if (m.after_only.length) out.push(`Only after: ${listIds(m.after_only, 10)}`);
  if (m.duplicate_before.length || m.duplicate_after.length) out.push(`Duplicate ids (first copy used): before ${listIds(m.duplicate_before, 10)}; after ${listIds(m.duplicate_after, 10)}`);
  out.push("");
  for (const g of r.groups) {
    const sr = (s: { successes: number; failures: number; success_rate: { estimate: number | null } }) => (s.successes + s.failures ? `${pct(s.success_rate.estimate)} (${s.successes}/${s.successes + s.failures})` : "unknown");
    out.push(`${r.by ? `${safe(r.by)} = ${safe(g.value)}` : "all traces"}: ${g.before.traces} → ${g.after.traces} traces, ${g.pairs} matched; success ${sr(g.before)} → ${sr(g.after)}; ${g.test === "mcnemar-exact" ? "compared on the matched pairs (exact McNemar)" : g.test === "fisher-exact" ? "compared as independent samples (Fisher)" : "no comparison (one side empty)"}`);
    const moved = [...g.modes, ...g.rollups].filter((x) => x.delta_pp !== null && x.delta_pp !== 0);
    out.push(moved.length ? columns(["mode", "before", "after", "Δ pp [95% CI]", "pairs", "p", "test", ""], moved.map(diffRow), [1, 2, 3, 5]) : "  no mode changed");
    if (g.rose.length || g.fell.length) out.push(`Significant: rose ${g.rose.map((c) => `FM-${c}`).join(", ") || "none"}; fell ${g.fell.map((c) => `FM-${c}`).join(", ") || "none"}.`);
    out.push("");
  }
  out.push(`Traces that changed (${r.changed.length}; ${r.unchanged} matched traces unchanged):`);
  for (const c of r.changed.slice(0, maxTraces)) {
    const parts = [
      ...(c.added.length ? [`+${c.added.map((x) => `FM-${x}`).join(" +")}`] : []),
      ...(c.removed.length ? [`−${c.removed.map((x) => `FM-${x}`).join(" −")}`] : []),
      ...(c.vector ? [`vector ${c.vector}`] : []),
      ...(c.outcome.before !== c.outcome.after ? [`outcome ${c.outcome.before} → ${c.outcome.after}`] : []),
      ...(c.group.before !== c.group.after ? [`group ${safe(c.group.before)} → ${safe(c.group.after)}`] : []),
    ];
    out.push(`  ${safe(c.trace_id)}${c.before_id ? ` (was ${safe(c.before_id)})` : ""}: ${parts.join("; ")}`);
  }
  if (r.changed.length > maxTraces) out.push(`  … ${r.changed.length - maxTraces} more (--json lists all)`);
  return out.join("\n").trimEnd();
}
