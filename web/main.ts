import { ApiFailure, AuthRequired, captureToken, setToken } from "./api.js";
import { h, replace } from "./dom.js";
import { onNavigate, parseRoute } from "./router.js";
import { failure, loading } from "./ui.js";
import { renderCompare } from "./views/compare.js";
import { renderOverview } from "./views/overview.js";
import { renderRuns } from "./views/runs.js";
import { renderTrace } from "./views/trace.js";
import { renderTraces } from "./views/traces.js";

/*
 * The faultline dashboard: plain TypeScript and the DOM. Each address is one view; a view fetches what it needs
 * from the JSON API and draws itself. A newer navigation makes an older, still-loading view drop its result.
 */

let generation = 0;
/** Tells this page load's renders apart from another load's (tests wait for `data-ready` to change). */
const LOAD = Math.random().toString(36).slice(2, 8);

function tokenForm(root: HTMLElement): void {
  const input = h("input", { type: "password", name: "token", autocomplete: "off", "aria-label": "Access token" });
  const form = h(
    "form",
    { class: "panel token" },
    h("h1", null, "Access token needed"),
    h("p", null, "This dashboard listens beyond this machine, so every request must carry its access token. Paste the token given to `faultline serve`."),
    h("div", { class: "filters" }, input, h("button", { type: "submit", class: "primary" }, "Continue")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    void render();
  });
  replace(root, form);
  input.focus();
}

async function render(): Promise<void> {
  const root = document.getElementById("app")!;
  const mine = ++generation;
  const isCurrent = () => mine === generation;
  const route = parseRoute(location.pathname, location.search);
  for (const a of document.querySelectorAll("header.top nav a")) a.classList.toggle("active", a.getAttribute("data-section") === (route.name === "compare" ? "compare" : "runs"));
  // Keep the current view while the next one loads. Another view that takes a moment shows "Loading…"; the same
  // view (a new filter, page or search) is only dimmed, so the search box keeps its focus and what is typed in it.
  const sameView = document.body.dataset.view === route.name;
  const slow = window.setTimeout(() => {
    if (!isCurrent()) return;
    if (sameView) root.classList.add("busy");
    else replace(root, loading(route.name));
  }, 150);
  root.setAttribute("aria-busy", "true");
  try {
    switch (route.name) {
      case "runs":
        await renderRuns(root, isCurrent);
        break;
      case "overview":
        await renderOverview(root, route, isCurrent);
        break;
      case "traces":
        await renderTraces(root, route, isCurrent);
        break;
      case "trace":
        await renderTrace(root, route, isCurrent);
        break;
      case "compare":
        await renderCompare(root, route, isCurrent);
        break;
      default:
        document.title = "Not found · faultline";
        replace(root, failure(`Nothing at ${location.pathname}.`));
    }
  } catch (e) {
    if (!isCurrent()) return;
    if (e instanceof AuthRequired) tokenForm(root);
    else replace(root, failure(e instanceof ApiFailure ? e.message : `Something went wrong: ${(e as Error).message}`));
  } finally {
    window.clearTimeout(slow);
    if (isCurrent()) {
      root.classList.remove("busy");
      root.setAttribute("aria-busy", "false");
      document.body.dataset.view = route.name;
      document.body.dataset.ready = `${LOAD}:${mine}`;
    }
  }
}

captureToken();
onNavigate(() => void render());
void render();
