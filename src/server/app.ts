import { Hono, type Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { z } from "zod";
import { SqliteStore, Store, TRACE_SORT_KEYS, type FaultlineStore, type RunFacets, type RunInfo, type TraceQuery, type TraceSortKey } from "../store/index.js";
import type { Comparison, Overview, RunSummary, RunsResponse, TraceDetail, TracesResponse } from "./api-types.js";
import type { UiAssets } from "./assets.js";
import { buildComparison, buildOverview, computeRunStats, keepOverview, storedOverview, taxonomyInfo, type RunStats } from "./overview.js";
import { apiGuard, securityHeaders } from "./security.js";

export interface AppOptions {
  /** When set, every /api request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** The UI to serve; without it only the API answers (enough for API tests). */
  assets?: UiAssets;
}

/** Paths the single-page UI answers (the browser's address bar may hold any of them). */
const UI_ROUTES = ["/", "/runs", "/runs/*", "/traces/*", "/compare"];

class HttpError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

const OUTCOMES = ["success", "failure", "unknown"] as const;

/** The dashboard's Hono app over a store: the JSON API under /api and the UI everywhere else. */
export function createApp(given: FaultlineStore | Store, opts: AppOptions = {}): Hono {
  // a synchronous SQLite Store (the library's, and the tests') is served through the same asynchronous interface
  const store: FaultlineStore = given instanceof Store ? new SqliteStore(given) : given;
  const app = new Hono();
  // Statistics, comparisons and facets are computed once per run, annotator and update time (re-analysing the same
  // inputs while the server runs changes the update time, so it is picked up).
  const runStats = new Memo<RunStats>(8);
  const overviews = new Memo<Overview>(8);
  const comparisons = new Memo<Comparison>(8);
  const facets = new Memo<RunFacets>(32);
  const version = (run: RunSummary, annotator: string) => `${run.id}\u0000${annotator}\u0000${run.updated_at}`;
  const statsOf = (run: RunSummary, annotator: string) => runStats.get(version(run, annotator), () => computeRunStats(store, run.id, annotator));

  const summary = async (r: RunInfo): Promise<RunSummary> => {
    const progress = await store.progress(r.id);
    return { ...r, annotators: ordered(r.annotator, await store.annotatorsOf(r.id)), ...(progress ? { progress } : {}) };
  };
  const summaries = async (): Promise<RunSummary[]> => Promise.all((await store.runs()).map(summary));
  const runOr404 = async (id: string): Promise<RunSummary> => {
    const r = await store.run(id);
    if (!r) throw new HttpError(404, `no run ${id} in ${store.path}`);
    return summary(r);
  };
  const annotatorOf = (run: RunSummary, asked: string | undefined): string => {
    if (asked === undefined || asked === "") return run.annotators[0] ?? run.annotator;
    if (!run.annotators.includes(asked)) throw new HttpError(404, `run ${run.id} has no diagnoses by annotator ${asked} (it has ${run.annotators.join(", ") || "none"})`);
    return asked;
  };

  app.use("*", securityHeaders());
  app.use("/api/*", apiGuard({ token: opts.token }));

  app.onError((err, c) => {
    if (err instanceof HttpError) return c.json({ error: err.message }, err.status);
    // middleware answers (bearer-auth's 401 and 400) carry their own response
    if (err instanceof HTTPException) return err.getResponse();
    return c.json({ error: `internal error: ${err.message}` }, 500);
  });

  app.get("/api/health", (c) => c.json({ ok: true, store: store.path }));

  app.get("/api/runs", async (c) => c.json<RunsResponse>({ runs: await summaries() }));

  app.get("/api/runs/:run", async (c) => c.json<RunSummary>(await runOr404(c.req.param("run"))));

  app.get("/api/runs/:run/overview", async (c) => {
    const run = await runOr404(c.req.param("run"));
    const annotator = annotatorOf(run, c.req.query("annotator"));
    const overview = await overviews.get(version(run, annotator), async () => {
      const stored = await storedOverview(store, run, annotator);
      if (stored) return stored;
      const built = buildOverview(run, annotator, await statsOf(run, annotator));
      await keepOverview(store, built);
      return built;
    });
    return c.json<Overview>(overview);
  });

  app.get("/api/runs/:run/traces", async (c) => {
    const run = await runOr404(c.req.param("run"));
    const annotator = annotatorOf(run, c.req.query("annotator"));
    const q = traceQuery(c, annotator);
    const page = await store.listTraces(run.id, q);
    const body: TracesResponse =
      params(c, TraceParamsSchema).facets === "1" ? { ...page, facets: await facets.get(version(run, annotator), () => store.runFacets(run.id, annotator)) } : page;
    return c.json(body);
  });

  // Trace ids hold ':' and '/', so the id travels as a query parameter, not a path segment.
  app.get("/api/trace", async (c) => {
    const id = c.req.query("id");
    if (!id) throw new HttpError(400, "missing ?id=<trace id>");
    const holders = await store.runsWithTrace(id);
    const asked = c.req.query("run");
    const runId = asked ? (await runOr404(asked)).id : holders[0];
    if (!runId) throw new HttpError(404, `no trace ${id} in any run of ${store.path}`);
    const run = await runOr404(runId);
    const trace = await store.trace(run.id, id);
    if (!trace) throw new HttpError(404, `run ${run.id} has no trace ${id}`);
    const annotator = annotatorOf(run, c.req.query("annotator"));
    return c.json<TraceDetail>({
      run,
      annotator,
      trace,
      diagnosis: (await store.traceDiagnosis(run.id, id, annotator)) ?? null,
      taxonomy: taxonomyInfo(),
      otherRuns: holders.filter((r) => r !== run.id),
    });
  });

  app.get("/api/compare", async (c) => {
    const [a, b] = [c.req.query("a"), c.req.query("b")];
    if (!a || !b) throw new HttpError(400, "compare needs ?a=<run>&b=<run> (and optionally aa= / ba= annotators)");
    const ra = await runOr404(a);
    const rb = await runOr404(b);
    const [aa, ba] = [annotatorOf(ra, c.req.query("aa")), annotatorOf(rb, c.req.query("ba"))];
    const key = `${version(ra, aa)}\u0001${version(rb, ba)}`;
    const comparison = await comparisons.get(key, async () =>
      buildComparison({ run: ra, annotator: aa, stats: await statsOf(ra, aa) }, { run: rb, annotator: ba, stats: await statsOf(rb, ba) }),
    );
    return c.json<Comparison>(comparison);
  });

  app.all("/api/*", (c) => c.json({ error: `no API route ${c.req.method} ${c.req.path}` }, 404));

  const assets = opts.assets;
  if (assets) {
    const page = (c: Context) => c.html(assets.html);
    for (const r of UI_ROUTES) app.get(r, page);
    app.get("/assets/app.js", (c) => c.body(assets.js, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache" }));
    app.get("/assets/app.css", (c) => c.body(assets.css, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "no-cache" }));
  }
  app.notFound((c) => c.text("not found", 404));
  return app;
}

/** A small cache of promised values, oldest out first; a failed computation is forgotten so it can be retried. */
class Memo<T> {
  private readonly entries = new Map<string, Promise<T>>();
  constructor(private readonly size: number) {}
  get(key: string, compute: () => Promise<T>): Promise<T> {
    let p = this.entries.get(key);
    if (!p) {
      p = compute();
      this.entries.set(key, p);
      p.catch(() => this.entries.delete(key));
      if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value!);
    }
    return p;
  }
}

function ordered(first: string, all: string[]): string[] {
  return all.includes(first) ? [first, ...all.filter((a) => a !== first)] : all;
}

/** A whole number a query string may carry: digits only, and small enough to stay exact (SQLite takes 64-bit integers). */
const count = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a non-negative integer`)
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), `${name} must be a non-negative integer no larger than ${Number.MAX_SAFE_INTEGER}`);

/** The trace list's query parameters; every one is optional, and an empty value counts as absent. */
export const TraceParamsSchema = z.object({
  annotator: z.string().optional(),
  model: z.string().optional(),
  format: z.string().optional(),
  outcome: z.enum(OUTCOMES, { error: `outcome must be one of ${OUTCOMES.join(", ")}` }).optional(),
  mode: z.string().optional(),
  q: z.string().optional(),
  sort: z.enum(TRACE_SORT_KEYS, { error: `sort must be one of ${TRACE_SORT_KEYS.join(", ")}` }).optional(),
  dir: z.enum(["asc", "desc"], { error: "dir must be asc or desc" }).optional(),
  offset: count("offset").optional(),
  limit: count("limit").optional(),
  facets: z.enum(["0", "1"], { error: "facets must be 0 or 1" }).optional(),
});

/** Parses query parameters with a schema: a 400 naming every bad parameter, never a database error. */
function params<T extends z.ZodType>(c: Context, schema: T): z.infer<T> {
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.req.query())) if (v !== "") raw[k] = v;
  const r = schema.safeParse(raw);
  if (!r.success) throw new HttpError(400, r.error.issues.map((i) => i.message).join("; "));
  return r.data;
}

function traceQuery(c: Context, annotator: string): TraceQuery {
  const p = params(c, TraceParamsSchema);
  return {
    annotator,
    model: p.model,
    format: p.format,
    outcome: p.outcome,
    mode: p.mode,
    q: p.q,
    sort: p.sort as TraceSortKey | undefined,
    dir: p.dir,
    offset: p.offset,
    limit: p.limit,
  };
}
