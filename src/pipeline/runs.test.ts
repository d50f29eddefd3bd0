import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "./analyze.js";
import { NoTracesError } from "./run-writer.js";
import { OUTPUT_FILES } from "./output-dir.js";
import { openStore, Store } from "../store/index.js";
import { freshDatabase } from "../testing/pg.js";
import { createApp } from "../server/app.js";
import type { Overview, RunsResponse } from "../server/api-types.js";
import { fixtureSet, fixtureTrace, writeTraces } from "../server/fixtures.js";
import { loadLabelInput } from "../cli/label-input.js";
import { diffRuns } from "../analysis/index.js";

/*
 * Runs in the store and the output folder (issue 12, item 7): every analysis is a new run with a readable name, kept
 * beside the earlier ones (a before/after diff of one folder works) unless replaced on purpose; an interrupted run is
 * marked incomplete everywhere; a killed run costs nothing that was there before; the output folder is written whole.
 */

const REPO = resolve(import.meta.dirname, "..", "..");
const NAME = /^traces-\d{8}-\d{6}(-\d+)?$/;

function traces(dir: string, n: number, variant: "a" | "b" = "a"): string {
  return writeTraces(dir, fixtureSet(n, { variant }).map(fixtureTrace));
}

const snapshot = (out: string) => Object.fromEntries(readdirSync(out).sort().map((f) => [f, readFileSync(join(out, f), "utf8")]));
const staging = (parent: string) => readdirSync(parent).filter((e) => e.includes(".faultline-tmp-"));

describe("every analysis is a new run", () => {
  it("keeps both runs of one folder under readable names, so a before/after diff works", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-runs-"));
    const db = join(root, "store.db");
    const input = traces(join(root, "traces"), 20, "a");
    const before = await analyze([input], { out: join(root, "out"), db });
    // the agent changed: the same folder now holds variant b
    traces(input, 20, "b");
    const after = await analyze([input], { out: join(root, "out"), db });
    expect(before.runId).toMatch(NAME);
    expect(after.runId).toMatch(NAME);
    expect(after.runId).not.toBe(before.runId);
    const store = new Store(db);
    try {
      expect(store.runs().map((r) => [r.id, r.status, r.trace_count])).toEqual(
        expect.arrayContaining([
          [before.runId, "complete", 20],
          [after.runId, "complete", 20],
        ]),
      );
    } finally {
      store.close();
    }
    const a = await loadLabelInput(before.runId, { db });
    const b = await loadLabelInput(after.runId, { db });
    const diff = diffRuns(a.load.rows, b.load.rows, { by: "model" });
    expect(diff.changed.length).toBeGreaterThan(0);
  });

  it("names runs <first input>-<YYYYMMDD-HHMMSS>, unique in the store", () => {
    const store = new Store(":memory:");
    try {
      const now = new Date(2026, 0, 15, 12, 26, 9);
      const one = store.beginRun(["runs/itbench/"], "rules", "mast-v3", { now });
      const two = store.beginRun(["runs/itbench"], "rules", "mast-v3", { now });
      const file = store.beginRun(["x/rollout-2026.jsonl"], "rules", "mast-v3", { now });
      expect([one, two, file]).toEqual(["itbench-20260115-122609", "itbench-20260115-122609-2", "rollout-2026-20260115-122609"]);
      expect(store.run(one)!.status).toBe("incomplete");
      // a name without its time finds the newest run of that input
      expect(store.run("itbench")!.id).toMatch(/^itbench-20260115-122609/);
    } finally {
      store.close();
    }
  });

  it("--replace deletes the earlier runs of the same inputs once the new run is complete, and nothing else", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-replace-"));
    const db = join(root, "store.db");
    const input = traces(join(root, "traces"), 10);
    const other = traces(join(root, "other", "traces"), 10);
    const first = await analyze([input], { out: join(root, "o1"), db });
    const second = await analyze([input], { out: join(root, "o2"), db });
    const unrelated = await analyze([other], { out: join(root, "o3"), db });
    const third = await analyze([input], { out: join(root, "o4"), db, replace: true });
    expect(third.replaced.sort()).toEqual([first.runId, second.runId].sort());
    const store = new Store(db);
    try {
      expect(store.runs().map((r) => r.id).sort()).toEqual([third.runId, unrelated.runId].sort());
      expect(store.db.prepare("SELECT count(*) AS n FROM traces WHERE run_id IN (?, ?)").get(first.runId, second.runId)).toEqual({ n: 0 });
    } finally {
      store.close();
    }
  });
});

describe("an interrupted run", () => {
  it("is stored and written with what was read, marked incomplete in the store, /api/runs, the overview and summary.json", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-interrupt-"));
    const db = join(root, "store.db");
    const input = traces(join(root, "traces"), 30);
    const complete = await analyze([input], { out: join(root, "out"), db });
    const stop = new AbortController();
    let seen = 0;
    const r = await analyze([input], {
      out: join(root, "out"),
      db,
      replace: true,
      signal: stop.signal,
      onTrace: () => {
        if (++seen === 5) stop.abort();
      },
    });
    expect(r.status).toBe("incomplete");
    expect(r.counts.traces).toBe(5);
    // an interrupted run replaces nothing: the complete run is still there
    expect(r.replaced).toEqual([]);
    const summary = JSON.parse(readFileSync(join(root, "out", "summary.json"), "utf8"));
    expect(summary).toMatchObject({ run_id: r.runId, status: "incomplete", counts: { traces: 5 } });
    expect(readFileSync(join(root, "out", "findings.jsonl"), "utf8").trim().split("\n")).toHaveLength(5);

    const store = new Store(db);
    try {
      expect(store.run(r.runId)).toMatchObject({ status: "incomplete", trace_count: 5 });
      expect(store.run(complete.runId)).toMatchObject({ status: "complete", trace_count: 30 });
      const app = createApp(store);
      const runs = (await (await app.request("/api/runs")).json()) as RunsResponse;
      expect(runs.runs.find((x) => x.id === r.runId)?.status).toBe("incomplete");
      expect(runs.runs.find((x) => x.id === complete.runId)?.status).toBe("complete");
      const ov = (await (await app.request(`/api/runs/${r.runId}/overview`)).json()) as Overview;
      expect(ov.run.status).toBe("incomplete");
      expect(ov.all.traces).toBe(5);
    } finally {
      store.close();
    }
  });

  it("that fails midway leaves the output folder as it was and the earlier run untouched; the new run shows incomplete", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-fail-"));
    const db = join(root, "store.db");
    const input = traces(join(root, "traces"), 30);
    const out = join(root, "out");
    const complete = await analyze([input], { out, db });
    const before = snapshot(out);
    let seen = 0;
    await expect(
      analyze([input], {
        out,
        db,
        replace: true,
        onTrace: () => {
          // while the run goes on, the output folder still holds the previous run, whole
          expect(snapshot(out)).toEqual(before);
          if (++seen === 7) throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    expect(snapshot(out)).toEqual(before);
    expect(staging(root)).toEqual([]);
    const store = new Store(db);
    try {
      const runs = store.runs();
      expect(runs).toHaveLength(2);
      expect(runs.find((x) => x.id === complete.runId)).toMatchObject({ status: "complete", trace_count: 30 });
      expect(runs.find((x) => x.id !== complete.runId)!.status).toBe("incomplete");
    } finally {
      store.close();
    }
  });

  it("killed with SIGKILL midway: the store keeps the earlier run and marks the new one incomplete; the next run cleans up", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-kill-"));
    const db = join(root, "store.db");
    const input = traces(join(root, "traces"), 10);
    const out = join(root, "out");
    const complete = await analyze([input], { out, db });
    const before = snapshot(out);
    // a big input, so the child is still reading when it is killed
    writeFileSync(join(input, "more.jsonl"), fixtureSet(4000).map((f, i) => JSON.stringify(fixtureTrace({ ...f, id: `more:${i}` }))).join("\n") + "\n");
    const child = spawn(process.execPath, [join(REPO, "bin", "faultline.js"), "analyze", input, "--out", out, "--db", db, "--replace", "-q"], { stdio: "ignore" });
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    // kill it once its run is in the store (the row is written first, as incomplete)
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = new Store(db);
      const n = s.runs().length;
      s.close();
      if (n === 2 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill("SIGKILL");
    expect(await exited).toBe(null);
    expect(snapshot(out)).toEqual(before);
    expect(staging(root).length).toBeLessThanOrEqual(1);
    const store = new Store(db);
    let killedRun: string;
    try {
      const runs = store.runs();
      expect(runs.find((x) => x.id === complete.runId)).toMatchObject({ status: "complete", trace_count: 10 });
      killedRun = runs.find((x) => x.id !== complete.runId)!.id;
      expect(store.run(killedRun)!.status).toBe("incomplete");
    } finally {
      store.close();
    }
    // the next run of the same folder removes what the killed one staged
    await analyze([join(root, "traces", "traces.jsonl")], { out, db });
    expect(staging(root)).toEqual([]);
  }, 120_000);
});

describe("the output folder", () => {
  it("is written whole at the end and keeps files that are not faultline's (a store beside the outputs)", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-out-"));
    const input = traces(join(root, "traces"), 10);
    const out = join(root, "out");
    mkdirSync(out);
    writeFileSync(join(out, "notes.txt"), "mine");
    const r = await analyze([input], { out, db: join(out, "store.db") });
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("mine");
    for (const f of OUTPUT_FILES) expect(existsSync(join(out, f)), f).toBe(true);
    expect(r.outputs.reports.html).toBe(join(out, "report.html"));
    expect(staging(root)).toEqual([]);
    const again = await analyze([input], { out, db: join(out, "store.db") });
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).run_id).toBe(again.runId);
  });

  it("is not created, nor the store, nor a run, when the inputs hold no trace", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-empty-"));
    mkdirSync(join(root, "empty"));
    const out = join(root, "out");
    const db = join(root, "store.db");
    const err = await analyze([join(root, "empty")], { out, db }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoTracesError);
    expect((err as Error).message).toMatch(/no traces in .*empty.*nothing stored, nothing written/);
    expect(readdirSync(root)).toEqual(["empty"]);
    const missing = await analyze([join(root, "nonexistent")], { out, db }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NoTracesError);
    expect((missing as NoTracesError).counts.errors).toBe(1);
    expect(readdirSync(root)).toEqual(["empty"]);
  });
});

describe.each([
  ["SQLite", async (root: string) => join(root, "store.db")],
  ["PostgreSQL", async () => freshDatabase("resume")],
])("an interrupted run, resumed (%s store)", (_engine, storeFor) => {
  it("continues the same run: traces it stored unchanged are not diagnosed again, changed and new ones are; the result equals a fresh run", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-resume-"));
    const db = await storeFor(root);
    const input = traces(join(root, "traces"), 30);
    const stop = new AbortController();
    let seen = 0;
    const first = await analyze([input], { out: join(root, "out"), db, signal: stop.signal, onTrace: () => void (++seen === 8 && stop.abort()) });
    expect(first).toMatchObject({ status: "incomplete", counts: { traces: 8 } });
    const firstIds = first.diagnoses.map((d) => d.trace_id);
    // one of the stored traces changes before the restart: its hash differs, so it is diagnosed again
    const file = join(input, "traces.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const edited = JSON.parse(lines[0]!) as { id: string; steps: { text?: string }[] };
    expect(firstIds).toContain(edited.id);
    edited.steps[0]!.text = `${edited.steps[0]!.text ?? ""} (edited)`;
    lines[0] = JSON.stringify(edited);
    writeFileSync(file, `${lines.join("\n")}\n`);

    // the detectors count what they are asked to diagnose
    const diagnosed = new Set<string>();
    const { DETECTORS } = await import("../detectors/index.js");
    const counting = DETECTORS.map((d, i) => (i === 0 ? { ...d, detect: (t: Parameters<typeof d.detect>[0], c: Parameters<typeof d.detect>[1]) => (diagnosed.add(t.id), d.detect(t, c)) } : d));
    const resumed = await analyze([input], { out: join(root, "out"), db, resume: true, detectors: counting });
    expect(resumed).toMatchObject({ runId: first.runId, status: "complete", counts: { traces: 30 } });
    expect(resumed.reused).toBe(7);
    expect(diagnosed.size).toBe(23);
    expect(firstIds.filter((id) => !diagnosed.has(id))).toHaveLength(7);
    expect(diagnosed.has(edited.id)).toBe(true);

    const fresh = await analyze([input], { out: join(root, "fresh"), db: join(root, "fresh.db") });
    const byId = (ds: { trace_id: string }[]) => [...ds].sort((a, b) => a.trace_id.localeCompare(b.trace_id));
    expect(byId(resumed.diagnoses)).toEqual(byId(fresh.diagnoses));
    expect(readFileSync(join(root, "out", "summary.json"), "utf8").replace(first.runId, "R")).toBe(readFileSync(join(root, "fresh", "summary.json"), "utf8").replace(fresh.runId, "R"));
    const store = openStore(db);
    try {
      expect((await store.runs()).map((r) => [r.id, r.status, r.trace_count])).toEqual([[first.runId, "complete", 30]]);
      expect(byId(await store.diagnoses(first.runId))).toEqual(byId(fresh.diagnoses));
      // nothing left to resume: the next --resume starts a new run
      expect(await store.resumableRun([input], resumed.diagnoses[0]!.annotator)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("drops the stored traces its inputs no longer hold once the resumed run completes", async () => {
    const root = mkdtempSync(join(tmpdir(), "faultline-resume-prune-"));
    const db = await storeFor(root);
    const input = traces(join(root, "traces"), 12);
    const stop = new AbortController();
    let seen = 0;
    const first = await analyze([input], { out: join(root, "out"), db, signal: stop.signal, onTrace: () => void (++seen === 5 && stop.abort()) });
    expect(first).toMatchObject({ status: "incomplete", counts: { traces: 5 } });
    // the first stored trace leaves the inputs before the restart
    const file = join(input, "traces.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const gone = (JSON.parse(lines[0]!) as { id: string }).id;
    expect(first.diagnoses.map((d) => d.trace_id)).toContain(gone);
    writeFileSync(file, `${lines.slice(1).join("\n")}\n`);
    const resumed = await analyze([input], { out: join(root, "out"), db, resume: true });
    expect(resumed).toMatchObject({ runId: first.runId, status: "complete", counts: { traces: 11 } });
    expect(resumed.reused).toBe(4);
    const store = openStore(db);
    try {
      expect((await store.run(first.runId))?.trace_count).toBe(11);
      expect(await store.trace(first.runId, gone)).toBeUndefined();
      expect((await store.diagnoses(first.runId)).map((d) => d.trace_id)).not.toContain(gone);
      expect(await store.runsWithTrace(gone)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
