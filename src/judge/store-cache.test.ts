import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Store } from "../store/index.js";
import type { CachedCall } from "./cache.js";
import { StoreCache } from "./store-cache.js";

const entry = (key: string, text = '{"summary":"s"}'): CachedCall => ({
  key, text, usage: { input: 120, output: 30, reportedCalls: 1, estimatedCalls: 0 }, attempts: 1, call: "whole",
  traceHash: "t", model: "m", promptVersion: "p", requestHash: "r", at: "2026-01-01T00:00:00.000Z",
});

describe("StoreCache (the judge's call cache in the SQLite store)", () => {
  it("keeps completed calls across store instances, as a restarted run sees them", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "fl-store-cache-")), "store.db");
    const a = new Store(db);
    const cache = new StoreCache(a);
    expect(await cache.get("k1")).toBeUndefined();
    await cache.put(entry("k1"));
    await cache.close(); // leaves the store to its owner
    expect(await cache.get("k1")).toEqual(entry("k1"));
    a.close();

    const b = new Store(db);
    try {
      expect(await new StoreCache(b).get("k1")).toEqual(entry("k1"));
      // namespaced: other users of the cache table do not collide with the judge
      expect(b.cacheGet("k1")).toBeUndefined();
      expect(b.cacheGet(`${StoreCache.PREFIX}k1`)).toBeDefined();
    } finally {
      b.close();
    }
  });

  it("asks again rather than trusting an unreadable entry", async () => {
    const store = new Store(":memory:");
    try {
      const cache = new StoreCache(store);
      store.cachePut(`${StoreCache.PREFIX}bad`, "{not json");
      store.cachePut(`${StoreCache.PREFIX}other`, JSON.stringify(entry("a-different-key")));
      expect(await cache.get("bad")).toBeUndefined();
      expect(await cache.get("other")).toBeUndefined();
      expect(cache.unreadable).toBe(2);
      await cache.put(entry("bad"));
      expect(await cache.get("bad")).toEqual(entry("bad"));
    } finally {
      store.close();
    }
  });
});
