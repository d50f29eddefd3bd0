import type { Comparison, GroupShift, ModeShift, RunsResponse, RunSummary } from "../../src/server/api-types.js";
import { api } from "../api.js";
import { forest } from "../charts.js";
import { h, nav, replace } from "../dom.js";
import { count, cut, interval, num, pct, pp, shortId, when } from "../format.js";
import { go, paths, type Route } from "../router.js";
import { section, select } from "../ui.js";

/** Two runs, or two annotators on the same traces, side by side: which modes moved, overall and per model. */
export async function renderCompare(root: HTMLElement, route: Route, isCurrent: () => boolean): Promise<void> {
  const q = route.query;
  const { runs } = await api<RunsResponse>("/runs");
  const a = q.get("a") ?? "";
  const b = q.get("b") ?? "";
  const cmp = a && b ? await api<Comparison>("/compare", { a, b, aa: q.get("aa"), ba: q.get("ba") }) : null;
  if (!isCurrent()) return;
  document.title = "Compare · faultline";
  const state = { a, b, aa: q.get("aa") ?? "", ba: q.get("ba") ?? "" };
  const form = h(
    "form",
    { class: "filters compare-form" },
    sidePicker("A", runs, state.a, state.aa, (run, ann) => Object.assign(state, { a: run, aa: ann })),
    sidePicker("B", runs, state.b, state.ba, (run, ann) => Object.assign(state, { b: run, ba: ann })),
    h("button", { type: "submit", class: "primary" }, "Compare"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (state.a && state.b) go(paths.compare({ a: state.a, b: state.b, aa: state.aa || undefined, ba: state.ba || undefined }));
  });
  replace(
    root,
    h("header", { class: "page-head" }, h("p", { class: "crumbs" }, nav(paths.runs(), null, "Runs"), " / compare"), h("h1", null, "Compare")),
    h(
      "div",
      { class: "panel" },
      h("p", { class: "intro" }, "Pick two runs — or the same run twice with two annotators (rules and a judge) — to see which failure modes moved."),
      form,
    ),
    cmp ? results(cmp, q.get("group") ?? "all") : null,
  );
}

function sidePicker(label: string, runs: RunSummary[], run: string, annotator: string, onChange: (run: string, annotator: string) => void): HTMLElement {
  const wrap = h("fieldset", { class: "side-pick" }, h("legend", null, label));
  const annotators = h("span");
  const drawAnnotators = (runId: string, current: string) => {
    const r = runs.find((x) => x.id === runId || x.id.startsWith(runId));
    replace(
      annotators,
      r && r.annotators.length > 1
        ? select({
            label: "Annotator",
            name: `annotator-${label}`,
            value: current,
            options: [{ value: "", label: `${r.annotator} (the run's)` }, ...r.annotators.filter((x) => x !== r.annotator).map((x) => ({ value: x, label: x }))],
            onChange: (v) => onChange(runId, v),
          })
        : null,
    );
  };
  wrap.append(
    select({
      label: "Run",
      name: `run-${label}`,
      value: run,
      options: [{ value: "", label: "Choose a run…" }, ...runs.map((r) => ({ value: r.id, label: `${shortId(r.id)} · ${r.inputs.join(", ").slice(0, 60)} · ${r.trace_count} traces · ${when(r.updated_at)}` }))],
      onChange: (v) => {
        onChange(v, "");
        drawAnnotators(v, "");
      },
    }),
    annotators,
  );
  drawAnnotators(run, annotator);
  return wrap;
}

function arrow(m: ModeShift): string {
  if (!m.moved || m.delta_pp.value === null) return "";
  return m.delta_pp.value > 0 ? "▲ " : "▼ ";
}

function cellClass(m: ModeShift): string {
  if (m.delta_pp.value === null) return "na";
  if (!m.moved) return "flat";
  return m.delta_pp.value > 0 ? "up" : "down";
}

/** Which side did not measure the mode at all (no detector or judge examined it there), or null when both did. */
function unmeasuredSide(m: ModeShift): string | null {
  const a = m.a.judged === 0;
  const b = m.b.judged === 0;
  return a && b ? "A and B" : a ? "A" : b ? "B" : null;
}

function shiftTitle(m: ModeShift, g: GroupShift): string {
  const side = unmeasuredSide(m);
  const head = `${g.group === "all" ? "All models" : g.group} · ${m.code} ${m.name}: `;
  if (side) return `${head}not measured in ${side} (no detector or judge examined it), so there is nothing to compare`;
  return `${head}A ${m.a.count}/${m.a.judged} (${pct(m.a.prevalence)}), B ${m.b.count}/${m.b.judged} (${pct(m.b.prevalence)}); B − A ${pp(m.delta_pp.value)} pp ${interval(m.delta_pp.lo, m.delta_pp.hi, (x) => pp(x, 0))}`;
}

function results(cmp: Comparison, group: string): HTMLElement {
  const label = (s: Comparison["a"]) => `run ${shortId(s.run.id)} · ${s.annotator} · ${count(s.traces)} traces`;
  const detail = h("div");
  const groups = cmp.groups;
  let current = groups.some((g) => g.group === group) ? group : "all";
  const tabs = h(
    "div",
    { class: "tabs", role: "tablist" },
    groups.map((g) => {
      const b = h("button", { type: "button", role: "tab", "aria-selected": String(g.group === current), "data-group": g.group }, g.group === "all" ? "All models" : g.group);
      b.addEventListener("click", () => {
        current = g.group;
        for (const t of tabs.querySelectorAll("button")) t.setAttribute("aria-selected", String(t === b));
        draw();
      });
      return b;
    }),
  );
  const draw = () => {
    const g = groups.find((x) => x.group === current)!;
    replace(
      detail,
      h("p", { class: "small" }, `${g.group === "all" ? "All models" : g.group}: ${count(g.a_traces)} traces in A, ${count(g.b_traces)} in B.`),
      h(
        "div",
        { class: "scroll-x" },
        forest({
          label: `Change in prevalence from A to B for ${g.group}`,
          axis: "B − A prevalence (pp)",
          rows: g.modes.map((m) => ({
            key: m.code,
            label: `${m.code} ${m.name}`,
            title: shiftTitle(m, g),
            est: m.a.count === 0 && m.b.count === 0 ? null : m.delta_pp.value,
            lo: m.delta_pp.lo,
            hi: m.delta_pp.hi,
            cls: m.a.count === 0 && m.b.count === 0 ? "absent" : cellClass(m),
            note: unmeasuredSide(m)
              ? `not measured in ${unmeasuredSide(m)}`
              : m.delta_pp.value === null
                ? "no data"
                : m.a.count === 0 && m.b.count === 0
                  ? "not found on either side"
                  : `${pct(m.a.prevalence)} → ${pct(m.b.prevalence)} (${pp(m.delta_pp.value)} pp)`,
          })),
        }),
      ),
    );
  };
  draw();
  const matrix = h(
    "table",
    { class: "grid shifts" },
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Mode"), groups.map((g) => h("th", { scope: "col", class: "num", title: g.group }, g.group === "all" ? "All models" : cut(g.group, 28))))),
    h(
      "tbody",
      null,
      cmp.taxonomy.modes.map((mode) =>
        h(
          "tr",
          { "data-mode": mode.code },
          h("th", { scope: "row", title: mode.definition }, `${mode.code} ${mode.name}`),
          groups.map((g) => {
            const m = g.modes.find((x) => x.code === mode.code)!;
            const none = m.a.count === 0 && m.b.count === 0;
            return h(
              "td",
              { class: `num shift ${none ? "none" : cellClass(m)}`, title: shiftTitle(m, g), "data-group": g.group },
              unmeasuredSide(m) ? "n/m" : m.delta_pp.value === null ? "–" : none ? "0" : `${arrow(m)}${pp(m.delta_pp.value)}`,
            );
          }),
        ),
      ),
    ),
  );
  return h(
    "div",
    null,
    h(
      "div",
      { class: "panel" },
      h("p", null, h("strong", null, "A: "), nav(paths.overview(cmp.a.run.id), null, label(cmp.a)), h("br"), h("strong", null, "B: "), nav(paths.overview(cmp.b.run.id), null, label(cmp.b))),
    ),
    section(
      "Which modes moved",
      "Change in prevalence from A to B in percentage points. ▲/▼ and colour: the 95% Newcombe interval excludes zero. Hover a cell for the counts.",
      h("div", { class: "scroll-x" }, matrix),
    ),
    section("In detail", null, tabs, detail),
    cmp.agreement ? agreement(cmp) : null,
  );
}

function agreement(cmp: Comparison): HTMLElement {
  const ag = cmp.agreement!;
  return section(
    "Agreement on shared traces",
    `${count(ag.matching.matched)} traces appear on both sides (${count(ag.vectors.compared)} with a failure vector on both). Cohen's κ per mode treats A as the reference. Macro κ ${num(ag.macro.kappa, 2)}, macro F1 ${num(ag.macro.f1, 2)}.`,
    h(
      "table",
      { class: "grid agreement" },
      h("thead", null, h("tr", null, ["Mode", "Traces", "Both", "Only A", "Only B", "κ", "F1"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        null,
        ag.modes.map((m) =>
          h(
            "tr",
            null,
            h("th", { scope: "row" }, `${m.code} ${m.name}`),
            m.n === 0 && m.not_measured > 0
              ? h("td", { class: "num muted not-measured", title: `B did not measure this mode on ${m.not_measured} shared traces: left out, never counted as a disagreement` }, "n/m")
              : h("td", { class: "num" }, count(m.n)),
            h("td", { class: "num" }, count(m.tp)),
            h("td", { class: "num" }, count(m.fn)),
            h("td", { class: "num" }, count(m.fp)),
            h("td", { class: "num" }, num(m.kappa, 2)),
            h("td", { class: "num" }, num(m.f1, 2)),
          ),
        ),
      ),
    ),
  );
}
