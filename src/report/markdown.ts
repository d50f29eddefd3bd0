import { INTERVENTIONS, type GroupStats } from "../analysis/index.js";
import type { ReportData } from "./data.js";
import { cleanText, escapeHtml } from "./escape.js";
import { formatNumber } from "./html.js";

/*
 * report.md: the same statistics as report.html, as Markdown tables (no per-trace evidence: that is what the HTML and
 * findings.jsonl are for). Untrusted text goes through escapeHtml (Markdown renderers pass raw HTML through) and then
 * has the characters that would break a table cell or start Markdown syntax escaped.
 */

/** Text for a Markdown table cell or line: HTML-escaped, table and inline syntax neutralised, one line. */
export function mdText(value: unknown): string {
  // Markdown syntax first, then HTML: escaping after would break the entities escapeHtml writes (`&#39;`).
  const markdownSafe = cleanText(value)
    .replace(/[\\`*_[\]|#~]/g, (c) => `\\${c}`)
    .replace(/\r?\n|\r/g, " ");
  return escapeHtml(markdownSafe);
}

const pct = (x: number | null) => formatNumber(x, "pct");
const num2 = (x: number | null) => formatNumber(x, "num2");
const pp = (x: number | null) => formatNumber(x, "pp");

function table(headers: string[], rows: string[][], right: number[] = []): string {
  const align = headers.map((_, i) => (right.includes(i) ? "---:" : "---"));
  return [`| ${headers.join(" | ")} |`, `| ${align.join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

function modeTable(g: GroupStats): string {
  const rows = g.modes
    .filter((m) => m.counts.all > 0 || (m.delta_pp.value !== null && m.delta_pp.value !== 0))
    .map((m) => [
      `FM-${m.code}`,
      mdText(m.name),
      `${m.counts.all}/${m.judged.all} (${pct(m.prevalence.all)})`,
      m.judged.successful ? `${m.counts.successful}/${m.judged.successful} (${pct(m.prevalence.successful)})` : "–",
      m.judged.failed ? `${m.counts.failed}/${m.judged.failed} (${pct(m.prevalence.failed)})` : "–",
      m.delta_pp.value === null ? "–" : `${pp(m.delta_pp.value)} [${pp(m.delta_pp.lo)}, ${pp(m.delta_pp.hi)}]`,
      formatNumber(m.p_value, "p"),
      m.class,
    ]);
  if (rows.length === 0) return "No mode found in this group's annotated traces.";
  return table(["mode", "name", "all", "successful", "failed", "Δ pp [95% CI]", "p", "class"], rows, [2, 3, 4, 5, 6]);
}

/** Renders report.md. */
export function renderMarkdown(d: ReportData): string {
  const s = d.summary;
  const c = s.counts;
  const out: string[] = [];
  out.push(`# faultline report`, "");
  out.push(`Run ${mdText(s.run_id)} · annotator ${mdText(s.annotator)} · taxonomy ${mdText(d.taxonomy.version)}`, "");
  out.push(
    `${c.traces ?? 0} traces from ${c.files ?? "?"} files: ${c.annotated ?? 0} annotated, ${c.failed ?? 0} could not be annotated; ` +
      `${c.errors ?? 0} read errors, ${c.skipped_traces ?? 0} skipped traces, ${c.refused_files ?? 0} refused files.`,
    "",
  );
  out.push(`## Models`, "");
  out.push(
    table(
      ["model", "traces", "annotated", "success rate [95% CI]", "failed", "modes per failed trace [95% CI]", "top modes"],
      s.statistics.map((g, i) => {
        const m = s.models[i]!;
        return [
          mdText(g.value),
          String(g.traces),
          String(g.annotated),
          g.successes + g.failures ? `${pct(g.success_rate.estimate)} [${pct(g.success_rate.lo)}, ${pct(g.success_rate.hi)}] (${g.successes}/${g.successes + g.failures})` : "unknown",
          String(g.failures),
          g.modes_per_failed_trace.mean === null ? "–" : `${num2(g.modes_per_failed_trace.mean)} [${num2(g.modes_per_failed_trace.lo)}, ${num2(g.modes_per_failed_trace.hi)}]`,
          m.top_modes.map((t) => `FM-${t.code} ${pct(t.prevalence)}`).join(", ") || "none",
        ];
      }),
      [1, 2, 3, 4, 5],
    ),
    "",
  );
  out.push(`## Per model`, "");
  out.push(
    "Counts are traces with the mode / traces where it was judged. Δ = failed − successful prevalence in percentage points with a Newcombe 95% interval; p = Fisher's exact test; class: fatal (more common in failures by both), benign (no excess, present in successes), undetermined.",
    "",
  );
  s.statistics.forEach((g, i) => {
    out.push(`### ${mdText(g.value)}`, "");
    out.push(`${g.traces} traces, ${g.annotated} annotated, ${g.successes} successful, ${g.failures} failed, ${g.unknown_outcome} unknown.`, "");
    out.push(modeTable(g), "");
    if (g.predictors.length)
      out.push(`Strongest predictors of failure: ${g.predictors.slice(0, 5).map((p) => `FM-${p.code} ${pp(p.delta_pp)} pp (${p.class})`).join("; ")}.`, "");
    if (g.cooccurrence.length)
      out.push(`Most frequent pairs: ${g.cooccurrence.slice(0, 5).map((x) => `FM-${x.a} + FM-${x.b} in ${x.both}/${x.judged} (lift ${num2(x.lift)})`).join("; ")}.`, "");
    const iv = s.interventions[i];
    const ranked = iv?.ranking.filter((r) => r.leverage > 0) ?? [];
    if (ranked.length) {
      out.push(`Interventions, by leverage (catalogue v${mdText(iv!.catalogue)}):`, "");
      ranked.forEach((r) => {
        const action = INTERVENTIONS.interventions.find((iv) => iv.id === r.id)?.action;
        out.push(`${r.rank}. **${mdText(r.name)}** — leverage ${num2(r.leverage)}. ${mdText(r.explanation)}${action ? ` What to build: ${mdText(action)}` : ""} Guard: ${mdText(r.guard.id)} (${mdText(r.guard.module)}).`);
      });
      out.push("");
    }
  });
  const notAnnotated = d.traces.filter((t) => t.modes === null);
  if (notAnnotated.length) {
    out.push(`## Traces that could not be annotated (${notAnnotated.length})`, "");
    for (const t of notAnnotated.slice(0, 50)) out.push(`- ${mdText(t.trace_id)}: ${mdText(t.error ?? "no failure vector")}`);
    if (notAnnotated.length > 50) out.push(`- … ${notAnnotated.length - 50} more in findings.jsonl`);
    out.push("");
  }
  out.push(`Per-trace evidence: report.html and findings.jsonl. Per-trace vectors and per-group tables: traces.csv, groups.csv, interventions.csv.`, "");
  return out.join("\n");
}
