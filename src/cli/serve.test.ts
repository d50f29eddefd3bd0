import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { corpus } from "../testing/corpus.js";
import { UsageError } from "./io.js";
import { runServe, type ServeCliOptions } from "./serve.js";

const root = mkdtempSync(join(tmpdir(), "faultline-serve-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const options = (over: Partial<ServeCliOptions> = {}): ServeCliOptions => ({ db: join(root, "store.db"), port: "0", host: "127.0.0.1", out: join(root, "out"), ...over });

describe("faultline serve", () => {
  it("analyses the given traces, then serves that run", async () => {
    const lines: string[] = [];
    let runs: { id: string; trace_count: number }[] = [];
    let opened = "";
    const code = await runServe([corpus("tau-bench")], options(), {
      out: (l) => lines.push(l),
      err: () => {},
      until: async (url) => {
        opened = url;
        const res = await fetch(`${new URL(url).origin}/api/runs`);
        runs = ((await res.json()) as { runs: typeof runs }).runs;
        // The page itself is served too, from the package.
        expect((await fetch(url)).headers.get("content-type")).toMatch(/text\/html/);
      },
    });
    expect(code).toBe(0);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.trace_count).toBeGreaterThan(100);
    expect(opened).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/runs/${runs[0]!.id}$`));
    expect(lines[0]).toBe(`faultline dashboard: ${opened}`);
    expect(existsSync(join(root, "out", "findings.jsonl"))).toBe(true);
  });

  it("serves an existing store, with the token from the environment in the printed address", async () => {
    process.env.FAULTLINE_TOKEN = "from-env";
    try {
      let status: number[] = [];
      await runServe([], options(), {
        out: () => {},
        until: async (url) => {
          expect(url).toMatch(/\/#token=from-env$/);
          const api = `${new URL(url).origin}/api/runs`;
          status = [(await fetch(api)).status, (await fetch(api, { headers: { Authorization: "Bearer from-env" } })).status];
        },
      });
      expect(status).toEqual([401, 200]);
    } finally {
      delete process.env.FAULTLINE_TOKEN;
    }
  });

  it("refuses a non-loopback host without a token, a missing store and a bad port", async () => {
    await expect(runServe([], options({ host: "0.0.0.0" }))).rejects.toThrow(UsageError);
    await expect(runServe([], options({ host: "0.0.0.0" }))).rejects.toThrow(/--token/);
    await expect(runServe([], options({ db: join(root, "missing.db") }))).rejects.toThrow(/no store at/);
    await expect(runServe([], options({ port: "99999" }))).rejects.toThrow(/--port/);
  });

  it("refuses paths that hold no trace, or do not exist, before storing or writing anything", async () => {
    const empty = mkdtempSync(join(tmpdir(), "faultline-serve-empty-"));
    const db = join(empty, "store.db");
    const out = join(empty, "out");
    await expect(runServe([empty], options({ db, out }), { err: () => {} })).rejects.toThrow(/no traces in .*nothing stored, nothing written/);
    await expect(runServe([join(empty, "nope")], options({ db, out }), { err: () => {} })).rejects.toThrow(/nope: no such file or folder/);
    expect(existsSync(db) || existsSync(out)).toBe(false);
    rmSync(empty, { recursive: true, force: true });
  });
});
