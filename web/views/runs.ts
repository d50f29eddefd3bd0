import type { RunsResponse, RunSummary } from "../../src/server/api-types.js";
import { api } from "../api.js";
import { h, nav, replace } from "../dom.js";
import { count, shortId, when } from "../format.js";
import { go, paths } from "../router.js";
import { incompleteBadge, section } from "../ui.js";

/** Every analysis run in the store, newest first; pick two to compare. */
export async function renderRuns(root: HTMLElement, isCurrent: () => boolean): Promise<void> {
  const { runs } = await api<RunsResponse>("/runs");
  if (!isCurrent()) return;
  document.title = "Runs · faultline";
  if (runs.length === 0) {
    replace(
      root,
      h("h1", null, "Runs"),
      section("No runs yet", null, h("p", null, "This store holds no analysis. Run ", h("code", null, "faultline analyze <paths>"), " or ", h("code", null, "faultline serve <paths>"), ".")),
    );
    return;
  }
  const chosen: { a?: string; b?: string } = {};
  const compareBtn = h("button", { type: "button", class: "primary", disabled: true }, "Compare A with B");
  compareBtn.addEventListener("click", () => {
    if (chosen.a && chosen.b) go(paths.compare({ a: chosen.a, b: chosen.b }));
  });
  const pick = (side: "a" | "b", run: RunSummary) => {
    const r = h("input", { type: "radio", name: `side-${side}`, value: run.id, "aria-label": `${side.toUpperCase()}: run ${run.id}` });
    r.addEventListener("change", () => {
      chosen[side] = run.id;
      compareBtn.disabled = !(chosen.a && chosen.b && chosen.a !== chosen.b);
    });
    return r;
  };
  const problems = (r: RunSummary) => {
    const d = r.diagnostics;
    const parts = [
      d.errors ? `${d.errors} errors` : "",
      d.failed ? `${d.failed} not annotated` : "",
      d.skipped_traces ? `${d.skipped_traces} skipped traces` : "",
      d.refused_files ? `${d.refused_files} refused files` : "",
    ].filter(Boolean);
    return parts.length ? parts.join(", ") : "none";
  };
  const table = h(
    "table",
    { class: "grid runs" },
    h("thead", null, h("tr", null, ["Run", "Inputs", "Traces", "Annotators", "Analysed", "Problems", "A", "B"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      null,
      runs.map((r) =>
        h(
          "tr",
          { "data-run": r.id },
          h(
            "td",
            null,
            nav(paths.overview(r.id), { class: "mono", title: r.id }, shortId(r.id)),
            r.status === "incomplete" ? [" ", incompleteBadge()] : null,
          ),
          h("td", { class: "inputs" }, r.inputs.map((p) => h("div", { class: "mono small" }, p))),
          h("td", { class: "num" }, count(r.trace_count)),
          h("td", null, r.annotators.join(", ") || r.annotator),
          h("td", { class: "nowrap" }, when(r.updated_at)),
          h("td", { class: "small" }, problems(r)),
          h("td", null, pick("a", r)),
          h("td", null, pick("b", r)),
        ),
      ),
    ),
  );
  replace(
    root,
    h("h1", null, "Runs"),
    h("p", { class: "lead" }, `${runs.length} analysis run${runs.length === 1 ? "" : "s"} in this store. Open one to see which model fails how.`),
    h("div", { class: "panel" }, table, h("div", { class: "actions" }, compareBtn)),
  );
}
