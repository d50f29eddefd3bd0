import { createHash } from "node:crypto";
import { INTERVENTIONS, type GroupStats, type RankedIntervention } from "../analysis/index.js";
import { HIGHLIGHT_TITLES, type HighlightKind, type ReplayDecision, type ReplaySummary } from "../trace/index.js";
import type { ReplayGuardJoin, ReportData, TraceEntry } from "./data.js";
import { h as html, trusted, type Html } from "./escape.js";
import { skippedText } from "./summary.js";

/*
 * report.html: one self-contained file that opens offline. Inline CSS (allowed by a hash in the Content Security
 * Policy), inline SVG charts, no script, no external request (the CSP forbids both). Every number taken from
 * summary.json carries `data-key` (its path in summary.json), `data-value` (the raw number) and `data-format`, so a
 * test can check what is shown against the file. Every piece of trace text goes through the `html` tag (hono/html, src/report/escape.ts `h`), which escapes whatever
 * it interpolates; only this module's own fragments, CSS and policy go in as they are.
 */

export interface HtmlOptions {
  /** Per-trace rows shown at most (default 5000); the rest are counted, and are in findings.jsonl and traces.csv. */
  maxTraces?: number;
  /** Evidence quotes longer than this are cut, saying how much was cut (default 600 characters). */
  maxEvidence?: number;
}

type Format = "pct" | "int" | "num2" | "pp" | "p";

/** How each kind of number is shown; the browser test re-implements these rules to check the page. */
export function formatNumber(value: number | null, format: Format): string {
  if (value === null || !Number.isFinite(value)) return "–";
  switch (format) {
    case "pct":
      return `${Math.round(value * 100)}%`;
    case "int":
      return String(value);
    case "num2":
      return value.toFixed(2);
    case "pp":
      return `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
    case "p":
      return value < 0.001 ? "<0.001" : value.toFixed(3);
  }
}

/** A number from summary.json, shown and tagged with where it came from. */
function stat(key: string, value: number | null, format: Format, tag = "span", attrs: Html | "" = ""): Html {
  return html`<${tag}${attrs} data-key="${key}" data-value="${value === null ? "null" : String(value)}" data-format="${format}">${formatNumber(value, format)}</${tag}>`;
}

const CSS = `
:root{--fg:#1d2125;--muted:#5c6670;--line:#d8dde3;--bg:#fff;--soft:#f4f6f8;--fatal:#b2182b;--benign:#1a7f37;--und:#8a939c;--accent:#2457a6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header,main,footer{max-width:1200px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:32px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px}
p.note{color:var(--muted);margin:4px 0 10px;max-width:900px}
.meta{color:var(--muted)}
.meta .incomplete{color:#9a6700}
.meta code{font-size:12px}
nav a{margin-right:12px;color:var(--accent);text-decoration:none}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:110px}
.card b{display:block;font-size:20px}
.card small{color:var(--muted)}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.ci{color:var(--muted);font-size:12px}
.scroll{overflow-x:auto}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(490px,1fr));gap:16px}
.panel{border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.panel h3{margin-top:4px}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.badge{display:inline-block;border-radius:3px;padding:0 5px;margin:1px 2px 1px 0;font-size:12px;background:#eef1f4;border:1px solid var(--line);white-space:nowrap}
.badge.fatal{border-color:var(--fatal);color:var(--fatal)}
.badge.benign{border-color:var(--benign);color:var(--benign)}
.ok{color:var(--benign);font-weight:600}.bad{color:var(--fatal);font-weight:600}.unk{color:var(--muted)}
ol.iv{padding-left:22px}
ol.iv li{margin:0 0 10px}
ol.iv .lev{font-weight:600}
details{margin:2px 0}
details summary{cursor:pointer}
blockquote{margin:4px 0 6px;padding:4px 8px;border-left:3px solid var(--line);background:var(--soft);white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:16em;overflow:auto}
td.id{word-break:break-all;max-width:280px}
td.id small{color:var(--muted)}
footer{color:var(--muted);font-size:12px;padding:24px 20px 40px}
h4{font-size:13px;margin:12px 0 4px}
ul.hl{padding-left:20px;margin:4px 0 8px}
ul.hl li{margin:0 0 4px}
ol.fn{font-size:12px;color:var(--muted);padding-left:22px}
sup a{color:var(--accent);text-decoration:none}
.dec{border-left:3px solid var(--fatal);padding-left:6px;min-width:170px;max-width:340px}
.dec.none{border-left-color:var(--line);color:var(--muted)}
.dec .why{white-space:pre-wrap;word-break:break-word;font-size:12px;margin-top:2px}
`;

const CLASS_COLOUR: Record<string, string> = { fatal: "#b2182b", benign: "#1a7f37", undetermined: "#8a939c" };

/** White → dark red by prevalence. */
function heat(p: number | null): { fill: string; text: string } {
  if (p === null) return { fill: "#f4f6f8", text: "#8a939c" };
  const t = Math.max(0, Math.min(1, p));
  const mix = (a: number, b: number) => Math.round(a + (b - a) * t);
  return { fill: `rgb(${mix(255, 178)},${mix(255, 24)},${mix(255, 43)})`, text: t > 0.55 ? "#ffffff" : "#1d2125" };
}

/** Fragments joined by a constant separator; "" (falsy) when there are none. */
const cat = (xs: readonly Html[], sep = ""): Html | "" => (xs.length ? trusted(xs.join(sep)) : "");

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function section(id: string, title: string, body: Html | "", note?: Html | string): Html {
  return html`<section id="${id}"><h2>${title}</h2>${note ? html`<p class="note">${note}</p>` : ""}${body}</section>`;
}

function cards(d: ReportData): Html {
  const c = d.summary.counts;
  const card = (key: string, label: string) =>
    key in c ? html`<div class="card">${stat(`counts.${key}`, c[key] ?? null, "int", "b")}<small>${label}</small></div>` : "";
  return html`<div class="cards">${card("traces", "traces")}${card("annotated", "annotated")}${card("failed", "could not be annotated")}${card("files", "files")}${card("errors", "read errors")}${card("skipped_traces", "skipped traces")}${card("refused_files", "refused files")}<div class="card"><b>${d.summary.models.length}</b><small>models</small></div></div>`;
}

function modelsTable(d: ReportData): Html {
  const rows = cat(d.summary.statistics
    .map((g, i) => {
      const k = `statistics[${i}]`;
      const sr = g.success_rate;
      const mpf = g.modes_per_failed_trace;
      return html`<tr><td>${g.value}</td><td class="n">${stat(`${k}.traces`, g.traces, "int")}</td><td class="n">${stat(`${k}.annotated`, g.annotated, "int")}</td><td class="n">${stat(`${k}.successes`, g.successes, "int")}</td><td class="n">${stat(`${k}.failures`, g.failures, "int")}</td><td class="n">${stat(`${k}.unknown_outcome`, g.unknown_outcome, "int")}</td><td class="n">${stat(`${k}.success_rate.estimate`, sr.estimate, "pct")}${sr.estimate === null ? "" : html` <span class="ci">[${stat(`${k}.success_rate.lo`, sr.lo, "pct")}, ${stat(`${k}.success_rate.hi`, sr.hi, "pct")}]</span>`}</td><td class="n">${stat(`${k}.modes_per_failed_trace.mean`, mpf.mean, "num2")}${mpf.lo === null ? "" : html` <span class="ci">[${stat(`${k}.modes_per_failed_trace.lo`, mpf.lo, "num2")}, ${stat(`${k}.modes_per_failed_trace.hi`, mpf.hi, "num2")}]</span>`}</td></tr>`;
    })
    );
  return html`<div class="scroll"><table><thead><tr><th>model</th><th class="n">traces</th><th class="n">annotated</th><th class="n">successes</th><th class="n">failures</th><th class="n">unknown</th><th class="n">success rate [95% CI]</th><th class="n">modes per failed trace [95% CI]</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function heatmap(d: ReportData): Html {
  const codes = d.taxonomy.codes;
  const groups = d.summary.statistics;
  const labelW = 230;
  const cellW = 46;
  const cellH = 22;
  const top = 40;
  const width = labelW + codes.length * cellW + 10;
  const height = top + groups.length * cellH + 58;
  const names = new Map(d.taxonomy.modes.map((m) => [m.code, m.name]));
  const head = cat(codes
    .map((c, j) => html`<text x="${labelW + j * cellW + cellW / 2}" y="${top - 10}" text-anchor="middle" font-size="12" font-weight="600"><title>${`FM-${c} ${names.get(c) ?? ""}`}</title>${c}</text>`)
    );
  const body = cat(groups
    .map((g, i) => {
      const y = top + i * cellH;
      const label = html`<text x="${labelW - 8}" y="${y + cellH / 2 + 4}" text-anchor="end" font-size="12"><title>${`${g.value} — ${g.annotated} annotated traces`}</title>${short(g.value, 32)}</text>`;
      const cells = cat(codes
        .map((c, j) => {
          const mi = g.modes.findIndex((m) => m.code === c);
          const m = g.modes[mi];
          const p = m?.prevalence.all ?? null;
          const colour = heat(p);
          const x = labelW + j * cellW;
          // not measured (no detector or judge examined the mode in this group): hatched, never a white 0%
          const unmeasured = !m || (m.judged.all === 0 && g.annotated > 0);
          const partly = m && m.judged.all > 0 && m.judged.all < g.annotated ? ` (measured on ${m.judged.all} of ${g.annotated} annotated traces)` : "";
          const tip = unmeasured
            ? `${g.value} · FM-${c}${m ? ` ${m.name}` : ""}: not measured — no detector or judge examined it (unknown, not absent)`
            : `${g.value} · FM-${c} ${m!.name}: ${m!.counts.all} of ${m!.judged.all} annotated traces${partly}`;
          return html`<g${unmeasured ? html` data-not-measured="FM-${c}"` : ""}><title>${tip}</title><rect x="${x + 1}" y="${y + 1}" width="${cellW - 2}" height="${cellH - 2}" fill="${unmeasured ? "url(#not-measured)" : colour.fill}" rx="2"/>${stat(`statistics[${i}].modes[${mi}].prevalence.all`, p, "pct", "text", html` x="${x + cellW / 2}" y="${y + cellH / 2 + 4}" text-anchor="middle" font-size="11" fill="${colour.text}"`)}</g>`;
        })
        );
      return html`${label}${cells}`;
    })
    );
  const legendY = top + groups.length * cellH + 16;
  const legend = html`<defs><linearGradient id="heat-legend"><stop offset="0" stop-color="${heat(0).fill}"/><stop offset="1" stop-color="${heat(1).fill}"/></linearGradient><pattern id="not-measured" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eef1f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#b8c0c8" stroke-width="2"/></pattern></defs><rect x="${labelW}" y="${legendY}" width="200" height="10" fill="url(#heat-legend)" stroke="#d8dde3"/><text x="${labelW - 8}" y="${legendY + 9}" text-anchor="end" font-size="11">0%</text><text x="${labelW + 208}" y="${legendY + 9}" font-size="11">100% of annotated traces</text><rect x="${labelW}" y="${legendY + 18}" width="20" height="10" fill="url(#not-measured)" stroke="#d8dde3"/><text x="${labelW + 26}" y="${legendY + 27}" font-size="11">not measured: no detector or judge examined the mode (unknown, not 0%)</text>`;
  return html`<div class="scroll"><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Prevalence of each failure mode per model" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${head}${body}${legend}</svg></div>`;
}

function deltaChart(g: GroupStats, i: number): Html {
  const rowH = 17;
  const top = 22;
  const labelW = 44;
  const plotW = 280;
  const valueW = 140;
  const width = labelW + plotW + valueW;
  const height = top + g.modes.length * rowH + 22;
  const x = (pp: number) => labelW + ((Math.max(-100, Math.min(100, pp)) + 100) / 200) * plotW;
  const axis = html`<line x1="${x(0)}" y1="${top - 6}" x2="${x(0)}" y2="${height - 18}" stroke="#5c6670"/>${cat([-100, -50, 50, 100]
    .map((t) => html`<line x1="${x(t)}" y1="${top - 4}" x2="${x(t)}" y2="${height - 18}" stroke="#eef1f4"/><text x="${x(t)}" y="${height - 6}" text-anchor="middle" font-size="10" fill="#5c6670">${t > 0 ? "+" : ""}${t}</text>`)
    )}<text x="${x(0)}" y="${height - 6}" text-anchor="middle" font-size="10" fill="#5c6670">0</text><text x="${labelW}" y="12" font-size="11" fill="#5c6670">more in successes ←</text><text x="${labelW + plotW}" y="12" text-anchor="end" font-size="11" fill="#5c6670">→ more in failures (pp)</text>`;
  const rows = cat(g.modes
    .map((m, j) => {
      const y = top + j * rowH;
      const d = m.delta_pp;
      const colour = CLASS_COLOUR[m.class] ?? "#8a939c";
      const key = `statistics[${i}].modes[${j}]`;
      const unmeasured = m.judged.all === 0;
      const ind = m.independent.counts;
      const circular = m.counts.all > ind.all;
      const all = m.delta_pp_all_findings;
      const tip = unmeasured
        ? `FM-${m.code} ${m.name}: not measured — no detector or judge examined it, so there is nothing to compare (unknown, not absent)`
        : `FM-${m.code} ${m.name}: failed ${ind.failed}/${m.independent.judged.failed}, successful ${ind.successful}/${m.independent.judged.successful} on outcome-independent evidence; ${m.class} — ${m.reason}` +
          (circular ? `. Over all findings (incl. those made because the run failed, circular): failed ${m.counts.failed}/${m.judged.failed}, Δ ${formatNumber(all.value, "pp")} pp (hollow marker)` : "");
      // the circular all-findings delta, for reference: a hollow marker, never a bar
      const hollow = circular && all.value !== null ? html`<circle data-circular="FM-${m.code}" cx="${x(all.value)}" cy="${y + rowH / 2}" r="3.5" fill="none" stroke="#5c6670" stroke-width="1.2"/>` : "";
      const bar =
        d.value === null
          ? ""
          : html`<rect x="${Math.min(x(0), x(d.value))}" y="${y + 3}" width="${Math.max(1, Math.abs(x(d.value) - x(0)))}" height="${rowH - 6}" fill="${colour}" opacity="0.8"/>${
              d.lo !== null && d.hi !== null ? html`<line x1="${x(d.lo)}" y1="${y + rowH / 2}" x2="${x(d.hi)}" y2="${y + rowH / 2}" stroke="#1d2125" stroke-width="1.2"/><line x1="${x(d.lo)}" y1="${y + 4}" x2="${x(d.lo)}" y2="${y + rowH - 4}" stroke="#1d2125"/><line x1="${x(d.hi)}" y1="${y + 4}" x2="${x(d.hi)}" y2="${y + rowH - 4}" stroke="#1d2125"/>` : ""
            }`;
      return html`<g><title>${tip}</title><text x="${labelW - 6}" y="${y + rowH / 2 + 4}" text-anchor="end" font-size="11">${m.code}</text>${bar}${stat(`${key}.delta_pp.value`, d.value, "pp", "text", html` x="${labelW + plotW + 8}" y="${y + rowH / 2 + 4}" font-size="11" fill="${colour}" font-weight="${m.class === "fatal" ? 700 : 400}"`)}<text x="${labelW + plotW + 52}" y="${y + rowH / 2 + 4}" font-size="10" fill="${unmeasured ? "#8a939c" : colour}"${unmeasured ? html` data-not-measured="FM-${m.code}" font-style="italic"` : ""}>${unmeasured ? "not measured" : (m.class)}</text>${hollow}</g>`;
    })
    );
  return html`<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${`Failed minus successful prevalence per mode for ${g.value}`}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${axis}${rows}</svg>`;
}

function deltas(d: ReportData): Html {
  const comparable = d.summary.statistics.map((g, i) => ({ g, i })).filter(({ g }) => g.successes > 0 && g.failures > 0 && g.annotated > 0);
  const others = d.summary.statistics.filter((g) => !(g.successes > 0 && g.failures > 0 && g.annotated > 0));
  const panels = cat(comparable
    .map(({ g, i }) => html`<div class="panel"><h3>${g.value} <span class="ci">${stat(`statistics[${i}].successes`, g.successes, "int")} successful · ${stat(`statistics[${i}].failures`, g.failures, "int")} failed</span></h3>${deltaChart(g, i)}</div>`)
    );
  const rest = others.length
    ? html`<p class="note">No successful-vs-failed comparison for ${others.length} model${others.length === 1 ? "" : "s"} (they need both outcomes): ${others.map((g) => `${g.value} (${g.successes} successful, ${g.failures} failed)`).join("; ")}.</p>`
    : "";
  return html`${panels ? html`<div class="grid">${panels}</div>` : html`<p class="note">No model has both successful and failed traces.</p>`}${rest}`;
}

function modesPerFailed(d: ReportData): Html {
  const panels = cat(d.modesPerFailed
    .map((h, i) => ({ h, i, g: d.summary.statistics[i]! }))
    .filter(({ h }) => h.counts.reduce((a, b) => a + b, 0) > 0)
    .map(({ h, i, g }) => {
      const max = Math.max(...h.counts);
      const barW = 26;
      const plotH = 90;
      const width = 40 + h.counts.length * barW + 10;
      const top = 16;
      const height = top + plotH + 30;
      const bars = cat(h.counts
        .map((n, k) => {
          const bh = max > 0 ? (n / max) * plotH : 0;
          const x = 40 + k * barW;
          return html`<g data-histogram="${g.value}" data-modes="${k}" data-count="${n}"><title>${`${n} failed trace${n === 1 ? "" : "s"} with ${k} distinct mode${k === 1 ? "" : "s"}`}</title><rect x="${x + 2}" y="${top + plotH - bh}" width="${barW - 4}" height="${bh}" fill="#2457a6"/><text x="${x + barW / 2}" y="${top + plotH + 14}" text-anchor="middle" font-size="10">${k}</text>${n > 0 ? html`<text x="${x + barW / 2}" y="${top + plotH - bh - 4}" text-anchor="middle" font-size="10">${n}</text>` : ""}</g>`;
        })
        );
      const mpf = g.modes_per_failed_trace;
      return html`<div class="panel"><h3>${g.value}</h3><p class="note">mean ${stat(`statistics[${i}].modes_per_failed_trace.mean`, mpf.mean, "num2")}${mpf.lo === null ? "" : html` [${stat(`statistics[${i}].modes_per_failed_trace.lo`, mpf.lo, "num2")}, ${stat(`statistics[${i}].modes_per_failed_trace.hi`, mpf.hi, "num2")}]`} over ${stat(`statistics[${i}].modes_per_failed_trace.n`, mpf.n, "int")} annotated failed traces</p><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${`Distinct modes per failed trace for ${g.value}`}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><line x1="40" y1="${top + plotH}" x2="${width - 10}" y2="${top + plotH}" stroke="#5c6670"/><text x="4" y="${top + plotH + 26}" font-size="10" fill="#5c6670">modes</text>${bars}</svg></div>`;
    })
    );
  return panels ? html`<div class="grid">${panels}</div>` : html`<p class="note">No annotated failed traces.</p>`;
}

function cooccurrence(d: ReportData): Html {
  const TOP = 10;
  const tables = cat(d.summary.statistics
    .map((g, i) => ({ g, i }))
    .filter(({ g }) => g.cooccurrence.length > 0)
    .map(({ g, i }) => {
      const rows = cat(g.cooccurrence
        .slice(0, TOP)
        .map((c, k) => {
          const key = `statistics[${i}].cooccurrence[${k}]`;
          return html`<tr><td>FM-${c.a}</td><td>FM-${c.b}</td><td class="n">${stat(`${key}.both`, c.both, "int")}</td><td class="n">${stat(`${key}.judged`, c.judged, "int")}</td><td class="n">${stat(`${key}.lift`, c.lift, "num2")}</td></tr>`;
        })
        );
      const more = g.cooccurrence.length > TOP ? html`<p class="note">${g.cooccurrence.length - TOP} more pairs in summary.json.</p>` : "";
      return html`<div class="panel"><h3>${g.value}</h3><table><thead><tr><th>mode</th><th>with</th><th class="n">both</th><th class="n">judged</th><th class="n">lift</th></tr></thead><tbody>${rows}</tbody></table>${more}</div>`;
    })
    );
  return tables ? html`<div class="grid">${tables}</div>` : html`<p class="note">No trace shows two modes together.</p>`;
}

function interventionItem(r: RankedIntervention, key: string): Html {
  const reach = r.reach ? html` · acts on ${stat(`${key}.reach.failed_traces`, r.reach.failed_traces, "int")} of ${stat(`${key}.reach.annotated_failed`, r.reach.annotated_failed, "int")} failed traces` : "";
  const modes = cat(r.contributions
    .map((c) => html`<span class="badge ${c.class}" title="${`${c.class}, ${c.coverage}`}">FM-${c.mode}${c.coverage === "partial" ? " (partly)" : ""}</span>`)
    );
  // What to build, why and the evidence are the catalogue's (summary.json names the entry by id).
  const entry = INTERVENTIONS.interventions.find((iv) => iv.id === r.id);
  const evidence = cat(entry?.evidence.map((e) => html`<li>${e.claim} <span class="ci">(${INTERVENTIONS.sources[e.source] ?? e.source}; ${e.ref})</span></li>`) ?? []);
  const details = entry ? html`<p>${entry.action}</p><p>${entry.why}</p><ul>${evidence}</ul>` : html`<p class="note">Not in catalogue v${INTERVENTIONS.version}.</p>`;
  return html`<li><span class="lev">${r.name}</span> — leverage ${stat(`${key}.leverage`, r.leverage, "num2", "b")}${reach} ${modes}<br>${r.explanation}<details><summary>What to build, why it works, evidence · guard <code>${r.guard.id}</code> (${r.guard.kind}, ${r.guard.module})</summary>${details}</details></li>`;
}

function interventions(d: ReportData): Html {
  const blocks = cat(d.summary.interventions
    .map((gi, i) => ({ gi, i }))
    .filter(({ gi }) => gi.ranking.some((r) => r.leverage > 0))
    .map(({ gi, i }) => {
      const ranked = gi.ranking.map((r, k) => ({ r, k })).filter(({ r }) => r.leverage > 0);
      const zero = gi.ranking.filter((r) => r.leverage === 0).map((r) => (r.name));
      return html`<div class="panel"><h3>${gi.value}</h3><ol class="iv">${ranked.map(({ r, k }) => interventionItem(r, `interventions[${i}].ranking[${k}]`))}</ol>${zero.length ? html`<p class="note">No leverage here: ${zero.join(", ")}.</p>` : ""}</div>`;
    })
    );
  const without = d.summary.interventions.filter((gi) => !gi.ranking.some((r) => r.leverage > 0)).map((gi) => (gi.value));
  return html`${blocks || html`<p class="note">No model has failed traces with targeted modes.</p>`}${without.length ? html`<p class="note">Nothing to rank (no failure mass) for: ${without.join(", ")}.</p>` : ""}`;
}

/** The replay's definitions (summary.json `replay.definitions`) as footnotes, numbered in order of first reference. */
const FOOTNOTES = [
  { key: "truncation", id: "replay-def-truncation", label: "ended early" },
  { key: "steps_saved", id: "replay-def-steps-saved", label: "steps saved" },
  { key: "tokens_saved", id: "replay-def-tokens-saved", label: "tokens saved" },
  { key: "addresses", id: "replay-def-addresses", label: "findings addressed" },
] as const;
const fnRef = (key: (typeof FOOTNOTES)[number]["key"]) => {
  const n = FOOTNOTES.findIndex((f) => f.key === key);
  return html`<sup><a href="#${FOOTNOTES[n]!.id}">${n + 1}</a></sup>`;
};

/** Highlights listed per kind at most; the rest are counted (all are in summary.json `replay.highlights`). */
const HIGHLIGHTS_SHOWN = 50;

function decisionCells(key: string, d: Record<ReplayDecision, number>): Html | "" {
  return cat((["warn", "block", "require", "stop"] as const).map((x) => html`<td class="n">${stat(`${key}.decisions.${x}`, d[x], "int")}</td>`));
}

function fixCell(j: ReplayGuardJoin | undefined): Html {
  if (!j || j.fixes.length === 0) return html`<span class="unk">not in catalogue v${INTERVENTIONS.version}</span>`;
  const names = cat(j.fixes.map((f) => html`<a href="#interventions">${f.name}</a>`), ", ");
  if (j.ranks.length === 0) return html`${names}<br><span class="ci">no leverage in any model</span>`;
  const best = j.ranks[0]!;
  const list = cat(j.ranks
    .map((r) => html`<li>${r.model}: rank ${stat(`interventions[${r.group}].ranking[${r.position}].rank`, r.rank, "int")} · leverage ${stat(`interventions[${r.group}].ranking[${r.position}].leverage`, r.leverage, "num2")}</li>`)
    );
  return html`${names}<details><summary>ranked in ${j.ranks.length} model${j.ranks.length === 1 ? "" : "s"}, best rank ${stat(`interventions[${best.group}].ranking[${best.position}].rank`, best.rank, "int")}</summary><ul>${list}</ul></details>`;
}

function replaySection(d: ReportData, opts: HtmlOptions): Html {
  const r = d.summary.replay!;
  const t = r.totals;
  const card = (key: keyof ReplaySummary["totals"], label: string, note = "") => html`<div class="card">${stat(`replay.totals.${key}`, t[key], "int", "b")}<small>${label}${note}</small></div>`;
  const cards = html`<div class="cards">${card("traces", "traces replayed")}${card("intervened", "with an intervention")}${card("stopped", "ended early", fnRef("truncation"))}${card("interventions", "interventions")}${card("steps_saved", "steps saved", fnRef("steps_saved"))}${card("tokens_saved", "tokens saved", fnRef("tokens_saved"))}${card("errors", "replay errors")}</div>`;

  const guardRows = cat(r.guards_summary
    .map((g, i) => {
      const k = `replay.guards_summary[${i}]`;
      return html`<tr data-guard="${g.guard}"><td><code>${g.guard}</code></td><td>${fixCell(d.replayGuards?.[i])}</td><td>${cat(g.modes.map((m) => html`<span class="badge">FM-${m}</span>`)) || "–"}</td><td class="n">${stat(`${k}.traces`, g.traces, "int")}</td><td class="n">${stat(`${k}.interventions`, g.interventions, "int")}</td>${decisionCells(k, g.decisions)}<td class="n">${stat(`${k}.findings_addressed`, g.findings_addressed, "int")}</td></tr>`;
    })
    );
  const perGuard = html`<h3>Per guard</h3><div class="scroll"><table><thead><tr><th>guard</th><th>recommended fix (ranked interventions)</th><th>modes</th><th class="n">traces</th><th class="n">interventions</th><th class="n">warn</th><th class="n">block</th><th class="n">require</th><th class="n">stop</th><th class="n">findings addressed${fnRef("addresses")}</th></tr></thead><tbody>${guardRows}</tbody></table></div>`;

  const modelRows = cat(r.models
    .map((m, i) => {
      const k = `replay.models[${i}]`;
      return html`<tr data-replay-model="${m.model}"><td>${m.model}</td><td class="n">${stat(`${k}.traces`, m.traces, "int")}</td><td class="n">${stat(`${k}.intervened`, m.intervened, "int")}</td><td class="n">${stat(`${k}.stopped`, m.stopped, "int")}</td>${decisionCells(k, m.decisions)}<td class="n">${stat(`${k}.steps_saved`, m.steps_saved, "int")}</td><td class="n">${stat(`${k}.tokens_saved`, m.tokens_saved, "int")}</td><td class="n">${stat(`${k}.findings_addressed`, m.findings_addressed, "int")} of ${stat(`${k}.findings`, m.findings, "int")}</td></tr>`;
    })
    );
  const perModel = html`<h3>Per model</h3><div class="scroll"><table><thead><tr><th>model</th><th class="n">traces</th><th class="n">intervened</th><th class="n">ended early${fnRef("truncation")}</th><th class="n">warn</th><th class="n">block</th><th class="n">require</th><th class="n">stop</th><th class="n">steps saved${fnRef("steps_saved")}</th><th class="n">tokens saved${fnRef("tokens_saved")}</th><th class="n">findings addressed${fnRef("addresses")} of findings in guarded modes</th></tr></thead><tbody>${modelRows}</tbody></table></div>`;

  const crossRows = cat(r.crosstab
    .map((c, i) => {
      const k = `replay.crosstab[${i}]`;
      return html`<tr data-crosstab="${c.mode}"><td><span class="badge">FM-${c.mode}</span></td><td>${c.name}</td><td>${cat(c.guards.map((g) => html`<code>${g}</code>`), ", ") || "–"}</td><td class="n">${stat(`${k}.interventions`, c.interventions, "int")}</td><td class="n">${stat(`${k}.traces_intervened`, c.traces_intervened, "int")}</td><td class="n">${stat(`${k}.traces_with_finding`, c.traces_with_finding, "int")}</td><td class="n">${stat(`${k}.traces_caught`, c.traces_caught, "int")}</td><td class="n">${stat(`${k}.traces_guard_only`, c.traces_guard_only, "int")}</td></tr>`;
    })
    );
  const crosstab = html`<h3>Cross-tab with the rule detectors</h3><p class="note">Traces per MAST mode: with an intervention of the mode, with a detector finding of it, caught (an intervention of the mode addresses${fnRef("addresses")} a finding of it), and guard only (an intervention but no finding of the mode: the guard saw what the rules did not, or a false alarm).</p><div class="scroll"><table><thead><tr><th>mode</th><th>name</th><th>guards</th><th class="n">interventions</th><th class="n">traces intervened</th><th class="n">traces with finding</th><th class="n">caught</th><th class="n">guard only</th></tr></thead><tbody>${crossRows}</tbody></table></div>`;

  const cut = opts.maxEvidence ?? 600;
  const groups = cat((Object.keys(HIGHLIGHT_TITLES) as HighlightKind[])
    .map((kind) => {
      const hits = r.highlights.filter((h) => h.kind === kind);
      const items = cat(hits
        .slice(0, HIGHLIGHTS_SHOWN)
        .map((h) => {
          const reason = h.reason.length > cut ? `${h.reason.slice(0, cut)}… (${h.reason.length - cut} more characters)` : h.reason;
          return html`<li data-highlight="${kind}"><code>${h.trace_id}</code> · ${h.model} · step ${h.step ?? "–"} · <code>${h.guard}</code> ${h.decision} (FM-${h.mode}): ${reason}</li>`;
        })
        );
      const more = hits.length > HIGHLIGHTS_SHOWN ? html`<p class="note">${hits.length - HIGHLIGHTS_SHOWN} more in summary.json (replay.highlights).</p>` : "";
      return html`<h4 data-highlight-kind="${kind}" data-count="${hits.length}">${HIGHLIGHT_TITLES[kind]}: ${hits.length} trace${hits.length === 1 ? "" : "s"}</h4>${items ? html`<ul class="hl">${items}</ul>` : ""}${more}`;
    })
    );
  const highlights = html`<h3>What the guards would have caught</h3><p class="note">The first catch of each kind per trace, in trace order.</p>${groups}`;

  const errors = r.traces.flatMap((x) => x.errors.map((e) => ({ trace: x.trace_id, ...e })));
  const errorList = errors.length
    ? html`<h3>Errors during the replay (${errors.length})</h3><p class="note">The rest of each replay still ran.</p><ul class="hl">${cat(errors
        .slice(0, HIGHLIGHTS_SHOWN)
        .map((e) => html`<li><code>${e.trace}</code>${e.step !== undefined ? ` step ${e.step}` : ""}: ${e.source}: ${e.message}</li>`)
        )}</ul>${errors.length > HIGHLIGHTS_SHOWN ? html`<p class="note">${errors.length - HIGHLIGHTS_SHOWN} more in summary.json (replay.traces[].errors).</p>` : ""}`
    : "";

  const footnotes = html`<ol class="fn">${FOOTNOTES.map((f) => html`<li id="${f.id}" data-definition="${f.key}"><b>${f.label}</b>: ${r.definitions[f.key]}</li>`)}</ol>`;
  return html`${cards}${perGuard}${perModel}${crosstab}${highlights}${errorList}${footnotes}`;
}

function outcomeCell(t: TraceEntry): Html {
  const score = t.score !== null ? html` <span class="ci">${t.metric ?? "score"} ${Number.isInteger(t.score) ? t.score : t.score.toFixed(3)}</span>` : "";
  if (t.success === true) return html`<span class="ok">success</span>${score}`;
  if (t.success === false) return html`<span class="bad">failure</span>${score}`;
  return html`<span class="unk">unknown</span>${score}`;
}

/** The trace's decisive step (index, agent, mode, rationale), or why it has none; a dash when the record does not say. */
function decisiveCell(t: TraceEntry, cut: number): Html {
  const clip = (s: string) => (s.length > cut ? `${s.slice(0, cut)}… (${s.length - cut} more characters)` : s);
  if (t.decisive === null) return html`<div class="dec none" data-decisive="none">no decisive step: ${clip(t.decisive_reason || "no reason given")}</div>`;
  if (!t.decisive) return html`<span class="unk">–</span>`;
  const x = t.decisive;
  const agent = x.agent === null ? html`<span class="unk">agent unknown</span>` : (x.agent);
  const basis = x.basis.length ? ` · based on ${x.basis.join(", ")}` : "";
  return html`<div class="dec" data-decisive-step="${x.step}"><b>step ${x.step}</b> · ${agent} · FM-${x.mode} ${x.name}<br><span class="ci">confidence ${x.confidence.toFixed(2)}${basis}</span>${x.rationale ? html`<div class="why">${clip(x.rationale)}</div>` : ""}</div>`;
}

function traceRows(d: ReportData, opts: HtmlOptions): Html {
  const max = opts.maxTraces ?? 5000;
  const cut = opts.maxEvidence ?? 600;
  const shown = d.traces.slice(0, max);
  const rows = cat(shown
    .map((t, n) => {
      const unmeasured = t.unmeasured?.length ? html`<br><span class="ci" data-unmeasured="${t.unmeasured.join(" ")}" title="${t.unmeasured.map((c) => `FM-${c}`).join(", ")}">${t.unmeasured.length} not measured</span>` : "";
      const modes =
        t.modes === null
          ? html`<span class="unk">not annotated</span>${t.error ? html`<br><span class="ci">${t.error}</span>` : ""}`
          : html`${t.modes.length ? t.modes.map((c) => html`<span class="badge">FM-${c}</span>`) : html`<span class="unk">none found</span>`}${unmeasured}`;
      const findings = cat(t.findings
        .map((f) => {
          const quote = f.evidence.length > cut ? `${f.evidence.slice(0, cut)}… (${f.evidence.length - cut} more characters)` : f.evidence;
          const where = `step${f.steps.length === 1 ? "" : "s"} ${f.steps.join(", ")}${f.agent ? ` · ${f.agent}` : ""}`;
          return html`<details><summary>FM-${f.mode} ${f.name} · ${where} · confidence ${f.confidence.toFixed(2)}</summary><blockquote>${quote}</blockquote><span class="ci">${f.detector}${f.rationale ? ` — ${f.rationale}` : ""}</span></details>`;
        })
        );
      return html`<tr data-trace="${t.trace_id}"><td class="n">${n + 1}</td><td class="id">${t.trace_id}<br><small>${t.source.file} #${t.source.index} · ${t.source.format}</small></td><td>${t.model}</td><td>${outcomeCell(t)}</td><td>${modes}</td><td>${decisiveCell(t, cut)}</td><td>${findings || html`<span class="unk">—</span>`}</td></tr>`;
    })
    );
  const more = d.traces.length > shown.length ? html`<p class="note">${d.traces.length - shown.length} more traces are not shown here; every trace is in findings.jsonl and traces.csv.</p>` : "";
  return html`<div class="scroll"><table><thead><tr><th class="n">#</th><th>trace</th><th>model</th><th>outcome</th><th>modes</th><th>decisive step</th><th>evidence (click a finding to read the quote)</th></tr></thead><tbody>${rows}</tbody></table></div>${more}`;
}

/** The Content-Security-Policy of the page: nothing may load or run; only the page's own style block applies. */
export function contentSecurityPolicy(css: string): string {
  const hash = createHash("sha256").update(css, "utf8").digest("base64");
  return `default-src 'none'; style-src 'sha256-${hash}'; img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'`;
}

/** Renders report.html. */
export function renderHtml(d: ReportData, opts: HtmlOptions = {}): string {
  const s = d.summary;
  const catalogue = s.interventions[0]?.catalogue;
  const body = cat([
    section("models", "Models", modelsTable(d), "Success rate with a Wilson 95% interval; modes per failed trace: mean distinct MAST modes per annotated failed trace, with a t interval. Unknown outcomes are left out of every successful-vs-failed comparison."),
    section("heatmap", "Models × failure modes", heatmap(d), "Share of each model's annotated traces in which the mode was found, over every finding (hover a cell for the counts). Hatched cells were not measured: no detector or judge examined the mode, which is unknown — not 0%."),
    section(
      "deltas",
      "Successful vs failed, per model",
      deltas(d),
      html`Prevalence among failed minus prevalence among successful traces, in percentage points, with its Newcombe 95% interval, counting only <b>outcome-independent evidence</b>: a finding made because the run failed (its basis is the scored outcome) cannot show that the mode goes with failure, so it is left out of the bar, the test and the class; where such findings exist, a hollow circle marks the delta over all findings (circular, for reference only). A mode no detector or judge examined is marked <i>not measured</i>. Colour is the mode's class in that model: <span class="bad">fatal</span> (more common in failures by both the interval and Fisher's exact test), <span class="ok">benign</span> (no excess in failures and demonstrably present in successes), <span class="unk">undetermined</span>.`,
    ),
    section("modes-per-failed", "Modes per failed trace", modesPerFailed(d), "How many distinct modes each annotated failed trace shows: a few isolated failures, or a cascade."),
    section("cooccurrence", "Co-occurrence", cooccurrence(d), "Pairs of modes found in the same trace (top 10 per model). Lift = n·both / (n_a·n_b): 1 is independence, above 1 the modes come together more than chance."),
    section(
      "interventions",
      "Ranked interventions",
      interventions(d),
      html`Per model, leverage = Σ over the intervention's modes of coverage × fatality weight (fatal 1, undetermined 0.5, benign 0.1) × prevalence among failed traces${catalogue ? html` (catalogue v${catalogue})` : ""}. Each explanation uses that model's own numbers.`,
    ),
    ...(s.replay
      ? [
          section(
            "replay",
            "What the recommended fixes would have caught",
            replaySection(d, opts),
            html`Every trace replayed step by step through the runtime guards (configuration <code>${s.replay.guards}</code>), as if they had been in the loop: where each guard would have intervened, what that would have saved, and which of the rule detectors' findings it addresses. Each guard is what a ranked intervention above recommends building.`,
          ),
        ]
      : []),
    section("traces", "Traces", traceRows(d, opts), "Every finding cites steps and a verbatim quote from the trace. The decisive step of a failed run is where, and by which agent, it first went wrong (a 0-based step index of the recorded trace). Trace text is shown as text: it is escaped and never executed."),
  ]);
  // a primitive string: hono's fragments are String objects
  return String(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${trusted(contentSecurityPolicy(CSS))}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>faultline report — run ${s.run_id}</title>
<style>${trusted(CSS)}</style>
</head>
<body>
<header>
<h1>faultline report</h1>
<p class="meta">run <code>${s.run_id}</code> · annotator <code>${s.annotator}</code> · taxonomy <code>${d.taxonomy.version}</code>${s.status === "incomplete" ? html` · <strong class="incomplete">incomplete: the run was interrupted; everything below covers only the traces read before it stopped</strong>` : ""}</p>
${cards(d)}
<nav><a href="#models">Models</a><a href="#heatmap">Heatmap</a><a href="#deltas">Successful vs failed</a><a href="#modes-per-failed">Modes per failed trace</a><a href="#cooccurrence">Co-occurrence</a><a href="#interventions">Interventions</a>${s.replay ? html`<a href="#replay">Guard replay</a>` : ""}<a href="#traces">Traces</a></nav>
</header>
<main>
${body}
</main>
<footer><p data-skipped>Left out while reading: ${skippedText(s.counts)} (each one named in the reader's diagnostics).</p>Generated by faultline from findings.jsonl; every number above is in summary.json beside this file. No script, no network: this page is self-contained.</footer>
</body>
</html>
`);
}
