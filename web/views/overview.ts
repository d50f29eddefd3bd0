import type { GroupInterventions, GroupStats, ModeStats, Overview } from "../../src/server/api-types.js";
import { api } from "../api.js";
import { bars, forest, heatmap } from "../charts.js";
import { h, nav, replace } from "../dom.js";
import { count, interval, num, pct, pp, pval, shortId, when } from "../format.js";
import { go, paths, type Route } from "../router.js";
import { incompleteBadge, keyValues, section, select } from "../ui.js";

const ALL = "all";

/** The run overview: per-model table, models × modes heatmap, successful-vs-failed deltas, and more. */
export async function renderOverview(root: HTMLElement, route: Route, isCurrent: () => boolean): Promise<void> {
  const annotator = route.query.get("annotator") ?? undefined;
  const ov = await api<Overview>(`/runs/${encodeURIComponent(route.id)}/overview`, { annotator });
  if (!isCurrent()) return;
  const run = ov.run;
  document.title = `Run ${shortId(run.id)} · faultline`;
  const modeName = new Map(ov.taxonomy.modes.map((m) => [m.code, m.name]));
  const tracesLink = (q: Record<string, string | undefined>) => paths.traces(run.id, { annotator, ...q });
  const groups: GroupStats[] = [ov.all, ...ov.models];
  const groupKey = (g: GroupStats) => (g === ov.all ? ALL : g.value);
  const comparable = ov.models.find((g) => g.successes > 0 && g.failures > 0);
  let current = route.query.get("group") ?? (comparable ? comparable.value : ALL);
  if (!groups.some((g) => groupKey(g) === current)) current = ALL;

  const header = h(
    "header",
    { class: "page-head" },
    h("h1", null, "Run ", h("span", { class: "mono" }, shortId(run.id)), run.status === "incomplete" ? [" ", incompleteBadge()] : null),
    run.status === "incomplete"
      ? h(
          "p",
          { class: "notice", role: "status" },
          "This run is incomplete: it was interrupted (or is still running) before every input was read. Its numbers cover only the traces stored so far.",
        )
      : null,
    keyValues([
      ["Inputs", run.inputs.join(", ")],
      ["Traces", `${count(ov.all.traces)} (${count(ov.all.annotated)} annotated)`],
      ["Outcomes", `${count(ov.all.successes)} successful · ${count(ov.all.failures)} failed · ${count(ov.all.unknown_outcome)} unknown`],
      ["Annotator", run.annotators.length > 1 ? annotatorPicker(run.id, ov.annotator, run.annotators) : ov.annotator],
      ["Analysed", when(run.updated_at)],
    ]),
    h(
      "div",
      { class: "actions" },
      nav(tracesLink({}), { class: "button primary" }, "Browse all traces"),
      nav(tracesLink({ outcome: "failure" }), { class: "button" }, "Failed traces"),
      nav(paths.compare({ a: run.id }), { class: "button" }, "Compare with another run"),
    ),
  );

  const body = h("div", { class: "group-body" });
  const groupTabs = h(
    "div",
    { class: "tabs", role: "tablist", "aria-label": "Group" },
    groups.map((g) => {
      const key = groupKey(g);
      const b = h("button", { type: "button", role: "tab", "aria-selected": String(key === current), "data-group": key }, key === ALL ? "All models" : g.value);
      b.addEventListener("click", () => {
        current = key;
        for (const t of groupTabs.querySelectorAll("button")) t.setAttribute("aria-selected", String(t === b));
        history.replaceState(null, "", paths.overview(run.id, { annotator, group: key === ALL ? undefined : key }));
        drawGroup();
      });
      return b;
    }),
  );
  const drawGroup = () => {
    const g = groups.find((x) => groupKey(x) === current) ?? ov.all;
    const model = current === ALL ? undefined : current;
    const gi = ov.interventions.find((x) => (current === ALL ? x.key === "all" : x.key !== "all" && x.value === current));
    replace(
      body,
      deltas(g, modeName, (code) => go(tracesLink({ model, mode: code }))),
      interventions(ov, gi, model, tracesLink),
      perFailed(g, ov),
      cooccurrence(g, modeName, model, tracesLink),
    );
  };
  drawGroup();

  replace(
    root,
    header,
    modelsTable(ov, tracesLink),
    section(
      "Failure modes by model",
      "Share of annotated traces in which each MAST mode was found, over every finding. n/m: not measured — no detector or judge examined the mode, which is unknown, not 0%. Click a cell to list those traces.",
      h(
        "div",
        { class: "scroll-x" },
        heatmap({
          label: "Prevalence of each failure mode per model",
          rows: groups.map((g) => ({ key: groupKey(g), label: g === ov.all ? "All models" : g.value, note: `${count(g.annotated)} annotated` })),
          cols: ov.taxonomy.modes.map((m) => ({ key: m.code, label: m.code, title: `${m.code} ${m.name}`, group: m.category })),
          groups: ov.taxonomy.categories.map((c) => ({ id: c.id, label: c.name })),
          cell: (row, col) => {
            const g = groups.find((x) => groupKey(x) === row)!;
            const m = g.modes.find((x) => x.code === col);
            const name = `${col} ${modeName.get(col) ?? ""}`;
            // not measured: no detector or judge examined the mode here — unknown, shown apart from a found-nowhere 0%
            if (!m || m.judged.all === 0)
              return { value: null, text: "n/m", notMeasured: true, title: `${row === ALL ? "All models" : row} · ${name}: not measured — no detector or judge examined it (unknown, not 0%)` };
            const partly = m.judged.all < g.annotated ? ` — measured on ${m.judged.all} of ${g.annotated} annotated traces` : "";
            return {
              value: m.prevalence.all,
              text: pct(m.prevalence.all),
              title: `${row === ALL ? "All models" : row} · ${name}: ${m.counts.all} of ${m.judged.all} traces (${pct(m.prevalence.all)}); failed ${m.counts.failed}/${m.judged.failed}, successful ${m.counts.successful}/${m.judged.successful}${partly}`,
            };
          },
          onSelect: (row, col) => go(tracesLink({ model: row === ALL ? undefined : row, mode: col })),
        }),
      ),
      modeLegend(ov),
    ),
    h("div", { class: "panel group-picker" }, h("h2", null, "Per group"), h("p", { class: "intro" }, "Pick a model to see what separates its failed runs from its successful ones."), groupTabs),
    body,
    ov.diagnosticCount
      ? section(
          "Notes",
          `${ov.diagnosticCount} problem(s) while reading the stored diagnoses:`,
          h("ul", { class: "small" }, ov.diagnostics.map((d) => h("li", null, `${d.level}: ${d.message}`))),
        )
      : null,
  );
}

function annotatorPicker(run: string, current: string, all: string[]): HTMLElement {
  return select({
    label: "",
    name: "annotator",
    value: current,
    options: all.map((a) => ({ value: a, label: a })),
    onChange: (v) => go(paths.overview(run, { annotator: v || undefined })),
  });
}

function modeLegend(ov: Overview): HTMLElement {
  return h(
    "details",
    { class: "legend" },
    h("summary", null, "What the codes mean"),
    h(
      "dl",
      { class: "codes" },
      ov.taxonomy.modes.map((m) => [h("dt", null, m.code), h("dd", null, h("strong", null, m.name), " — ", m.definition)]),
    ),
  );
}

function topPredictor(g: GroupStats, names: Map<string, string>): string {
  const p = g.predictors[0];
  if (!p) return "–";
  return `${p.code} ${names.get(p.code) ?? ""} (${pp(p.delta_pp)} pp)`;
}

function modelsTable(ov: Overview, tracesLink: (q: Record<string, string | undefined>) => string): HTMLElement {
  const names = new Map(ov.taxonomy.modes.map((m) => [m.code, m.name]));
  const row = (g: GroupStats, label: string, model?: string) =>
    h(
      "tr",
      { "data-model": model ?? ALL },
      h("th", { scope: "row" }, nav(tracesLink({ model }), null, label)),
      h("td", { class: "num" }, count(g.traces)),
      h("td", { class: "num" }, count(g.annotated)),
      h("td", { class: "num" }, count(g.successes)),
      h("td", { class: "num" }, count(g.failures)),
      h("td", { class: "num" }, count(g.unknown_outcome)),
      h("td", { class: "num" }, pct(g.success_rate.estimate), " ", h("span", { class: "ci" }, interval(g.success_rate.lo, g.success_rate.hi, pct))),
      h(
        "td",
        { class: "num" },
        num(g.modes_per_failed_trace.mean, 2),
        " ",
        h("span", { class: "ci" }, interval(g.modes_per_failed_trace.lo, g.modes_per_failed_trace.hi, (x) => num(x, 2))),
      ),
      h("td", null, topPredictor(g, names)),
    );
  return section(
    "Models",
    "Success rates with 95% Wilson intervals; modes per failed trace with a 95% t interval; the mode most over-represented in failures.",
    h(
      "div",
      { class: "scroll-x" },
      h(
        "table",
        { class: "grid models" },
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            ["Model", "Traces", "Annotated", "Successful", "Failed", "Unknown", "Success rate", "Modes / failed trace", "Strongest failure predictor"].map((t) => h("th", { scope: "col" }, t)),
          ),
        ),
        h("tbody", null, ov.models.map((g) => row(g, g.value, g.value)), ov.models.length > 1 ? row(ov.all, "All models") : null),
      ),
    ),
  );
}

/** Traces where the mode was found only through the outcome (a finding based on the run having failed). */
const circularCount = (m: ModeStats) => m.counts.all - m.independent.counts.all;

function deltaNote(m: ModeStats): string {
  if (m.judged.all === 0) return "not measured";
  if (m.counts.all === 0) return "not found in this group";
  // the circular all-findings delta is the hollow circle; the dagger says there is one
  const circular = circularCount(m) > 0 ? " †" : "";
  if (m.delta_pp.value === null) return `${m.counts.all}/${m.judged.all} traces · no comparison${circular}`;
  return `${pp(m.delta_pp.value)} pp ${interval(m.delta_pp.lo, m.delta_pp.hi, (x) => pp(x, 0))} · q ${pval(m.q_value)} · ${m.class}${circular}`;
}

function deltas(g: GroupStats, names: Map<string, string>, onSelect: (code: string) => void): HTMLElement {
  const rows = g.modes.map((m) => {
    const ind = m.independent;
    const circular =
      circularCount(m) > 0
        ? ` Over all findings, including ${circularCount(m)} trace(s) where it was found only because the run failed (circular): failed ${m.counts.failed}/${m.judged.failed} (${pct(m.prevalence.failed)}), Δ ${pp(m.delta_pp_all_findings.value)} pp.`
        : "";
    return {
      key: m.code,
      label: `${m.code} ${names.get(m.code) ?? m.name}`,
      title:
        m.judged.all === 0
          ? `${m.code} ${m.name}: not measured — no detector or judge examined it, so there is nothing to compare (unknown, not absent).`
          : `${m.code} ${m.name}, outcome-independent evidence: failed ${ind.counts.failed}/${ind.judged.failed} (${pct(ind.prevalence.failed)}), successful ${ind.counts.successful}/${ind.judged.successful} (${pct(ind.prevalence.successful)}). ${m.reason}.${circular}`,
      // A mode found nowhere in the group (or not measured) has nothing to show but its absence.
      est: m.counts.all === 0 ? null : m.delta_pp.value,
      lo: m.delta_pp.lo,
      hi: m.delta_pp.hi,
      cls: m.judged.all === 0 ? "absent not-measured" : m.counts.all === 0 ? "absent" : m.class,
      note: deltaNote(m),
      alt:
        circularCount(m) > 0 && m.delta_pp_all_findings.value !== null
          ? { value: m.delta_pp_all_findings.value, title: `${m.code} over all findings, including those made because the run failed (circular): ${pp(m.delta_pp_all_findings.value)} pp` }
          : null,
    };
  });
  const canCompare = g.successes > 0 && g.failures > 0;
  return section(
    "Successful vs failed",
    canCompare
      ? `How much more often each mode shows in failed than in successful traces (percentage points, 95% Newcombe interval), counting only outcome-independent evidence: a finding made because the run failed cannot show that the mode goes with failure, so it is left out here; where that changes the delta, a hollow circle (†) marks the delta over all findings, which is circular. Red: more common in failures by both the interval and Fisher's exact test; green: demonstrably survivable; grey: undetermined. ${g.successes} successful and ${g.failures} failed traces.`
      : `No comparison possible: this group has ${g.successes} successful and ${g.failures} failed traces (the outcome of ${g.unknown_outcome} is unknown).`,
    h("div", { class: "scroll-x" }, forest({ rows, label: `Failed minus successful prevalence per mode for ${g.value}`, axis: "failed − successful (pp)", onSelect })),
    g.predictors.length
      ? h(
          "p",
          { class: "small" },
          "Strongest predictors of failure: ",
          g.predictors.slice(0, 5).map((p, i) => [i ? " · " : "", h("strong", null, p.code), ` ${pp(p.delta_pp)} pp ${interval(p.lo, p.hi, (x) => pp(x, 0))}`]),
        )
      : null,
  );
}

function perFailed(g: GroupStats, ov: Overview): HTMLElement {
  const hist = ov.modesPerFailed.find((x) => x.model === g.value)?.counts ?? (g === ov.all ? sumHistograms(ov) : []);
  const m = g.modes_per_failed_trace;
  return section(
    "Modes per failed trace",
    m.n
      ? `A failed trace shows ${num(m.mean, 2)} distinct modes on average ${interval(m.lo, m.hi, (x) => num(x, 2))} over ${m.n} annotated failed traces.`
      : "No annotated failed traces in this group.",
    m.n
      ? bars({ values: hist, labels: hist.map((_, i) => (i === hist.length - 1 ? `${i}+` : String(i))), label: "Failed traces by number of modes", axis: "modes in the trace" })
      : null,
  );
}

function sumHistograms(ov: Overview): number[] {
  const out: number[] = [];
  for (const m of ov.modesPerFailed) m.counts.forEach((c, i) => (out[i] = (out[i] ?? 0) + c));
  return out;
}

function cooccurrence(g: GroupStats, names: Map<string, string>, model: string | undefined, tracesLink: (q: Record<string, string | undefined>) => string): HTMLElement {
  const pairs = g.cooccurrence.slice(0, 12);
  return section(
    "Modes that occur together",
    pairs.length
      ? "Pairs of modes found in the same trace, most frequent first. Lift above 1: together more often than chance."
      : "No trace in this group has two modes at once.",
    pairs.length
      ? h(
          "table",
          { class: "grid cooc" },
          h("thead", null, h("tr", null, ["Mode A", "Mode B", "Traces with both", "Lift"].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            null,
            pairs.map((p) =>
              h(
                "tr",
                null,
                h("td", null, nav(tracesLink({ model, mode: p.a }), { title: names.get(p.a) ?? p.a }, `${p.a} ${names.get(p.a) ?? ""}`)),
                h("td", null, nav(tracesLink({ model, mode: p.b }), { title: names.get(p.b) ?? p.b }, `${p.b} ${names.get(p.b) ?? ""}`)),
                h("td", { class: "num" }, `${p.both} of ${p.judged}`),
                h("td", { class: "num" }, num(p.lift, 2)),
              ),
            ),
          ),
        )
      : null,
  );
}

function interventions(ov: Overview, gi: GroupInterventions | undefined, model: string | undefined, tracesLink: (q: Record<string, string | undefined>) => string): HTMLElement {
  const name = gi?.key === "all" ? "all models" : (gi?.value ?? "");
  const ranked = gi?.ranking.filter((r) => r.leverage > 0) ?? [];
  const idle = gi?.ranking.filter((r) => r.leverage === 0).map((r) => r.name) ?? [];
  return section(
    "Interventions, ranked",
    ranked.length
      ? `What to build first for ${name}. Leverage adds up, over the modes a guard targets, the share of failed traces showing the mode × how fatal the mode is here × how fully the guard covers it (catalogue v${ov.interventionCatalogue.version}; docs/statistics.md).`
      : `Nothing to rank for ${name}: no failed trace shows a mode any intervention targets.`,
    ranked.length
      ? h(
          "ol",
          { class: "interventions" },
          ranked.map((r) => {
            const entry = ov.interventionCatalogue.entries[r.id];
            return h(
              "li",
              { "data-intervention": r.id },
              h(
                "div",
                { class: "iv-head" },
                h("strong", null, r.name),
                h("span", { class: "lev" }, `leverage ${num(r.leverage, 2)}`),
                r.reach ? h("span", { class: "muted small" }, `acts on ${count(r.reach.failed_traces)} of ${count(r.reach.annotated_failed)} failed traces`) : null,
              ),
              h(
                "div",
                null,
                r.contributions.map((c) =>
                  nav(
                    tracesLink({ model, mode: c.mode, outcome: "failure" }),
                    { class: `chip ${c.class}`, title: `${c.mode} ${c.name}: ${c.class}, ${c.coverage} coverage — failed traces with it` },
                    `${c.mode}${c.coverage === "partial" ? " (partly)" : ""}`,
                  ),
                ),
              ),
              h("p", { class: "small" }, r.explanation),
              entry
                ? h(
                    "details",
                    { class: "small" },
                    h("summary", null, `What to build, why it works, evidence · guard ${r.guard.id}`),
                    h("p", null, entry.action),
                    h("p", null, entry.why),
                    h("ul", null, entry.evidence.map((e) => h("li", null, e.claim, " ", h("span", { class: "ci" }, `(${e.source}; ${e.ref})`)))),
                  )
                : null,
            );
          }),
        )
      : null,
    idle.length ? h("p", { class: "small muted" }, `No leverage here: ${idle.join(", ")}.`) : null,
  );
}
