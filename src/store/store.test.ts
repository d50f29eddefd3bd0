import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildTrace, type Diagnosis } from "../trace/index.js";
import { STORE_VERSION } from "./schema.sql.js";
import { runIdFor, Store } from "./store.js";

/** The runs table as stores of version 1 have it (before runs had a status and an input key). */
const V1_RUNS = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, inputs TEXT NOT NULL, annotator TEXT NOT NULL,
  taxonomy TEXT NOT NULL, trace_count INTEGER NOT NULL DEFAULT 0, diagnostics TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE traces (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, trace_id TEXT NOT NULL, file TEXT NOT NULL, format TEXT NOT NULL,
  idx INTEGER NOT NULL, model TEXT, framework TEXT, steps INTEGER NOT NULL, content_hash TEXT NOT NULL, trace TEXT NOT NULL,
  PRIMARY KEY (run_id, trace_id)
);
INSERT INTO meta VALUES ('version', '1');
`;

const trace = buildTrace({ id: "t1", source: { file: "t.jsonl", format: "faultline", index: 0 }, model: "m" }, [{ agent: "a", role: "assistant", kind: "message", text: "hi" }]);
const diagnosis = { trace_id: "t1", annotator: "rules", outcome: { success: null, score: null, metric: null }, modes: null, findings: [], error: "x" } as unknown as Diagnosis;

describe("store versions", () => {
  it("opens a version 1 store: its runs stay readable, complete, and replaceable by a new run of the same inputs", () => {
    const db = join(mkdtempSync(join(tmpdir(), "faultline-store-v1-")), "old.db");
    const old = new Database(db);
    old.exec(V1_RUNS);
    const id = runIdFor(["runs/"], "rules");
    old.prepare("INSERT INTO runs (id, created_at, updated_at, inputs, annotator, taxonomy, trace_count) VALUES (?, ?, ?, ?, 'rules', 'mast-v3', 1)").run(id, "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", JSON.stringify(["runs/"]));
    old.prepare("INSERT INTO traces VALUES (?, 't1', 't.jsonl', 'faultline', 0, 'm', NULL, 1, 'h', ?)").run(id, JSON.stringify(trace));
    old.close();

    const store = new Store(db);
    try {
      expect((store.db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string }).value).toBe(String(STORE_VERSION));
      expect(store.runs()).toEqual([expect.objectContaining({ id, status: "complete", trace_count: 1, inputs: ["runs/"] })]);
      expect(store.trace(id, "t1")?.id).toBe("t1");
      const fresh = store.beginRun(["runs/"], "rules", "mast-v3");
      store.saveBatch(fresh, [{ trace, diagnosis }]);
      expect(store.runs()).toHaveLength(2);
      expect(store.finishRun(fresh, { traces: 1 }, { replace: true }).replaced).toEqual([id]);
      expect(store.runs().map((r) => [r.id, r.status])).toEqual([[fresh, "complete"]]);
    } finally {
      store.close();
    }
    // opening again is a no-op
    const again = new Store(db);
    expect(again.runs()).toHaveLength(1);
    again.close();
  });

  it("refuses a store newer than it understands", () => {
    const db = join(mkdtempSync(join(tmpdir(), "faultline-store-new-")), "new.db");
    new Store(db).close();
    const raw = new Database(db);
    raw.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(STORE_VERSION + 1));
    raw.close();
    expect(() => new Store(db)).toThrow(/newer than this faultline understands/);
  });

  it("counts an incomplete run's traces as stored so far, and finishing marks it complete", () => {
    const store = new Store(":memory:");
    try {
      const id = store.beginRun(["aXb.jsonl"], "rules", "mast-v3");
      expect(store.run(id)).toMatchObject({ status: "incomplete", trace_count: 0 });
      store.saveBatch(id, [{ trace, diagnosis }]);
      expect(store.run(id)).toMatchObject({ status: "incomplete", trace_count: 1 });
      store.finishRun(id, { traces: 1 });
      expect(store.run(id)).toMatchObject({ status: "complete", trace_count: 1, diagnostics: { traces: 1 } });
      // an id prefix matches literally (no LIKE wildcards)
      expect(store.run("aXb")?.id).toBe(id);
      expect(store.run("a_b")).toBeUndefined();
    } finally {
      store.close();
    }
  });
});
