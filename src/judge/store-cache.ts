import { SqliteStore, Store, type FaultlineStore } from "../store/index.js";
import type { CachedCall, JudgeCache } from "./cache.js";

/**
 * The judge's call cache in the store (SQLite or PostgreSQL; shared by every worker of a distributed run) (the `cache` table, through Store.cacheGet/cachePut — the SQL stays in
 * src/store). Each completed call is committed on its own before it counts as done, so a run killed with SIGKILL
 * resumes without repeating it, and a re-run over the same traces, prompt, model and settings pays nothing. Keys are
 * namespaced (`judge:`) because the table is shared. The store is owned by the caller: `close` leaves it open.
 */
export class StoreCache implements JudgeCache {
  static readonly PREFIX = "judge:";
  /** Entries found but not readable as a cached call (a foreign or damaged value): asked again, never trusted. */
  unreadable = 0;

  private readonly store: FaultlineStore;

  constructor(store: FaultlineStore | Store) {
    this.store = store instanceof Store ? new SqliteStore(store) : store;
  }

  async get(key: string): Promise<CachedCall | undefined> {
    const value = await this.store.cacheGet(StoreCache.PREFIX + key);
    if (value === undefined) return undefined;
    try {
      const e = JSON.parse(value) as CachedCall;
      if (e.key !== key || typeof e.text !== "string" || !e.usage) throw new Error("not a cache entry");
      return e;
    } catch {
      this.unreadable++;
      return undefined;
    }
  }

  async put(entry: CachedCall): Promise<void> {
    await this.store.cachePut(StoreCache.PREFIX + entry.key, JSON.stringify(entry));
  }

  async close(): Promise<void> {}
}
