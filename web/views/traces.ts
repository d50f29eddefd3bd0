import type { RunFacets, RunSummary, TraceSortKey, TracesResponse } from "../../src/server/api-types.js";
import { api } from "../api.js";
import { h, nav, replace } from "../dom.js";
import { count, cut, shortId } from "../format.js";
import { go, paths, type Route } from "../router.js";
import { failure, modeChip, outcomeBadge, select } from "../ui.js";

const PAGE = 50;
const FILTERS = ["model", "outcome", "mode", "format", "q"] as const;

/** Facets only change with the run, so they are fetched once per run and annotator. */
const facetCache = new Map<string, RunFacets>();
/** Set while a search typed in the box is being applied, so the box keeps the focus after the list redraws. */
let typing = false;

/** The trace list: filters, sorting and paging all happen on the server, so 10 000 traces stay fast. */
export async function renderTraces(root: HTMLElement, route: Route, isCurrent: () => boolean): Promise<void> {
  const q = route.query;
  const annotator = q.get("annotator") ?? undefined;
  const page = Math.max(0, Number(q.get("page") ?? "0") || 0);
  const sort = (q.get("sort") ?? "file") as TraceSortKey;
  const dir = q.get("dir") === "desc" ? "desc" : "asc";
  const cacheKey = `${route.id}\u0000${annotator ?? ""}`;
  const known = facetCache.get(cacheKey);
  const [run, res] = await Promise.all([
    api<RunSummary>(`/runs/${encodeURIComponent(route.id)}`),
    api<TracesResponse>(`/runs/${encodeURIComponent(route.id)}/traces`, {
      annotator,
      model: q.get("model"),
      outcome: q.get("outcome"),
      mode: q.get("mode"),
      format: q.get("format"),
      q: q.get("q"),
      sort,
      dir,
      offset: page * PAGE,
      limit: PAGE,
      facets: known ? undefined : "1",
    }),
  ]);
  if (!isCurrent()) return;
  const facets = known ?? res.facets!;
  facetCache.set(cacheKey, facets);
  document.title = `Traces · run ${shortId(run.id)} · faultline`;

  const state = Object.fromEntries([...q.entries()]) as Record<string, string | undefined>;
  const withState = (changes: Record<string, string | undefined>) => paths.traces(run.id, { ...state, ...changes });
  const setFilter = (k: string, v: string) => go(withState({ [k]: v || undefined, page: undefined }));

  const liveText = document.querySelector<HTMLInputElement>("form.filters input[name=q]")?.value;
  const search = h("input", { type: "search", name: "q", placeholder: "Search ids, files, evidence, step text…", value: q.get("q") ?? "", "aria-label": "Text search" });
  let timer: number | undefined;
  const submitSearch = () => {
    if (search.value.trim() === (q.get("q") ?? "")) return;
    typing = true;
    go(withState({ q: search.value.trim() || undefined, page: undefined }), { replace: true });
  };
  search.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(submitSearch, 350);
  });
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      window.clearTimeout(timer);
      submitSearch();
    }
  });

  const filters = h(
    "form",
    { class: "filters", role: "search" },
    select({
      label: "Model",
      name: "model",
      value: q.get("model") ?? "",
      options: [{ value: "", label: "All models" }, ...facets.models.map((f) => ({ value: f.value ?? "(none)", label: `${f.value ?? "(none)"} (${count(f.count)})` }))],
      onChange: (v) => setFilter("model", v),
    }),
    select({
      label: "Outcome",
      name: "outcome",
      value: q.get("outcome") ?? "",
      options: [
        { value: "", label: "Any outcome" },
        { value: "failure", label: `Failed (${count(facets.outcomes.failure)})` },
        { value: "success", label: `Successful (${count(facets.outcomes.success)})` },
        { value: "unknown", label: `Unknown (${count(facets.outcomes.unknown)})` },
      ],
      onChange: (v) => setFilter("outcome", v),
    }),
    select({
      label: "Failure mode",
      name: "mode",
      value: q.get("mode") ?? "",
      options: [
        { value: "", label: "Any mode" },
        ...facets.modes.map((f) => ({ value: f.value ?? "", label: `${f.value} (${count(f.count)})` })),
        // modes no detector or judge examined in this run: listed, but there is nothing to filter on
        ...(facets.coverage ?? []).filter((c) => c.annotated > 0 && c.measured === 0).map((c) => ({ value: c.code, label: `${c.code} (not measured)`, disabled: true })),
      ],
      onChange: (v) => setFilter("mode", v),
    }),
    select({
      label: "Format",
      name: "format",
      value: q.get("format") ?? "",
      options: [{ value: "", label: "All formats" }, ...facets.formats.map((f) => ({ value: f.value ?? "", label: `${f.value} (${count(f.count)})` }))],
      onChange: (v) => setFilter("format", v),
    }),
    h("label", { class: "field grow" }, h("span", null, "Search"), search),
    FILTERS.some((k) => q.get(k)) ? nav(paths.traces(run.id, { annotator, sort: q.get("sort") ?? undefined, dir: q.get("dir") ?? undefined }), { class: "button small" }, "Clear filters") : null,
  );
  filters.addEventListener("submit", (e) => e.preventDefault());

  const header = (label: string, key: TraceSortKey | null, cls = "") => {
    if (!key) return h("th", { scope: "col", class: cls }, label);
    const active = sort === key;
    const next = active && dir === "asc" ? "desc" : "asc";
    return h(
      "th",
      { scope: "col", class: cls, "aria-sort": active ? (dir === "asc" ? "ascending" : "descending") : "none" },
      nav(withState({ sort: key, dir: next, page: undefined }), { class: "sort", "data-sort": key }, label, active ? (dir === "asc" ? " ▲" : " ▼") : ""),
    );
  };
  const activeMode = q.get("mode");
  const traceHref = (id: string) => paths.trace(id, { run: run.id, annotator, mode: activeMode ?? undefined });
  const table = h(
    "table",
    { class: "grid traces" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        header("Trace", "trace_id"),
        header("Model", "model"),
        header("Outcome", "outcome"),
        header("Modes", "modes"),
        header("Steps", "steps", "num"),
        header("Format", "format"),
        header("File", "file"),
      ),
    ),
    h(
      "tbody",
      null,
      res.rows.map((r) =>
        h(
          "tr",
          { "data-trace": r.trace_id },
          h("td", { class: "mono" }, nav(traceHref(r.trace_id), { title: r.trace_id, class: "trace-link" }, cut(r.trace_id, 60))),
          h("td", null, r.model ?? h("span", { class: "muted" }, "–")),
          h("td", null, outcomeBadge(r.success)),
          h(
            "td",
            { class: "modes" },
            r.modes === null
              ? h("span", { class: "muted", title: r.error ?? "" }, "not annotated")
              : [
                  r.modes.length ? r.modes.map((m) => modeChip(m, undefined, m === activeMode)) : h("span", { class: "muted" }, "none found"),
                  // unknown, not absent: said apart from the modes found
                  r.unmeasured?.length
                    ? h(
                        "span",
                        { class: "muted small not-measured", "data-unmeasured": r.unmeasured.join(" "), title: `Not measured — no detector or judge examined them (unknown, not absent): ${r.unmeasured.join(", ")}` },
                        ` · n/m ${r.unmeasured.length <= 3 ? r.unmeasured.join(" ") : `×${r.unmeasured.length}`}`,
                      )
                    : null,
                ],
          ),
          h("td", { class: "num" }, count(r.steps)),
          h("td", { class: "small" }, r.format),
          h("td", { class: "small mono file", title: r.file }, cut(r.file.split("/").slice(-2).join("/"), 48)),
        ),
      ),
    ),
  );
  const first = res.total === 0 ? 0 : res.offset + 1;
  const last = res.offset + res.rows.length;
  const pages = Math.max(1, Math.ceil(res.total / PAGE));
  const pager = h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    page > 0 ? nav(withState({ page: String(page - 1) }), { class: "button small", rel: "prev" }, "← Previous") : h("span", { class: "button small disabled" }, "← Previous"),
    h("span", { class: "status", "data-total": String(res.total) }, res.total === 0 ? "No traces match" : `${count(first)}–${count(last)} of ${count(res.total)} traces · page ${page + 1} of ${count(pages)}`),
    page + 1 < pages ? nav(withState({ page: String(page + 1) }), { class: "button small", rel: "next" }, "Next →") : h("span", { class: "button small disabled" }, "Next →"),
  );
  replace(
    root,
    h(
      "header",
      { class: "page-head" },
      h("p", { class: "crumbs" }, nav(paths.runs(), null, "Runs"), " / ", nav(paths.overview(run.id, { annotator }), { class: "mono" }, shortId(run.id)), " / traces"),
      h("h1", null, "Traces"),
    ),
    h("div", { class: "panel" }, filters, res.rows.length ? h("div", { class: "scroll-x" }, table) : failure("No trace matches these filters."), pager),
  );
  if (typing) {
    typing = false;
    // Characters typed while the results were loading are kept, and searched for in turn.
    if (liveText !== undefined && liveText.trim() !== (q.get("q") ?? "")) {
      search.value = liveText;
      timer = window.setTimeout(submitSearch, 350);
    }
    search.focus();
    search.setSelectionRange(search.value.length, search.value.length);
  }
}
