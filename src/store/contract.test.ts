import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnosedTraces, emptyRunCounts } from "../pipeline/diagnosed.js";
import { freshDatabase } from "../testing/pg.js";
import type { Diagnosis, Trace } from "../trace/index.js";
import { PgStore } from "./pg/store.js";
import { NO_VALUE, TRACE_SORT_KEYS, type TraceQuery } from "./queries.js";
import { SqliteStore } from "./sqlite.js";
import { contentHash, storedTrace } from "./store.js";
import type { FaultlineStore } from "./types.js";

/*
 * The same store behaviour from both engines: every query the dashboard, `stats`, `diff` and the judge make is asked of
 * a SQLite store and a PostgreSQL store holding the same runs, and must answer identically.
 */

const items: { trace: Trace; diagnosis: Diagnosis }[] = [];
let sqlite: SqliteStore;
let postgres: PgStore;
const both = () => [sqlite, postgres] as FaultlineStore[];
const NOW = new Date("2026-01-15T12:26:09Z");
/** The rules annotator the examples were diagnosed by. */
const ANN = () => items[0]!.diagnosis.annotator;
/** A run without its finish time (each store finished it at its own moment). */
const untimed = <T extends { updated_at: string }>(r: T | undefined) => (r ? { ...r, updated_at: "" } : r);

beforeAll(async () => {
  for await (const { trace, rules } of diagnosedTraces(["examples/"], {}, emptyRunCounts())) items.push({ trace, diagnosis: rules });
  sqlite = new SqliteStore(join(mkdtempSync(join(tmpdir(), "faultline-contract-")), "store.db"));
  postgres = new PgStore(await freshDatabase("contract"));
  for (const s of both()) {
    const id = await s.beginRun(["examples/"], ANN(), "mast-v3", { name: "examples-run", now: NOW });
    // two batches, the second repeating a trace: saving again replaces, never duplicates
    await s.saveBatch(id, items.slice(0, 20));
    await s.saveBatch(id, items.slice(19));
    // a second annotator on a few traces
    await s.saveBatch(id, items.slice(0, 3).map(({ trace, diagnosis }) => ({ trace, diagnosis: { ...diagnosis, annotator: "llm:mock" } })));
    await s.finishRun(id, { traces: items.length });
  }
});

afterAll(async () => {
  await sqlite?.close();
  await postgres?.close();
});

async function same<T>(ask: (s: FaultlineStore) => Promise<T>): Promise<T> {
  const [a, b] = await Promise.all(both().map(ask));
  expect(b).toEqual(a);
  return a as T;
}

describe("SQLite and PostgreSQL stores answer alike", () => {
  it("holds the examples", () => expect(items.length).toBeGreaterThan(20));

  it("runs, run lookup by id and prefix, diagnoses, traces and trace rows", async () => {
    const runs = await same(async (s) => (await s.runs()).map(untimed));
    expect(runs.map((r) => [r!.id, r!.status, r!.trace_count])).toEqual([["examples-run", "complete", items.length]]);
    await same(async (s) => untimed(await s.run("examples-run")));
    expect((await same(async (s) => untimed(await s.run("examples"))))?.id).toBe("examples-run");
    expect(await same((s) => s.run("nope"))).toBeUndefined();
    const ds = await same(async (s) => (await s.diagnoses("examples-run", ANN())).sort((x, y) => x.trace_id.localeCompare(y.trace_id)));
    expect(ds).toHaveLength(items.length);
    // unordered: compared as sets
    const key = (d: Diagnosis) => `${d.trace_id}\u0000${d.annotator}`;
    expect((await same(async (s) => (await s.diagnoses("examples-run")).sort((x, y) => key(x).localeCompare(key(y))))).length).toBe(items.length + 3);
    await same((s) => s.traceRows("examples-run"));
    const t = await same((s) => s.trace("examples-run", items[5]!.trace.id));
    expect(t).toEqual(JSON.parse(JSON.stringify(items[5]!.trace)));
    await same((s) => s.traceDiagnosis("examples-run", items[5]!.trace.id, ANN()));
    expect(await same((s) => s.annotatorsOf("examples-run"))).toEqual(["llm:mock", ANN()].sort());
    expect(await same((s) => s.runsWithTrace(items[0]!.trace.id))).toEqual(["examples-run"]);
  });

  it("trace pages: every sort key both ways, filters, text search, paging past the end", async () => {
    const base: TraceQuery = { annotator: ANN() };
    for (const sort of TRACE_SORT_KEYS)
      for (const dir of ["asc", "desc"] as const) {
        const page = await same((s) => s.listTraces("examples-run", { ...base, sort, dir, limit: 500 }));
        expect(page.total).toBe(items.length);
      }
    const facets = await same((s) => s.runFacets("examples-run", ANN()));
    expect(facets.modes.length).toBeGreaterThan(0);
    for (const f of facets.models) await same((s) => s.listTraces("examples-run", { ...base, model: f.value ?? NO_VALUE }));
    for (const f of facets.formats) await same((s) => s.listTraces("examples-run", { ...base, format: f.value! }));
    for (const f of facets.modes) expect((await same((s) => s.listTraces("examples-run", { ...base, mode: f.value! }))).total).toBe(f.count);
    for (const outcome of ["success", "failure", "unknown"] as const) await same((s) => s.listTraces("examples-run", { ...base, outcome }));
    // Text search: SQLite's FTS5 word index (words beginning with each word of the query, or the evidence holding the
    // text) and PostgreSQL's regular expressions over the same text give the same pages; text without words is a
    // substring search on both
    const found: Record<string, number> = {};
    for (const q of ["TOOL", "error", "Err", "100%", "a_b", "\\", "{", "rror", "tool call", "failed TIMEOUT", items[3]!.trace.id.slice(0, 6), items[3]!.trace.id])
      found[q] = (await same((s) => s.listTraces("examples-run", { ...base, q, limit: 500 }))).total;
    // the cases are not vacuous: some find a part of the run, a prefix finds at least what its word does
    expect(Object.values(found).some((n) => n > 0 && n < items.length)).toBe(true);
    expect(found[items[3]!.trace.id]).toBeGreaterThan(0);
    expect(found.Err).toBeGreaterThanOrEqual(found.error!);
    expect((await same((s) => s.listTraces("examples-run", { ...base, offset: 10_000 }))).total).toBe(items.length);
    await same((s) => s.listTraces("examples-run", { ...base, offset: 7, limit: 5, sort: "modes", dir: "desc" }));
    await same((s) => s.runFacets("examples-run", "llm:mock"));
  });

  it("run names stay unique; --replace deletes the earlier runs of the same inputs; deleting cascades", async () => {
    for (const s of both()) {
      const a = await s.beginRun(["examples/"], ANN(), "mast-v3", { name: "again", now: NOW });
      const b = await s.beginRun(["examples/"], ANN(), "mast-v3", { name: "again", now: NOW });
      expect([a, b]).toEqual(["again", "again-2"]);
      await s.saveBatch(b, items.slice(0, 2));
      expect((await s.run(b))?.status).toBe("incomplete");
      expect((await s.run(b))?.trace_count).toBe(2);
      const { replaced } = await s.finishRun(b, {}, { replace: true });
      expect(replaced.sort()).toEqual(["again", "examples-run"]);
      expect((await s.runs()).map((r) => r.id)).toEqual(["again-2"]);
      await s.deleteRun(b);
      expect(await s.runs()).toEqual([]);
      expect(await s.runsWithTrace(items[0]!.trace.id)).toEqual([]);
    }
  });

  it("saves traces serialised by storedTrace (a parallel analysis) as it saves trace objects", async () => {
    for (const s of both()) {
      const id = await s.beginRun(["rows/"], ANN(), "mast-v3", { name: "rows", now: NOW });
      await s.saveBatch(id, items.slice(0, 4).map(({ trace, diagnosis }) => ({ trace: storedTrace(trace), diagnosis })));
      await s.finishRun(id, {});
    }
    await same((s) => s.traceRows("rows"));
    expect(await same((s) => s.trace("rows", items[2]!.trace.id))).toEqual(JSON.parse(JSON.stringify(items[2]!.trace)));
    expect((await same((s) => s.diagnoses("rows", ANN()))).length).toBe(4);
    for (const s of both()) await s.deleteRun("rows");
  });

  it("--resume: the latest run of the same inputs when incomplete, its stored traces, and pruning the ones gone", async () => {
    for (const s of both()) {
      const done = await s.beginRun(["resume/"], ANN(), "mast-v3", { name: "resume", now: NOW });
      await s.saveBatch(done, items.slice(0, 3));
      await s.finishRun(done, {});
      expect(await s.resumableRun(["resume/"], ANN())).toBeUndefined();
      // begun in the same millisecond as the complete one: still the later
      const open = await s.beginRun(["resume/"], ANN(), "mast-v3", { name: "resume", now: NOW });
      await s.saveBatch(open, items.slice(0, 5));
      await s.saveBatch(open, items.slice(0, 2).map(({ trace, diagnosis }) => ({ trace, diagnosis: { ...diagnosis, annotator: "llm:mock" } })));
      expect(await s.resumableRun(["resume/"], ANN())).toBe(open);
      expect(await s.resumableRun(["resume/"], "llm:mock")).toBeUndefined();
      expect(await s.resumableRun(["other/"], ANN())).toBeUndefined();
    }
    const stored = await same(async (s) => [...(await s.storedTraces("resume-2", ANN()))].sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(stored.map(([id]) => id)).toEqual(items.slice(0, 5).map((i) => i.trace.id).sort());
    expect(stored.find(([id]) => id === items[1]!.trace.id)?.[1]).toEqual({ hash: contentHash(items[1]!.trace), diagnosis: JSON.parse(JSON.stringify(items[1]!.diagnosis)) });
    expect((await same((s) => s.storedTraces("resume-2", "llm:mock"))).size).toBe(2);
    const keep = new Set([items[0]!.trace.id, items[3]!.trace.id]);
    expect(await same((s) => s.pruneTraces("resume-2", keep))).toBe(3);
    expect(await same((s) => s.pruneTraces("resume-2", keep))).toBe(0);
    await same((s) => s.traceRows("resume-2"));
    const left = await same(async (s) => (await s.diagnoses("resume-2")).map((d) => `${d.trace_id} ${d.annotator}`).sort());
    expect(left).toEqual([...keep].flatMap((id) => [`${id} ${ANN()}`, ...(id === items[0]!.trace.id ? [`${id} llm:mock`] : [])]).sort());
    // the other run of the same inputs keeps its traces
    expect((await same((s) => s.traceRows("resume"))).length).toBe(3);
    for (const s of both()) {
      await s.deleteRun("resume");
      await s.deleteRun("resume-2");
    }
  });

  it("aggregates: stored per run, annotator and kind at a version; stale versions are not served; deleted with the run", async () => {
    for (const s of both()) {
      const id = await s.beginRun(["agg/"], ANN(), "mast-v3", { name: "agg", now: NOW });
      await s.saveBatch(id, items.slice(0, 1));
      await s.putAggregate(id, ANN(), "overview", "v1", '{"a":1}');
      await s.putAggregate(id, ANN(), "overview", "v2", '{"a":2}');
      await s.putAggregate(id, "llm:mock", "overview", "v2", '{"b":1}');
    }
    expect(await same((s) => s.aggregate("agg", ANN(), "overview", "v2"))).toBe('{"a":2}');
    expect(await same((s) => s.aggregate("agg", ANN(), "overview", "v1"))).toBeUndefined();
    expect(await same((s) => s.aggregate("agg", "llm:mock", "overview", "v2"))).toBe('{"b":1}');
    expect(await same((s) => s.aggregate("agg", ANN(), "other", "v2"))).toBeUndefined();
    for (const s of both()) {
      await s.deleteRun("agg");
      // a run of the same name later has none of the deleted run's aggregates
      await s.beginRun(["agg/"], ANN(), "mast-v3", { name: "agg", now: NOW });
    }
    expect(await same((s) => s.aggregate("agg", ANN(), "overview", "v2"))).toBeUndefined();
    for (const s of both()) await s.deleteRun("agg");
  });

  it("the call cache", async () => {
    await same(async (s) => {
      await s.cachePut("judge:k", "v1");
      await s.cachePut("judge:k", "v2");
      return [await s.cacheGet("judge:k"), await s.cacheGet("judge:missing")];
    });
    expect(await postgres.cacheGet("judge:k")).toBe("v2");
  });
});
