import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { cacheKey, JsonlFileCache, stableStringify, traceContentHash, type CachedCall } from "./cache.js";

const entry = (key: string, text = `{"answer":"${key}"}`): CachedCall => ({
  key, text, usage: { input: 10, output: 5, reportedCalls: 1, estimatedCalls: 0 }, attempts: 1, call: "whole",
  traceHash: "h", model: "m", promptVersion: "s1-x", requestHash: "r", at: "2026-01-01T00:00:00.000Z",
});

describe("cache keys", () => {
  it("do not depend on key order, and change with any part", () => {
    expect(stableStringify({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    const parts = { traceHash: "t", promptVersion: "p", model: "m", settings: { temperature: 0, a: 1 }, call: "whole", requestHash: "r" };
    expect(cacheKey(parts)).toBe(cacheKey({ ...parts, settings: { a: 1, temperature: 0 } }));
    expect(cacheKey(parts)).not.toBe(cacheKey({ ...parts, model: "m2" }));
    expect(cacheKey(parts)).not.toBe(cacheKey({ ...parts, settings: { temperature: 0.5, a: 1 } }));
  });

  it("hash a trace's content, not where it was read from", () => {
    const mk = (file: string, text: string) => buildTrace({ id: "x", source: { file, format: "t", index: 0 } }, [{ agent: "a", role: "user", kind: "message", text }]);
    expect(traceContentHash(mk("a.json", "hi"))).toBe(traceContentHash(mk("b.json", "hi")));
    expect(traceContentHash(mk("a.json", "hi"))).not.toBe(traceContentHash(mk("a.json", "ho")));
  });
});

describe("JsonlFileCache", () => {
  it("persists entries across reopen, one fsynced line each", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "fl-cache-")), "sub", "calls.jsonl");
    const c = await JsonlFileCache.open(path);
    await Promise.all([c.put(entry("k1")), c.put(entry("k2")), c.put(entry("k3"))]);
    await c.close();
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(3);
    const again = await JsonlFileCache.open(path);
    expect(again.size).toBe(3);
    expect((await again.get("k2"))?.text).toBe('{"answer":"k2"}');
    expect(await again.get("nope")).toBeUndefined();
    await again.close();
  });

  it("skips a line torn by a kill and starts the next append on a fresh line", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "fl-cache-")), "calls.jsonl");
    writeFileSync(path, `${JSON.stringify(entry("good"))}\n`);
    appendFileSync(path, JSON.stringify(entry("torn")).slice(0, 40)); // no newline: the write was cut
    const c = await JsonlFileCache.open(path);
    expect(c.size).toBe(1);
    expect(c.skipped).toEqual([{ line: 2, reason: expect.any(String) }]);
    await c.put(entry("after"));
    await c.close();
    const reopened = await JsonlFileCache.open(path);
    expect(reopened.size).toBe(2);
    expect(await reopened.get("after")).toBeDefined();
    expect(reopened.skipped).toHaveLength(1);
    await reopened.close();
  });
});
