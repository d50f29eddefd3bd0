/** Client-side routes. Every view has an address, so any state a person reaches can be bookmarked and shared. */

export type RouteName = "runs" | "overview" | "traces" | "trace" | "compare" | "notfound";

export interface Route {
  name: RouteName;
  /** Run id for overview / traces; trace id for trace. */
  id: string;
  query: URLSearchParams;
}

export function parseRoute(pathname: string, search: string): Route {
  const query = new URLSearchParams(search);
  const parts = pathname.split("/").filter(Boolean);
  const dec = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "runs")) return { name: "runs", id: "", query };
  if (parts[0] === "runs" && parts.length === 2) return { name: "overview", id: dec(parts[1]!), query };
  if (parts[0] === "runs" && parts.length === 3 && parts[2] === "traces") return { name: "traces", id: dec(parts[1]!), query };
  // A trace id may itself contain '/', so everything after /traces/ is the id.
  if (parts[0] === "traces" && parts.length >= 2) return { name: "trace", id: dec(pathname.slice(pathname.indexOf("/traces/") + 8)), query };
  if (parts[0] === "compare" && parts.length === 1) return { name: "compare", id: "", query };
  return { name: "notfound", id: "", query };
}

export const paths = {
  runs: () => "/",
  overview: (run: string, q?: Record<string, string | undefined>) => `/runs/${encodeURIComponent(run)}${qs(q)}`,
  traces: (run: string, q?: Record<string, string | undefined>) => `/runs/${encodeURIComponent(run)}/traces${qs(q)}`,
  trace: (traceId: string, q?: Record<string, string | undefined>) => `/traces/${encodeURIComponent(traceId)}${qs(q)}`,
  compare: (q?: Record<string, string | undefined>) => `/compare${qs(q)}`,
};

export function qs(q?: Record<string, string | undefined>): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : "";
}

type Listener = () => void;
let listener: Listener = () => {};

export function onNavigate(l: Listener): void {
  listener = l;
  window.addEventListener("popstate", () => listener());
  // Same-origin app links (data-nav) change the view without a page load; everything else behaves normally.
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.("a[data-nav]");
    if (!(a instanceof HTMLAnchorElement)) return;
    const href = a.getAttribute("href");
    if (!href?.startsWith("/")) return;
    e.preventDefault();
    go(href);
  });
}

/** Goes to an app address: a new history entry, or (replace) an update of the current one, e.g. while typing. */
export function go(href: string, opts: { replace?: boolean; render?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  if (opts.render !== false) listener();
  if (!opts.replace) window.scrollTo(0, 0);
}
