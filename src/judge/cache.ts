import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import type { Trace } from "../trace/index.js";
import type { TokenUsage } from "./client.js";

/**
 * The judge's call cache, keyed by (trace content hash, prompt version, model, settings, call, request hash): a re-run
 * does not pay twice, and a run killed with SIGKILL resumes without repeating completed calls. Only successful calls
 * are stored. `JudgeCache` is the interface; `JsonlFileCache` appends one line per call and fsyncs it before the call
 * counts as done. Another backend (the SQLite store) can implement the same interface.
 */

export interface CacheKeyParts {
  traceHash: string;
  promptVersion: string;
  model: string;
  /** Everything else that changes the answer: temperature, response format, budgets, redaction patterns … */
  settings: Record<string, unknown>;
  /** Which call of the trace: `w0/3`, `final`, `whole`, `mast`. */
  call: string;
  /** Hash of the exact messages sent (covers hints and the running summary). */
  requestHash: string;
}

export interface CachedCall {
  key: string;
  /** The raw answer text; parsed again on a hit, so a parser change cannot serve a stale shape. */
  text: string;
  usage: TokenUsage;
  attempts: number;
  call: string;
  traceHash: string;
  model: string;
  promptVersion: string;
  requestHash: string;
  at: string;
}

export interface JudgeCache {
  get(key: string): Promise<CachedCall | undefined>;
  put(entry: CachedCall): Promise<void>;
  close(): Promise<void>;
}

/** JSON with sorted keys, so equal values hash equally whatever their key order. */
export function stableStringify(v: unknown): string {
  if (v === undefined) return "null";
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map((x) => stableStringify(x)).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
    .join(",")}}`;
}

export const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

/** Hash of what the judge reads from a trace (task, agents, steps) — not where the file lives. */
export function traceContentHash(trace: Trace): string {
  return sha256(stableStringify({ task: trace.task, agents: trace.agents, steps: trace.steps }));
}

export function cacheKey(parts: CacheKeyParts): string {
  return sha256(stableStringify(parts));
}

export class MemoryCache implements JudgeCache {
  readonly entries = new Map<string, CachedCall>();
  async get(key: string) {
    return this.entries.get(key);
  }
  async put(entry: CachedCall) {
    this.entries.set(entry.key, entry);
  }
  async close() {}
}

/**
 * A JSONL file of completed calls. Each `put` appends one line and fsyncs before resolving. A line torn by a kill in
 * the middle of a write is skipped on the next open (and counted in `skippedLines`); the next append starts on a
 * fresh line so it cannot be glued to the torn one.
 */
export class JsonlFileCache implements JudgeCache {
  private readonly entries = new Map<string, CachedCall>();
  private handle?: FileHandle;
  private queue: Promise<void> = Promise.resolve();
  private needsNewline = false;
  /** Lines that could not be read (torn or foreign), with their 1-based line numbers. */
  readonly skipped: { line: number; reason: string }[] = [];

  private constructor(readonly path: string) {}

  static async open(path: string): Promise<JsonlFileCache> {
    const cache = new JsonlFileCache(path);
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      cache.needsNewline = text.length > 0 && !text.endsWith("\n");
      text.split("\n").forEach((line, i) => {
        if (!line.trim()) return;
        try {
          const e = JSON.parse(line) as CachedCall;
          if (typeof e.key !== "string" || typeof e.text !== "string") throw new Error("not a cache entry");
          cache.entries.set(e.key, e);
        } catch (err) {
          cache.skipped.push({ line: i + 1, reason: (err as Error).message });
        }
      });
    } else mkdirSync(dirname(path), { recursive: true });
    cache.handle = await open(path, "a");
    return cache;
  }

  get size(): number {
    return this.entries.size;
  }

  async get(key: string) {
    return this.entries.get(key);
  }

  put(entry: CachedCall): Promise<void> {
    // Serialise writes: one line at a time, each fsynced, so a kill leaves at most the last line torn.
    const write = async () => {
      if (!this.handle) throw new Error(`cache ${this.path} is closed`);
      const line = `${this.needsNewline ? "\n" : ""}${JSON.stringify(entry)}\n`;
      this.needsNewline = false;
      await this.handle.write(line);
      await this.handle.sync();
      this.entries.set(entry.key, entry);
    };
    const p = this.queue.then(write);
    this.queue = p.catch(() => {});
    return p;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.handle?.close();
    this.handle = undefined;
  }
}
