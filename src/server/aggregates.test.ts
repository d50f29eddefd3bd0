import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "../pipeline/index.js";
import { PgStore, SqliteStore, Store } from "../store/index.js";
import { freshDatabase } from "../testing/pg.js";
import type { Overview } from "./api-types.js";
import { createApp } from "./app.js";
import { buildOverview, computeRunStats, storedOverview, storeOverviews } from "./overview.js";

const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

describe("a run's dashboard statistics are computed when the run is written", () => {
  it("analyze stores the overview (the hook the CLI passes); the API serves it, equal to one computed from the stored diagnoses", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-aggregates-"));
    const db = join(dir, "store.db");
    const r = await analyze([EXAMPLES], { out: join(dir, "out"), db, onRunStored: storeOverviews });
    const store = new Store(db);
    const faultline = new SqliteStore(store);
    try {
      const info = store.run(r.runId)!;
      const run = { ...info, annotators: [info.annotator] };
      const stored = await storedOverview(faultline, run, info.annotator);
      expect(stored).toBeDefined();
      const fresh = buildOverview(run, info.annotator, await computeRunStats(faultline, r.runId, info.annotator));
      expect(JSON.parse(JSON.stringify(stored))).toEqual(JSON.parse(JSON.stringify(fresh)));
      const res = await createApp(store).request(`/api/runs/${r.runId}/overview`);
      expect(((await res.json()) as Overview).all).toEqual(JSON.parse(JSON.stringify(fresh.all)));

      // once the run changes (its updated_at), the stored statistics are stale and not served
      store.db.prepare("UPDATE runs SET updated_at = ? WHERE id = ?").run("2099-01-01T00:00:00.000Z", r.runId);
      expect(await storedOverview(faultline, { ...run, updated_at: "2099-01-01T00:00:00.000Z" }, info.annotator)).toBeUndefined();
      // … the first view computes and keeps them again
      const again = await createApp(store).request(`/api/runs/${r.runId}/overview`);
      expect(again.status).toBe(200);
      expect(await storedOverview(faultline, { ...run, updated_at: "2099-01-01T00:00:00.000Z" }, info.annotator)).toBeDefined();
      // deleting the run deletes its aggregates
      store.deleteRun(r.runId);
      expect(store.db.prepare("SELECT count(*) AS n FROM aggregates").get()).toEqual({ n: 0 });
    } finally {
      store.close();
    }
  });

  it("on PostgreSQL too: the overview stored with the run is served, equal to one computed from the stored diagnoses; a stale one is computed and kept again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-aggregates-pg-"));
    const db = await freshDatabase("aggregates");
    const r = await analyze([EXAMPLES], { out: join(dir, "out"), db, onRunStored: storeOverviews });
    const store = new PgStore(db);
    try {
      const info = (await store.run(r.runId))!;
      const run = { ...info, annotators: [info.annotator] };
      const stored = await storedOverview(store, run, info.annotator);
      expect(stored).toBeDefined();
      const fresh = buildOverview(run, info.annotator, await computeRunStats(store, r.runId, info.annotator));
      expect(JSON.parse(JSON.stringify(stored))).toEqual(JSON.parse(JSON.stringify(fresh)));
      const res = await createApp(store).request(`/api/runs/${r.runId}/overview`);
      expect(((await res.json()) as Overview).all).toEqual(JSON.parse(JSON.stringify(fresh.all)));
      await store.q("UPDATE runs SET updated_at = @at WHERE id = @id", { at: "2099-01-01T00:00:00.000Z", id: r.runId });
      const later = { ...run, updated_at: "2099-01-01T00:00:00.000Z" };
      expect(await storedOverview(store, later, info.annotator)).toBeUndefined();
      expect((await createApp(store).request(`/api/runs/${r.runId}/overview`)).status).toBe(200);
      expect(await storedOverview(store, later, info.annotator)).toBeDefined();
      await store.deleteRun(r.runId);
      expect(await store.q("SELECT count(*) AS n FROM aggregates")).toEqual([{ n: 0 }]);
    } finally {
      await store.close();
    }
  });
});
