import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Store } from "../store/index.js";
import type { Comparison, Overview, RunsResponse, TraceDetail, TracesResponse } from "./api-types.js";
import { createApp } from "./app.js";
import { listTraces } from "../store/index.js";
import { loadUiAssets } from "./assets.js";
import { CONTENT_SECURITY_POLICY } from "./security.js";
import { buildFixtureStore, HOSTILE_MODEL, recordDecisive, type FixtureStore } from "./fixtures.js";
import { startServer } from "./index.js";

let root: string;
let fx: FixtureStore;
let store: Store;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "faultline-server-"));
  fx = await buildFixtureStore(root, 60);
  store = new Store(fx.db);
  app = createApp(store);
});

afterAll(() => {
  store?.close();
  rmSync(root, { recursive: true, force: true });
});

async function get<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T; res: Response }> {
  const res = await app.request(path, init);
  return { status: res.status, body: (await res.json()) as T, res };
}

/** The stored diagnoses of run A, read directly: what the API answers is checked against them. */
const diagnosesA = () => store.diagnoses(fx.runA);

describe("runs", () => {
  it("lists every run with its inputs, trace count and annotators", async () => {
    const { status, body } = await get<RunsResponse>("/api/runs");
    expect(status).toBe(200);
    expect(body.runs.map((r) => r.id).sort()).toEqual([fx.runA, fx.runB].sort());
    for (const r of body.runs) {
      expect(r.trace_count).toBe(60);
      expect(r.annotators).toEqual([r.annotator]);
      expect(r.inputs).toHaveLength(1);
    }
  });

  it("answers a run by id prefix and 404s an unknown one", async () => {
    expect((await get<{ id: string }>(`/api/runs/${fx.runA.slice(0, 6)}`)).body.id).toBe(fx.runA);
    const missing = await get<{ error: string }>("/api/runs/ffffffffffff");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/no run ffffffffffff/);
  });
});

describe("overview", () => {
  it("reports per-model prevalence that matches the stored diagnoses", async () => {
    const { status, body } = await get<Overview>(`/api/runs/${fx.runA}/overview`);
    expect(status).toBe(200);
    expect(body.all.traces).toBe(60);
    expect(body.models.map((g) => g.value).sort()).toEqual(["(none)", HOSTILE_MODEL, "model-alpha", "model-beta"].sort());
    for (const g of body.models) {
      const mine = diagnosesA().filter((d) => (d.model ?? "(none)") === g.value);
      expect(g.traces).toBe(mine.length);
      const with13 = mine.filter((d) => d.modes?.["1.3"] === 1).length;
      const m = g.modes.find((x) => x.code === "1.3")!;
      expect(m.counts.all).toBe(with13);
      expect(m.prevalence.all).toBeCloseTo(with13 / mine.length, 10);
    }
    expect(body.taxonomy.modes).toHaveLength(14);
  });

  it("histograms modes per failed trace over exactly the annotated failed traces", async () => {
    const { body } = await get<Overview>(`/api/runs/${fx.runA}/overview`);
    for (const h of body.modesPerFailed) {
      const failed = diagnosesA().filter((d) => (d.model ?? "(none)") === h.model && d.outcome.success === false && d.modes);
      expect(h.counts.reduce((a, b) => a + b, 0)).toBe(failed.length);
      const two = failed.filter((d) => Object.values(d.modes!).filter((v) => v === 1).length === 2).length;
      expect(h.counts[2]).toBe(two);
    }
  });

  it("ranks interventions per group, with each model's own failed traces as the reach", async () => {
    const { body } = await get<Overview>(`/api/runs/${fx.runA}/overview`);
    expect(body.interventions.map((g) => g.value)).toEqual(["all", ...body.models.map((g) => g.value)]);
    for (const gi of body.interventions) {
      const mine = diagnosesA().filter((d) => gi.key === "all" || (d.model ?? "(none)") === gi.value);
      const failed = mine.filter((d) => d.outcome.success === false && d.modes);
      const leverages = gi.ranking.map((r) => r.leverage);
      expect(leverages).toEqual([...leverages].sort((a, b) => b - a));
      for (const r of gi.ranking) {
        expect(r.reach?.annotated_failed).toBe(failed.length);
        const targets = r.contributions.map((c) => c.mode);
        expect(r.reach?.failed_traces).toBe(failed.filter((d) => targets.some((t) => d.modes![t] === 1)).length);
        expect(body.interventionCatalogue.entries[r.id]?.action).toBeTruthy();
      }
    }
    // The fixtures repeat lookups (1.3) in most failures: the guard that targets 1.3 reaches them.
    const all = body.interventions[0]!.ranking;
    expect(all.find((r) => r.contributions.some((c) => c.mode === "1.3"))!.reach!.failed_traces).toBeGreaterThan(0);
  });

  it("refuses an annotator the run does not have", async () => {
    const r = await get<{ error: string }>(`/api/runs/${fx.runA}/overview?annotator=llm:nobody`);
    expect(r.status).toBe(404);
    expect(r.body.error).toMatch(/no diagnoses by annotator llm:nobody/);
  });
});

describe("trace list", () => {
  it("pages through every trace exactly once", async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 60; offset += 7) {
      const { body } = await get<TracesResponse>(`/api/runs/${fx.runA}/traces?limit=7&offset=${offset}&sort=trace_id`);
      expect(body.total).toBe(60);
      seen.push(...body.rows.map((r) => r.trace_id));
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(seen).toEqual([...seen].sort());
  });

  it("still reports the total past the last page", async () => {
    const { body } = await get<TracesResponse>(`/api/runs/${fx.runA}/traces?offset=1000&mode=1.3`);
    expect(body.rows).toEqual([]);
    expect(body.total).toBe(diagnosesA().filter((d) => d.findings.some((f) => f.mode === "1.3")).length);
  });

  it("sorts by steps, descending", async () => {
    const { body } = await get<TracesResponse>(`/api/runs/${fx.runA}/traces?sort=steps&dir=desc&limit=60`);
    const steps = body.rows.map((r) => r.steps);
    expect(steps).toEqual([...steps].sort((a, b) => b - a));
    expect(steps[0]).toBeGreaterThan(steps[steps.length - 1]!);
  });

  it("filters by mode, model and outcome as the stored diagnoses say", async () => {
    const ds = diagnosesA();
    const with13 = ds.filter((d) => d.findings.some((f) => f.mode === "1.3"));
    const byMode = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?mode=1.3&limit=500`)).body;
    expect(byMode.total).toBe(with13.length);
    expect(byMode.rows.every((r) => r.modes?.includes("1.3"))).toBe(true);

    const betaFailed = ds.filter((d) => d.model === "model-beta" && d.outcome.success === false).length;
    const q = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?model=model-beta&outcome=failure`)).body;
    expect(q.total).toBe(betaFailed);
    expect(q.rows.every((r) => r.model === "model-beta" && r.success === false)).toBe(true);

    const none = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?model=${encodeURIComponent("(none)")}`)).body;
    expect(none.total).toBe(ds.filter((d) => d.model === null).length);
    expect(none.total).toBeGreaterThan(0);
  });

  it("searches text inside the traces, and treats % and _ literally", async () => {
    const hostile = diagnosesA().filter((d) => d.trace_id.startsWith("hostile:")).length;
    expect(hostile).toBeGreaterThan(0);
    const hit = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?q=${encodeURIComponent("window.__xss")}`)).body;
    expect(hit.total).toBe(hostile);
    const pct = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?q=${encodeURIComponent("%")}`)).body;
    expect(pct.total).toBe(0);
  });

  it("returns facets whose counts agree with the filters", async () => {
    const { body } = await get<TracesResponse>(`/api/runs/${fx.runA}/traces?facets=1&limit=1`);
    const f = body.facets!;
    expect(f.outcomes.success + f.outcomes.failure + f.outcomes.unknown).toBe(60);
    for (const m of f.modes) {
      const filtered = (await get<TracesResponse>(`/api/runs/${fx.runA}/traces?mode=${m.value}&limit=1`)).body;
      expect(filtered.total).toBe(m.count);
    }
    expect(f.models.reduce((a, m) => a + m.count, 0)).toBe(60);
  });

  it("rejects bad parameters with a message", async () => {
    for (const [qs, msg] of [
      ["sort=evil;DROP", /sort must be one of/],
      ["outcome=maybe", /outcome must be one of/],
      ["dir=up", /dir must be asc or desc/],
      ["limit=-3", /limit must be a non-negative integer/],
      // larger than SQLite's 64-bit integers: once answered 500 "datatype mismatch"
      ["offset=99999999999999999999", /offset must be a non-negative integer no larger than 9007199254740991/],
      ["limit=1e3", /limit must be a non-negative integer/],
      ["offset=1.5", /offset must be a non-negative integer/],
      ["facets=yes", /facets must be 0 or 1/],
    ] as const) {
      const r = await get<{ error: string }>(`/api/runs/${fx.runA}/traces?${qs}`);
      expect(r.status, qs).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
    // every bad parameter is named at once
    const both = await get<{ error: string }>(`/api/runs/${fx.runA}/traces?offset=99999999999999999999&sort=nope`);
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/sort must be one of.*; offset must be/);
  });

  it("answers the largest exact offset with an empty page, and the store clamps what the API would refuse", async () => {
    const r = await get<TracesResponse>(`/api/runs/${fx.runA}/traces?offset=${Number.MAX_SAFE_INTEGER}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 60, rows: [] });
    expect(listTraces(store, fx.runA, { annotator: store.run(fx.runA)!.annotator, offset: 1e20 })).toMatchObject({ total: 60, rows: [] });
  });
});

describe("trace detail", () => {
  it("returns the trace with its diagnosis, by id alone or within a run", async () => {
    const id = diagnosesA().find((d) => d.trace_id.startsWith("hostile:"))!.trace_id;
    const inA = (await get<TraceDetail>(`/api/trace?id=${encodeURIComponent(id)}&run=${fx.runA}`)).body;
    expect(inA.trace.id).toBe(id);
    expect(inA.run.id).toBe(fx.runA);
    expect(inA.diagnosis?.findings.some((f) => f.mode === "1.3")).toBe(true);
    expect(inA.otherRuns).toEqual([fx.runB]);
    // Without a run: the most recently updated run that holds the id (run B was analysed last).
    const latest = (await get<TraceDetail>(`/api/trace?id=${encodeURIComponent(id)}`)).body;
    expect(latest.run.id).toBe(fx.runB);
  });

  it("returns the diagnosis's decisive step, or null with the reason there is none", async () => {
    const failed = diagnosesA()
      .filter((d) => d.outcome.success === false && !d.trace_id.startsWith("hostile:"))
      .map((d) => d.trace_id)
      .sort();
    const [withStep, without] = [failed[0]!, failed[1]!];
    const rationale = `Repeated the lookup instead of reading its result <img src=x onerror="alert(1)">`;
    const stored = recordDecisive(store, fx.runA, withStep, { mode: "1.3", step: 2, basis: ["steps"], confidence: 0.8, rationale });
    recordDecisive(store, fx.runA, without, null, "no step is on the causal path to the failure");

    const a = (await get<TraceDetail>(`/api/trace?id=${encodeURIComponent(withStep)}&run=${fx.runA}`)).body;
    expect(a.diagnosis?.decisive).toEqual({ mode: "1.3", step: 2, agent: a.trace.steps[2]!.agent, basis: ["steps"], confidence: 0.8, rationale });
    expect(a.diagnosis?.decisive).toEqual(stored.decisive);
    expect(a.diagnosis?.decisive_reason).toBeUndefined();
    expect(a.diagnosis!.decisive!.step).toBeLessThan(a.trace.steps.length);

    const b = (await get<TraceDetail>(`/api/trace?id=${encodeURIComponent(without)}&run=${fx.runA}`)).body;
    expect(b.diagnosis?.decisive).toBeNull();
    expect(b.diagnosis?.decisive_reason).toBe("no step is on the causal path to the failure");
    // the rest of the record is unchanged by recording it
    const before = diagnosesA().find((d) => d.trace_id === without)!;
    expect(b.diagnosis?.findings).toEqual(before.findings);
  });

  it("404s an unknown trace and 400s a missing id", async () => {
    expect((await get(`/api/trace?id=nope`)).status).toBe(404);
    expect((await get(`/api/trace`)).status).toBe(400);
  });
});

describe("compare", () => {
  it("shows which modes moved per model, with agreement on the shared traces", async () => {
    const { status, body } = await get<Comparison>(`/api/compare?a=${fx.runA}&b=${fx.runB}`);
    expect(status).toBe(200);
    expect(body.groups[0]!.group).toBe("all");
    const beta = body.groups.find((g) => g.group === "model-beta")!;
    const m13 = beta.modes.find((m) => m.code === "1.3")!;
    // Variant b makes model-beta stop repeating itself: 1.3 must fall, significantly, to zero.
    expect(m13.a.count).toBeGreaterThan(5);
    expect(m13.b.count).toBe(0);
    expect(m13.delta_pp.value!).toBeLessThan(0);
    expect(m13.moved).toBe(true);
    const alpha13 = body.groups.find((g) => g.group === "model-alpha")!.modes.find((m) => m.code === "1.3")!;
    expect(alpha13.a.count).toBe(alpha13.b.count);
    expect(alpha13.moved).toBe(false);
    expect(body.agreement?.matching.matched).toBe(60);
  });

  it("needs both sides", async () => {
    expect((await get(`/api/compare?a=${fx.runA}`)).status).toBe(400);
  });
});

describe("security", () => {
  it("sends a strict CSP and hardening headers on every response", async () => {
    for (const path of ["/api/runs", "/api/nothing-here", "/nothing"]) {
      const res = await app.request(path);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  it("checks the token on every API call when one is set", async () => {
    const guarded = createApp(store, { token: "s3cret-token" });
    expect((await guarded.request("/api/runs")).status).toBe(401);
    expect((await guarded.request("/api/runs", { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await guarded.request(`/api/runs/${fx.runA}/overview`)).status).toBe(401);
    expect((await guarded.request("/api/trace?id=x")).status).toBe(401);
    const ok = await guarded.request("/api/runs", { headers: { Authorization: "Bearer s3cret-token" } });
    expect(ok.status).toBe(200);
  });

  it("answers bad credentials as RFC 6750 says (hono/bearer-auth): challenges, a malformed header is a 400, JSON bodies", async () => {
    const guarded = createApp(store, { token: "s3cret-token" });
    const missing = await guarded.request("/api/runs");
    expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="faultline"');
    expect(await missing.json()).toEqual({ error: expect.stringMatching(/access token/) });
    const wrong = await guarded.request("/api/runs", { headers: { Authorization: "Bearer wrong" } });
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    const malformed = await guarded.request("/api/runs", { headers: { Authorization: "Bearer two words" } });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("www-authenticate")).toBe('Bearer error="invalid_request"');
    // the headers still go on refusals, and the UI outside /api needs no token
    expect(missing.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect(missing.headers.get("x-permitted-cross-domain-policies")).toBe("none");
    expect(missing.headers.get("cache-control")).toBe("no-store");
    // a token no client could send (outside RFC 6750's characters) is refused when the app is made
    expect(() => createApp(store, { token: "not a token!" })).toThrow(/access token may hold only/);
  });

  it("without a token, only answers requests addressed to a loopback host", async () => {
    expect((await app.request("/api/runs", { headers: { Host: "attacker.example:4477" } })).status).toBe(403);
    expect((await app.request("/api/runs", { headers: { Host: "127.0.0.1:4477" } })).status).toBe(200);
    expect((await app.request("/api/runs", { headers: { Host: "localhost" } })).status).toBe(200);
    expect((await app.request("/api/runs", { headers: { Host: "[::1]:80" } })).status).toBe(200);
  });

  it("refuses to listen beyond loopback without a token", async () => {
    await expect(startServer(store, { host: "0.0.0.0", port: 0 })).rejects.toThrow(/access token/);
  });
});

describe("UI", () => {
  it("serves the page, script and stylesheet from the package, with no inline script", async () => {
    const ui = createApp(store, { assets: await loadUiAssets() });
    for (const path of ["/", `/runs/${fx.runA}`, `/runs/${fx.runA}/traces`, `/traces/${encodeURIComponent("hostile:<b>0</b>/x")}`, "/compare"]) {
      const res = await ui.request(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/text\/html/);
      const html = await res.text();
      expect(html).toContain('<script src="/assets/app.js" defer></script>');
      expect(html).not.toMatch(/<script>(?!<)/);
      expect(html).not.toMatch(/https?:\/\//);
    }
    const js = await ui.request("/assets/app.js");
    expect(js.headers.get("content-type")).toMatch(/text\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(10_000);
    expect((await ui.request("/assets/app.css")).headers.get("content-type")).toMatch(/text\/css/);
    expect((await ui.request("/elsewhere")).status).toBe(404);
  });

  it("answers over real HTTP on 127.0.0.1 with an ephemeral port", async () => {
    const server = await startServer(store, { port: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${server.url}/api/runs`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as RunsResponse).runs).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
