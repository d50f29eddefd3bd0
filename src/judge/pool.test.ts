import { describe, expect, it } from "vitest";
import { mapOrdered, Pool } from "./pool.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("Pool", () => {
  it("never runs more than its limit and runs everything", async () => {
    const pool = new Pool(3);
    let active = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        pool.run(async () => {
          peak = Math.max(peak, ++active);
          await sleep(10 + (i % 3) * 5);
          active--;
          return i;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(peak).toBe(3);
    const s = pool.stats();
    expect(s).toMatchObject({ limit: 3, completed: 12, failed: 0, maxActive: 3, active: 0, queued: 0 });
    // Saturated the whole time.
    expect(s.busyFraction).toBeGreaterThan(0.8);
  });

  it("measures a half-used pool as about half busy, with a controlled clock", async () => {
    let now = 0;
    const pool = new Pool(2, () => now);
    const gate: (() => void)[] = [];
    const p = pool.run(() => new Promise<void>((r) => gate.push(r)));
    await Promise.resolve();
    now = 100;
    gate[0]!();
    await p;
    const s = pool.stats();
    expect(s.elapsedMs).toBe(100);
    expect(s.busyFraction).toBeCloseTo(0.5, 5);
  });

  it("counts failures and keeps going", async () => {
    const pool = new Pool(1);
    await expect(pool.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(pool.run(async () => 7)).resolves.toBe(7);
    expect(pool.stats()).toMatchObject({ completed: 1, failed: 1 });
  });

  it("rejects a limit below one", () => {
    expect(() => new Pool(0)).toThrow(/positive integer/);
  });
});

describe("mapOrdered", () => {
  it("yields in input order with bounded concurrency, even when later items finish first", async () => {
    let active = 0;
    let peak = 0;
    const out: number[] = [];
    for await (const v of mapOrdered([50, 5, 30, 1, 20, 2], 2, async (ms, i) => {
      peak = Math.max(peak, ++active);
      await sleep(ms);
      active--;
      return i;
    }))
      out.push(v);
    expect(out).toEqual([0, 1, 2, 3, 4, 5]);
    expect(peak).toBe(2);
  });

  it("passes a rejection through at its position", async () => {
    const got: string[] = [];
    await expect(
      (async () => {
        for await (const v of mapOrdered([1, 2, 3], 2, async (x) => {
          if (x === 2) throw new Error("two");
          return `ok${x}`;
        }))
          got.push(v);
      })(),
    ).rejects.toThrow("two");
    expect(got).toEqual(["ok1"]);
  });
});
