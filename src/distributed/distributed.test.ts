import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../pipeline/index.js";
import { createApp } from "../server/app.js";
import { PgStore, SqliteStore } from "../store/index.js";
import { freshDatabase } from "../testing/pg.js";
import { DEFAULT_RULES_SPEC, runWorker, submit } from "./index.js";

const REPO = resolve(import.meta.dirname, "../..");
const cli = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [join(REPO, "bin", "faultline.js"), ...args], { cwd: REPO, encoding: "utf8", timeout: 120_000, env: { ...process.env, ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

let url: string;
let sqlitePath: string;
let pgRun: string;
let sqliteRun: string;

beforeAll(async () => {
  url = await freshDatabase("dist");
  const r = await submit(["examples/"], { db: url, spec: DEFAULT_RULES_SPEC, name: "examples-pg" });
  pgRun = r.runId;
  await runWorker({ db: url, concurrency: 3, exitWhenIdle: true });
  const dir = mkdtempSync(join(tmpdir(), "faultline-dist-"));
  sqlitePath = join(dir, "store.db");
  sqliteRun = (await analyze(["examples/"], { out: join(dir, "out"), db: sqlitePath, name: "examples-sqlite" })).runId;
});

describe("submit + worker on PostgreSQL", () => {
  it("diagnoses every submitted trace once and completes the run, with its progress", async () => {
    const store = new PgStore(url);
    try {
      const run = await store.run(pgRun);
      expect(run?.status).toBe("complete");
      expect(run?.trace_count).toBe(31);
      expect(await store.progress(pgRun)).toEqual({ queued: 0, running: 0, done: 31, failed: 0 });
      // the same diagnoses as an in-process analysis of the same files
      const sqlite = new SqliteStore(sqlitePath);
      const strip = (ds: { trace_id: string }[]) => ds.map((d) => JSON.stringify(d)).sort();
      expect(strip(await store.diagnoses(pgRun))).toEqual(strip(await sqlite.diagnoses(sqliteRun)));
      await sqlite.close();
    } finally {
      await store.close();
    }
  });

  it("`faultline runs` shows queued, running, done and failed", () => {
    const r = cli(["runs", "--db", url, "--json"]);
    expect(r.code, r.err).toBe(0);
    const runs = JSON.parse(r.out).runs as { id: string; progress?: unknown }[];
    expect(runs.find((x) => x.id === pgRun)?.progress).toEqual({ queued: 0, running: 0, done: 31, failed: 0 });
    expect(r.out).not.toContain(":faultline-test@"); // no password in output
  });

  it("stats and diff read a PostgreSQL run exactly as a SQLite one", () => {
    const a = cli(["stats", pgRun, "--db", url, "--json", "--by", "model"]);
    const b = cli(["stats", sqliteRun, "--db", sqlitePath, "--json", "--by", "model"]);
    expect(a.code, a.err).toBe(0);
    const norm = (s: string) => ({ ...JSON.parse(s), input: undefined });
    expect(norm(a.out)).toEqual(norm(b.out));
    const d = cli(["diff", pgRun, `${pgRun}`, "--db", url, "--json"]);
    expect(d.code, d.err).toBe(0);
    expect(JSON.parse(d.out)).toBeTruthy();
  });

  it("the dashboard API answers the same over both stores", async () => {
    const pgStore = new PgStore(url);
    const sqlite = new SqliteStore(sqlitePath);
    try {
      const apps = [createApp(pgStore), createApp(sqlite)];
      const runs = [pgRun, sqliteRun];
      const get = async (i: number, path: string) => {
        const res = await apps[i]!.request(path.replaceAll("RUN", runs[i]!));
        expect(res.status, path).toBe(200);
        return JSON.parse((await res.text()).replaceAll(runs[i]!, "RUN")) as Record<string, unknown>;
      };
      const noRun = (x: Record<string, unknown>) => JSON.parse(JSON.stringify(x, (k, v) => (["run", "created_at", "updated_at", "progress", "inputs"].includes(k) ? undefined : v)));
      for (const path of ["/api/runs/RUN/overview", "/api/runs/RUN/traces?facets=1&limit=100", "/api/runs/RUN/traces?sort=modes&dir=desc&q=tool", "/api/compare?a=RUN&b=RUN"])
        expect(noRun(await get(0, path)), path).toEqual(noRun(await get(1, path)));
      const first = ((await get(0, "/api/runs/RUN/traces?limit=1")).rows as { trace_id: string }[])[0]!.trace_id;
      const detail = async (i: number) => noRun(await get(i, `/api/trace?id=${encodeURIComponent(first)}&run=RUN`));
      expect(await detail(0)).toEqual(await detail(1));
      expect(((await get(0, "/api/runs")).runs as { progress?: unknown }[])[0]?.progress).toEqual({ queued: 0, running: 0, done: 31, failed: 0 });
    } finally {
      await pgStore.close();
      await sqlite.close();
    }
  });

  it("a poison job ends failed, with its error, after its retries; the run stays incomplete and says so", async () => {
    const db = await freshDatabase("poison");
    const r = await submit(["examples/chat"], { db, spec: DEFAULT_RULES_SPEC, name: "poison", policy: { retryLimit: 1, retryDelay: 1 } });
    const victim = "chat-3";
    const c = new pg.Client({ connectionString: db });
    await c.connect();
    await c.query("DELETE FROM traces WHERE run_id = $1 AND trace_id = $2", [r.runId, victim]);
    await c.end();
    const errors: string[] = [];
    const w = await runWorker({ db, concurrency: 2, exitWhenIdle: true, onJob: (e) => e.error && errors.push(e.error) });
    expect(w.failed).toBe(2); // the first attempt and its one retry
    expect(errors[0]).toContain(`has no trace ${victim}`);
    const store = new PgStore(db);
    try {
      expect(await store.progress(r.runId)).toEqual({ queued: 0, running: 0, done: 9, failed: 1 });
      expect((await store.run(r.runId))?.status).toBe("incomplete");
      const failed = await store.failedJobs(r.runId);
      expect(failed).toEqual([{ trace: victim, retries: 1, error: expect.stringContaining(`has no trace ${victim}`) }]);
    } finally {
      await store.close();
    }
    const listed = cli(["runs", "--db", db, "--failed", r.runId]);
    expect(listed.out).toContain(victim);
  });

  it("submit and worker refuse a SQLite store, naming it", () => {
    const r = cli(["submit", "examples/", "--db", sqlitePath]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("submit needs a PostgreSQL store");
  });
});

afterAll(() => {});
