import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyze } from "../pipeline/index.js";
import { Store } from "../store/index.js";
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
    try {
      const info = store.run(r.runId)!;
      const run = { ...info, annotators: [info.annotator] };
      const stored = storedOverview(store, run, info.annotator);
      expect(stored).toBeDefined();
      const fresh = buildOverview(run, info.annotator, await computeRunStats(store, r.runId, info.annotator));
      expect(JSON.parse(JSON.stringify(stored))).toEqual(JSON.parse(JSON.stringify(fresh)));
      const res = await createApp(store).request(`/api/runs/${r.runId}/overview`);
      expect(((await res.json()) as Overview).all).toEqual(JSON.parse(JSON.stringify(fresh.all)));

      // once the run changes (its updated_at), the stored statistics are stale and not served
      store.db.prepare("UPDATE runs SET updated_at = ? WHERE id = ?").run("2099-01-01T00:00:00.000Z", r.runId);
      expect(storedOverview(store, { ...run, updated_at: "2099-01-01T00:00:00.000Z" }, info.annotator)).toBeUndefined();
      // … the first view computes and keeps them again
      const again = await createApp(store).request(`/api/runs/${r.runId}/overview`);
      expect(again.status).toBe(200);
      expect(storedOverview(store, { ...run, updated_at: "2099-01-01T00:00:00.000Z" }, info.annotator)).toBeDefined();
      // deleting the run deletes its aggregates
      store.deleteRun(r.runId);
      expect(store.db.prepare("SELECT count(*) AS n FROM aggregates").get()).toEqual({ n: 0 });
    } finally {
      store.close();
    }
  });
});
