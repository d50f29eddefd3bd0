import { INTERVENTIONS, type GroupStats } from "../analysis/index.js";
import { HIGHLIGHT_TITLES, type HighlightKind } from "../trace/index.js";
import type { ReportData } from "./data.js";
import { cleanText, escapeHtml } from "./escape.js";
import { formatNumber } from "./html.js";
import { skippedText } from "./summary.js";
import { measurementNotes } from "./text.js";

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
  const notes = measurementNotes(g).map(mdText).join("\n\n");
  if (rows.length === 0) return `No mode found in this group's annotated traces.${notes ? `\n\n${notes}` : ""}`;
  return table(["mode", "name", "all", "successful", "failed", "Δ pp [95% CI]", "p", "class"], rows, [2, 3, 4, 5, 6]) + (notes ? `\n\n${notes}` : "");
}

/** Highlights listed per kind at most in report.md; all are in summary.json `replay.highlights` and report.html. */
const MD_HIGHLIGHTS = 20;

/** "What the recommended fixes would have caught": the guard replay in summary.json `replay`, with its definitions as footnotes. */
function replayMarkdown(d: ReportData): string[] {
  const r = d.summary.replay!;
  const t = r.totals;
  const int = (x: number) => formatNumber(x, "int");
  const out: string[] = [`## What the recommended fixes would have caught`, ""];
  out.push(
    `Every trace replayed step by step through the runtime guards (configuration ${mdText(r.guards)}), as if they had been in the loop: ` +
      `${int(t.intervened)} of ${int(t.traces)} traces with an intervention (${int(t.interventions)} interventions), ${int(t.stopped)} ended early[^replay-truncation], ` +
      `${int(t.steps_saved)} steps saved[^replay-steps-saved], ${int(t.tokens_saved)} tokens saved[^replay-tokens-saved], ${int(t.errors)} replay errors.`,
    "",
  );
  out.push(`### Per guard`, "");
  out.push(
    table(
      ["guard", "recommended fix", "modes", "traces", "interventions", "warn", "block", "require", "stop", "findings addressed[^replay-addresses]"],
      r.guards_summary.map((g, i) => {
        const j = d.replayGuards?.[i];
        return [
          mdText(g.guard),
          j?.fixes.map((f) => mdText(f.name)).join(", ") || `not in catalogue v${mdText(INTERVENTIONS.version)}`,
          g.modes.map((m) => `FM-${mdText(m)}`).join(", ") || "–",
          int(g.traces),
          int(g.interventions),
          int(g.decisions.warn),
          int(g.decisions.block),
          int(g.decisions.require),
          int(g.decisions.stop),
          int(g.findings_addressed),
        ];
      }),
      [3, 4, 5, 6, 7, 8, 9],
    ),
    "",
  );
  for (const j of d.replayGuards ?? []) {
    if (!j.fixes.length) continue;
    const where = j.ranks.length
      ? `ranked in ${j.ranks.length} model${j.ranks.length === 1 ? "" : "s"}: ${j.ranks.map((x) => `${mdText(x.model)} #${x.rank} (leverage ${num2(x.leverage)})`).join(", ")}.`
      : "no leverage in any model.";
    out.push(`- ${mdText(j.guard)} (${j.fixes.map((f) => mdText(f.name)).join(", ")}): ${where}`);
  }
  if (d.replayGuards?.some((j) => j.fixes.length)) out.push("");
  out.push(`### Per model`, "");
  out.push(
    table(
      ["model", "traces", "intervened", "ended early", "warn", "block", "require", "stop", "steps saved", "tokens saved", "findings addressed / in guarded modes"],
      r.models.map((m) => [
        mdText(m.model),
        int(m.traces),
        int(m.intervened),
        int(m.stopped),
        int(m.decisions.warn),
        int(m.decisions.block),
        int(m.decisions.require),
        int(m.decisions.stop),
        int(m.steps_saved),
        int(m.tokens_saved),
        `${int(m.findings_addressed)}/${int(m.findings)}`,
      ]),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    ),
    "",
  );
  out.push(`### Cross-tab with the rule detectors`, "");
  out.push(
    "Traces per MAST mode. Caught: an intervention of the mode addresses a finding of it; guard only: an intervention but no finding of the mode (the guard saw what the rules did not, or a false alarm).",
    "",
  );
  out.push(
    table(
      ["mode", "name", "guards", "interventions", "traces intervened", "traces with finding", "caught", "guard only"],
      r.crosstab.map((c) => [`FM-${mdText(c.mode)}`, mdText(c.name), c.guards.map(mdText).join(", ") || "–", int(c.interventions), int(c.traces_intervened), int(c.traces_with_finding), int(c.traces_caught), int(c.traces_guard_only)]),
      [3, 4, 5, 6, 7],
    ),
    "",
  );
  out.push(`### What the guards would have caught`, "", "The first catch of each kind per trace, in trace order.", "");
  for (const kind of Object.keys(HIGHLIGHT_TITLES) as HighlightKind[]) {
    const hits = r.highlights.filter((h) => h.kind === kind);
    out.push(`#### ${mdText(HIGHLIGHT_TITLES[kind])}: ${hits.length} trace${hits.length === 1 ? "" : "s"}`, "");
    for (const h of hits.slice(0, MD_HIGHLIGHTS))
      out.push(`- ${mdText(h.trace_id)} (${mdText(h.model)}) step ${h.step ?? "–"}: ${mdText(h.guard)} ${mdText(h.decision)} (FM-${mdText(h.mode)}): ${mdText(h.reason.length > 300 ? `${h.reason.slice(0, 299)}…` : h.reason)}`);
    if (hits.length > MD_HIGHLIGHTS) out.push(`- … ${hits.length - MD_HIGHLIGHTS} more in report.html and summary.json`);
    if (hits.length) out.push("");
  }
  const errors = r.traces.flatMap((x) => x.errors.map((e) => ({ trace: x.trace_id, ...e })));
  if (errors.length) {
    out.push(`### Errors during the replay (${errors.length})`, "");
    for (const e of errors.slice(0, MD_HIGHLIGHTS)) out.push(`- ${mdText(e.trace)}${e.step !== undefined ? ` step ${e.step}` : ""}: ${mdText(e.source)}: ${mdText(e.message)}`);
    if (errors.length > MD_HIGHLIGHTS) out.push(`- … ${errors.length - MD_HIGHLIGHTS} more in summary.json`);
    out.push("");
  }
  out.push(
    `[^replay-truncation]: Ended early: ${mdText(r.definitions.truncation)}`,
    `[^replay-steps-saved]: Steps saved: ${mdText(r.definitions.steps_saved)}`,
    `[^replay-tokens-saved]: Tokens saved: ${mdText(r.definitions.tokens_saved)}`,
    `[^replay-addresses]: Findings addressed: ${mdText(r.definitions.addresses)}`,
    "",
  );
  return out;
}

/** Renders report.md. */
export function renderMarkdown(d: ReportData): string {
  const s = d.summary;
  const c = s.counts;
  const out: string[] = [];
  out.push(`# faultline report`, "");
  out.push(`Run ${mdText(s.run_id)} · annotator ${mdText(s.annotator)} · taxonomy ${mdText(d.taxonomy.version)}`, "");
  if (s.status === "incomplete") out.push("**Incomplete:** the run was interrupted; everything below covers only the traces read before it stopped.", "");
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
    "Counts are traces with the mode / traces where it was measured (a mode no detector or judge examined is not measured: unknown, never counted as absent). Δ = failed − successful prevalence in percentage points with a Newcombe 95% interval, counting only outcome-independent evidence (a finding made because the run failed cannot show that the mode goes with failure); p = Fisher's exact test on the same counts; class: fatal (more common in failures by both), benign (no excess, present in successes), undetermined.",
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
  if (s.replay) out.push(...replayMarkdown(d));
  const notAnnotated = d.traces.filter((t) => t.modes === null);
  if (notAnnotated.length) {
    out.push(`## Traces that could not be annotated (${notAnnotated.length})`, "");
    for (const t of notAnnotated.slice(0, 50)) out.push(`- ${mdText(t.trace_id)}: ${mdText(t.error ?? "no failure vector")}`);
    if (notAnnotated.length > 50) out.push(`- … ${notAnnotated.length - 50} more in findings.jsonl`);
    out.push("");
  }
  out.push(`Per-trace evidence: report.html and findings.jsonl. Per-trace vectors and per-group tables: traces.csv, groups.csv, interventions.csv.`, "");
  out.push(`Left out while reading: ${skippedText(c)} (summary.json \`counts\`; each one named in the reader's diagnostics).`, "");
  return out.join("\n");
}
