import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildTrace, type Diagnosis } from "../trace/index.js";
import { ftsQuery, listTraces } from "./queries.js";
import { Store } from "./store.js";

const traceOf = (id: string, text: string, model = "gpt-4o") =>
  buildTrace({ id, source: { file: `${id}.jsonl`, format: "faultline", index: 0 }, model }, [{ agent: "a", role: "assistant", kind: "message", text }]);
const diagnosisOf = (id: string) => ({ trace_id: id, annotator: "rules", outcome: { success: null, score: null, metric: null }, modes: null, findings: [], error: "x" }) as unknown as Diagnosis;
const save = (store: Store, run: string, id: string, text: string) => store.saveBatch(run, [{ trace: traceOf(id, text), diagnosis: diagnosisOf(id) }]);
const search = (store: Store, run: string, q: string) => listTraces(store, run, { annotator: "rules", q }).rows.map((r) => r.trace_id).sort();

describe("text search through the word index (FTS5)", () => {
  it("finds traces holding words that begin with each of the query's words, case-insensitively", () => {
    const store = new Store(":memory:");
    try {
      const run = store.beginRun(["in"], "rules", "mast-v3");
      save(store, run, "t1", "Cancel the Reservation for flight UA-100");
      save(store, run, "t2", "reservations were listed");
      save(store, run, "t3", "the flight was booked; reservation pending");
      expect(search(store, run, "reservation")).toEqual(["t1", "t2", "t3"]);
      expect(search(store, run, "RESERV")).toEqual(["t1", "t2", "t3"]);
      // several words: all must be there, anywhere
      expect(search(store, run, "the reservation")).toEqual(["t1", "t3"]);
      expect(search(store, run, "flight reserv")).toEqual(["t1", "t3"]);
      expect(search(store, run, "UA-100")).toEqual(["t1"]);
      // the trace id, file and model are searched too
      expect(search(store, run, "t2.jsonl")).toEqual(["t2"]);
      expect(search(store, run, "gpt-4o")).toEqual(["t1", "t2", "t3"]);
      // punctuation only: a literal scan, no wildcards
      expect(search(store, run, "%")).toEqual([]);
      expect(search(store, run, ";")).toEqual(["t3"]);
      // a word inside another is not a word beginning
      expect(search(store, run, "servation")).toEqual([]);
    } finally {
      store.close();
    }
  });

  it("keeps the index in step when a trace is replaced and when a run is deleted", () => {
    const store = new Store(":memory:");
    try {
      const run = store.beginRun(["in"], "rules", "mast-v3");
      save(store, run, "t1", "alpha words here");
      save(store, run, "t1", "beta words now");
      expect(search(store, run, "alpha")).toEqual([]);
      expect(search(store, run, "beta")).toEqual(["t1"]);
      const count = () => (store.db.prepare("SELECT count(*) AS n FROM trace_text WHERE trace_text MATCH 'words'").get() as { n: number }).n;
      expect(count()).toBe(1);
      store.deleteRun(run);
      expect(count()).toBe(0);
    } finally {
      store.close();
    }
  });

  it("indexes the traces of a version 2 store when it is opened", () => {
    const db = join(mkdtempSync(join(tmpdir(), "faultline-store-v2-")), "v2.db");
    const store = new Store(db);
    const run = store.beginRun(["in"], "rules", "mast-v3");
    save(store, run, "t1", "gamma ray burst");
    store.close();
    // as version 2 left it: no index, no aggregates
    const raw = new Database(db);
    raw.exec("DROP TRIGGER traces_text_ai; DROP TRIGGER traces_text_ad; DROP TABLE trace_text; DROP TABLE aggregates; UPDATE meta SET value = '2' WHERE key = 'version'");
    raw.close();
    const reopened = new Store(db);
    try {
      expect(search(reopened, run, "gamma")).toEqual(["t1"]);
      save(reopened, run, "t2", "gamma again");
      expect(search(reopened, run, "gamma")).toEqual(["t1", "t2"]);
    } finally {
      reopened.close();
    }
  });

  it("builds a query of required word prefixes, none for punctuation", () => {
    expect(ftsQuery("Reservation UA-100")).toBe('"reservation"* AND "ua"* AND "100"*');
    expect(ftsQuery("%_;")).toBeUndefined();
  });
});
