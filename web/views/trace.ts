import type { Decisive, Diagnosis, Finding, GoldLabels, Step, TraceDetail } from "../../src/server/api-types.js";
import { api } from "../api.js";
import { h, nav, replace, type Child } from "../dom.js";
import { locateEvidence, displayFields, type FieldName } from "../evidence.js";
import { count, shortId } from "../format.js";
import { paths, type Route } from "../router.js";
import { textBlock, type Highlight } from "../text.js";
import { keyValues, modeChip, outcomeBadge } from "../ui.js";

/** Characters and lines shown before a block is collapsed; tool output is cut sooner than what the agent says. */
const LIMITS: Record<FieldName, { chars: number; lines: number }> = {
  text: { chars: 1500, lines: 30 },
  args: { chars: 600, lines: 16 },
  output: { chars: 600, lines: 12 },
};
const FIELD_LABEL: Record<FieldName, string> = { text: "", args: "arguments", output: "output" };

/** Where a collapsed block is cut: the character limit or the end of the last allowed line, whichever is first. */
function cutAt(text: string, f: FieldName): number {
  const { chars, lines } = LIMITS[f];
  let at = -1;
  for (let n = 0; n < lines; n++) {
    at = text.indexOf("\n", at + 1);
    if (at < 0) return Math.min(chars, text.length);
  }
  return Math.min(chars, at);
}

interface FieldView {
  field: FieldName;
  text: string;
  box: HTMLElement;
  expanded: boolean;
  /** Shown folded away entirely (arguments the step's text already spells out). */
  folded: boolean;
  highlight: Highlight | null;
}

interface StepView {
  step: Step;
  el: HTMLElement;
  fields: FieldView[];
}

function drawField(v: FieldView): void {
  const cut = v.folded ? 0 : cutAt(v.text, v.field);
  const collapsed = !v.expanded && cut < v.text.length && v.highlight === null;
  const pre = h("pre", { class: `content ${v.field}` }, textBlock(v.text, { highlight: v.highlight, limit: collapsed ? cut : undefined }));
  const toggle = (label: string, expand: boolean) => {
    const b = h("button", { type: "button", class: "link small toggle" }, label);
    b.addEventListener("click", () => {
      v.expanded = expand;
      drawField(v);
    });
    return b;
  };
  replace(
    v.box,
    FIELD_LABEL[v.field] && !(collapsed && cut === 0) ? h("div", { class: "field-label" }, FIELD_LABEL[v.field]) : null,
    collapsed && cut === 0 ? null : pre,
    collapsed
      ? toggle(v.folded ? `Show ${FIELD_LABEL[v.field]} (${count(v.text.split("\n").length)} lines)` : `Show all ${count(v.text.length)} characters (${count(v.text.split("\n").length)} lines)`, true)
      : v.expanded && cut < v.text.length
        ? toggle("Collapse", false)
        : null,
  );
}

/** The trace viewer: the steps as a timeline, findings beside them; a finding jumps to and highlights its evidence. */
export async function renderTrace(root: HTMLElement, route: Route, isCurrent: () => boolean): Promise<void> {
  const q = route.query;
  const detail = await api<TraceDetail>("/trace", { id: route.id, run: q.get("run"), annotator: q.get("annotator") });
  if (!isCurrent()) return;
  const { trace, diagnosis, run } = detail;
  document.title = `${trace.id} · faultline`;
  const modeName = new Map(detail.taxonomy.modes.map((m) => [m.code, m.name]));
  const findings: Finding[] = diagnosis?.findings ?? [];

  // Which findings cite each step, for the markers in the timeline.
  const citing = new Map<number, number[]>();
  findings.forEach((f, i) => f.steps.forEach((s) => citing.set(s, [...(citing.get(s) ?? []), i])));
  const references = referenceLabels(trace.goldLabels ?? [], diagnosis?.reference);
  const mistakeSteps = new Set(references.map((r) => r.mistakeStep).filter((s): s is number => s !== undefined));
  // Where and by whom the run first went wrong, by this annotator (a step of the recorded trace).
  const decisiveStep = diagnosis?.decisive?.step;

  const views: StepView[] = trace.steps.map((step) => {
    const fields: FieldView[] = displayFields(step).map((f) => ({
      field: f.field,
      text: f.text,
      box: h("div", { class: "field" }),
      expanded: false,
      // Arguments already spelled out in the step's text start folded away.
      folded: f.field === "args" && step.tool?.args !== undefined && (step.text ?? "").includes(JSON.stringify(step.tool.args)),
      highlight: null,
    }));
    for (const f of fields) drawField(f);
    const markers = (citing.get(step.index) ?? []).map((i) => {
      const b = h("button", { type: "button", class: "chip marker", title: `Finding: ${findings[i]!.mode} ${modeName.get(findings[i]!.mode) ?? ""}`, "data-finding": String(i) }, findings[i]!.mode);
      b.addEventListener("click", () => selectFinding(i, step.index));
      return b;
    });
    const tool = step.tool;
    const el = h(
      "li",
      {
        class: `step ${step.role} ${step.kind}${mistakeSteps.has(step.index) ? " reference-step" : ""}${step.index === decisiveStep ? " decisive-step" : ""}`,
        id: `step-${step.index}`,
        "data-step": String(step.index),
      },
      h(
        "div",
        { class: "step-head" },
        h("span", { class: "idx" }, `#${step.index}`),
        h("span", { class: "agent", title: "agent" }, step.agent),
        h("span", { class: "kind" }, step.kind === "message" ? step.role : `${step.role} · ${step.kind.replace("_", " ")}`),
        tool ? h("span", { class: "tool" }, step.kind === "tool_result" ? "← " : "→ ", tool.name) : null,
        tool?.exitCode !== undefined ? h("span", { class: `badge ${tool.exitCode === 0 ? "ok" : "bad"}` }, `exit ${tool.exitCode}`) : null,
        tool?.isError && tool.exitCode === undefined ? h("span", { class: "badge bad" }, "error") : null,
        (step.tags ?? []).map((t) => h("span", { class: "tag" }, t)),
        step.time ? h("span", { class: "time" }, step.time) : null,
        step.index === decisiveStep ? h("span", { class: "badge decisive", title: "Where the run first went wrong, by the annotator" }, "decisive step") : null,
        mistakeSteps.has(step.index) ? h("span", { class: "badge ref" }, "reference: decisive mistake") : null,
        h("span", { class: "markers" }, markers),
      ),
      fields.length ? fields.map((f) => f.box) : h("div", { class: "field muted small" }, "(no content)"),
    );
    return { step, el, fields };
  });

  const findingItems: HTMLElement[] = [];

  function clearSelection(): void {
    for (const v of views) {
      if (!v.el.classList.contains("cited")) continue;
      v.el.classList.remove("cited", "has-evidence");
      for (const f of v.fields)
        if (f.highlight) {
          f.highlight = null;
          drawField(f);
        }
    }
    for (const li of findingItems) li.classList.remove("selected");
  }

  function selectFinding(i: number, focusStep?: number): void {
    const f = findings[i];
    if (!f) return;
    clearSelection();
    findingItems[i]?.classList.add("selected");
    let firstWithEvidence: StepView | undefined;
    for (const s of f.steps) {
      const v = views[s];
      if (!v) continue;
      v.el.classList.add("cited");
      const at = locateEvidence(v.step, f.evidence);
      if (!at) continue;
      const fv = v.fields.find((x) => x.field === at.field);
      if (!fv) continue;
      fv.highlight = { start: at.start, end: at.end };
      drawField(fv);
      v.el.classList.add("has-evidence");
      firstWithEvidence ??= v;
    }
    const target = (focusStep !== undefined ? views[focusStep] : undefined) ?? firstWithEvidence ?? views[f.steps[0] ?? -1];
    if (target) {
      const mark = target.el.querySelector("mark.evidence");
      (mark ?? target.el).scrollIntoView({ block: "center", behavior: "auto" });
      target.el.classList.remove("flash");
      void target.el.offsetWidth; // restart the flash animation
      target.el.classList.add("flash");
    }
    const params = new URLSearchParams(location.search);
    params.set("finding", String(i));
    params.delete("mode");
    history.replaceState(null, "", `${location.pathname}?${params}`);
  }

  function jumpToStep(n: number): void {
    const v = views[n];
    if (!v) return;
    v.el.scrollIntoView({ block: "center" });
    v.el.classList.remove("flash");
    void v.el.offsetWidth;
    v.el.classList.add("flash");
  }

  const stepLink = (n: number) => {
    const b = h("button", { type: "button", class: "link mono", "data-step-link": String(n) }, `#${n}`);
    b.addEventListener("click", (e) => {
      e.stopPropagation();
      jumpToStep(n);
    });
    return b;
  };

  const findingList = h(
    "ol",
    { class: "findings" },
    findings.map((f, i) => {
      const li = h(
        "li",
        { class: "finding", "data-finding": String(i), "data-mode": f.mode, tabindex: 0, role: "button", "aria-label": `Finding ${f.mode} ${modeName.get(f.mode) ?? ""}: show evidence` },
        h("div", { class: "finding-head" }, modeChip(f.mode, modeName.get(f.mode)), h("strong", null, modeName.get(f.mode) ?? f.mode), h("span", { class: "conf", title: "confidence" }, `${Math.round(f.confidence * 100)}%`)),
        h("div", { class: "small muted" }, f.detector, f.agent ? ` · agent ${f.agent}` : ""),
        h("div", { class: "small" }, "Steps ", f.steps.map((s, k) => [k ? " " : "", stepLink(s)])),
        f.evidence ? h("blockquote", { class: "quote" }, textBlock(f.evidence)) : null,
        f.rationale ? h("p", { class: "small rationale" }, f.rationale) : null,
      );
      li.addEventListener("click", () => selectFinding(i));
      li.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          selectFinding(i);
        }
      });
      findingItems.push(li);
      return li;
    }),
  );

  const outcome = diagnosis?.outcome;
  const outcomeText = outcome
    ? [outcome.score !== null && outcome.score !== undefined ? `${outcome.metric ?? "score"} ${outcome.score}` : "", outcome.rule ? `rule: ${outcome.rule}` : ""].filter(Boolean).join(" · ")
    : "";
  const success = outcome ? outcome.success : (trace.outcome?.success ?? null);
  const task = trace.task?.text;
  const annotatorQ = q.get("annotator") ?? undefined;

  const aside = h(
    "aside",
    { class: "side" },
    diagnosis ? decisivePanel(diagnosis, modeName, trace.steps.length, jumpToStep) : null,
    h("h2", null, `Findings (${findings.length})`),
    diagnosis === null
      ? h("p", { class: "muted" }, `No diagnosis by ${detail.annotator} for this trace.`)
      : diagnosis.error
        ? h("div", { class: "error" }, `Not annotated: ${diagnosis.error}`)
        : findings.length === 0
          ? h("p", { class: "muted" }, "No failure mode found in this trace.")
          : h("p", { class: "small muted" }, "Click a finding to jump to its evidence."),
    findingList,
    diagnosis && Object.keys(diagnosis.signals).length
      ? h(
          "details",
          { class: "signals" },
          h("summary", null, "Signals"),
          keyValues(Object.entries(diagnosis.signals).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])),
        )
      : null,
  );

  replace(
    root,
    h(
      "header",
      { class: "page-head" },
      h(
        "p",
        { class: "crumbs" },
        nav(paths.runs(), null, "Runs"),
        " / ",
        nav(paths.overview(run.id, { annotator: annotatorQ }), { class: "mono" }, shortId(run.id)),
        " / ",
        nav(paths.traces(run.id, { annotator: annotatorQ, mode: q.get("mode") ?? undefined }), null, "traces"),
      ),
      h("h1", { class: "trace-id mono" }, trace.id),
      keyValues([
        ["Outcome", h("span", null, outcomeBadge(success), outcomeText ? ` ${outcomeText}` : "")],
        ["Model", trace.model ?? "–"],
        ["Framework", trace.framework ?? ""],
        ["Source", `${trace.source.file} (${trace.source.format}, #${trace.source.index})`],
        ["Steps", `${count(trace.steps.length)} by ${trace.agents.length ? trace.agents.join(", ") : "–"}`],
        ["Annotator", detail.annotator],
        [
          "Also in",
          detail.otherRuns.length ? detail.otherRuns.map((r, i) => [i ? ", " : "", nav(paths.trace(trace.id, { run: r }), { class: "mono" }, `run ${shortId(r)}`)]) : "",
        ],
      ]),
      task ? h("details", { class: "task", open: task.length < 600 }, h("summary", null, "Task"), h("pre", { class: "content" }, textBlock(task))) : null,
      references.length ? referencePanel(references, jumpToStep) : null,
    ),
    h("div", { class: "viewer" }, h("ol", { class: "timeline" }, views.map((v) => v.el)), aside),
  );

  // Arriving from a mode filter or with a chosen finding: show that evidence straight away.
  const wanted = q.get("finding");
  const mode = q.get("mode");
  const start = wanted !== null ? Number(wanted) : mode ? findings.findIndex((f) => f.mode === mode) : -1;
  if (start >= 0 && start < findings.length) selectFinding(start);
}

/**
 * The annotator's decisive step: where and by whom the run first went wrong, with a button that scrolls to it; or why
 * there is none. Nothing when the record does not address it (an annotator that predates the field).
 */
function decisivePanel(d: Diagnosis, modeName: Map<string, string>, steps: number, jump: (n: number) => void): HTMLElement | null {
  if (d.decisive === undefined) return null;
  if (d.decisive === null)
    return h(
      "section",
      { class: "decisive-panel none", "data-decisive": "none" },
      h("h2", null, "Decisive step"),
      h("p", { class: "small muted reason" }, "No decisive step: ", textBlock(d.decisive_reason || "no reason given.")),
    );
  const x: Decisive = d.decisive;
  const inTrace = x.step < steps;
  const go = h("button", { type: "button", class: "link", "data-decisive-jump": String(x.step) }, `Go to step #${x.step}`);
  go.addEventListener("click", () => jump(x.step));
  return h(
    "section",
    { class: "decisive-panel", "data-decisive-step": String(x.step) },
    h("h2", null, "Decisive step"),
    h("p", { class: "small muted" }, "Where the run first went wrong, and which agent owned that step."),
    keyValues([
      ["Step", inTrace ? h("span", { class: "mono" }, `#${x.step}`) : h("span", { class: "mono" }, `#${x.step} (not in the recorded trace)`)],
      ["Agent", x.agent !== null ? h("span", { class: "agent" }, x.agent) : h("span", { class: "muted" }, "unknown")],
      ["Mode", h("span", null, modeChip(x.mode, modeName.get(x.mode)), " ", modeName.get(x.mode) ?? "")],
      ["Confidence", `${Math.round(x.confidence * 100)}%`],
      ["Based on", x.basis.join(", ")],
    ]),
    x.rationale ? h("p", { class: "small rationale" }, textBlock(x.rationale)) : null,
    inTrace ? go : null,
  );
}

type ReferenceView = GoldLabels;

/** Reference labels from the trace (its dataset's) or, failing that, those copied into the diagnosis. */
function referenceLabels(gold: GoldLabels[], reference: Record<string, unknown> | undefined): ReferenceView[] {
  if (gold.length) return gold;
  if (!reference) return [];
  return Object.values(reference).filter((v): v is GoldLabels => typeof v === "object" && v !== null && typeof (v as { source?: unknown }).source === "string");
}

function referencePanel(refs: ReferenceView[], jump: (n: number) => void): HTMLElement {
  return h(
    "section",
    { class: "panel reference" },
    h("h2", null, "Reference labels"),
    h("p", { class: "intro" }, "Labels shipped with the dataset, shown for comparison; they are not faultline's findings."),
    refs.map((r) => {
      const present = r.mast ? Object.entries(r.mast).filter(([, v]) => v === 1).map(([k]) => k) : [];
      const step: Child =
        r.mistakeStep !== undefined
          ? (() => {
              const b = h("button", { type: "button", class: "link mono" }, `#${r.mistakeStep}`);
              b.addEventListener("click", () => jump(r.mistakeStep!));
              return b;
            })()
          : "";
      return h(
        "div",
        { class: "ref", "data-source": r.source },
        keyValues([
          ["Source", r.source],
          ["Decisive agent", r.mistakeAgent ?? ""],
          ["Decisive step", step],
          ["Reason", r.mistakeReason ? h("span", null, textBlock(r.mistakeReason)) : ""],
          ["MAST labels", r.mast ? (present.length ? present.map((c) => modeChip(c)) : "none present") : ""],
          ["Failures", r.failures?.length ? `${r.failures.length} labelled` : ""],
        ]),
      );
    }),
  );
}
