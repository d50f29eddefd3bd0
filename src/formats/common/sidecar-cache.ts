import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * Supporting files (run reports, predictions, run configs) are shared by every trace of a run folder, so each one is
 * read and parsed once per content version instead of once per trace. Keyed by path, parser name, mtime and size;
 * a failed parse is cached too, so every trace that needs the file reports the same problem.
 */
const cache = new Map<string, Promise<unknown>>();
const MAX_ENTRIES = 64;

export function readSidecar<T>(path: string, parserName: string, parse: (text: string) => T): Promise<T> {
  const st = statSync(path);
  const key = `${parserName}\u0000${path}\u0000${st.mtimeMs}\u0000${st.size}`;
  let hit = cache.get(key) as Promise<T> | undefined;
  if (!hit) {
    hit = readFile(path, "utf8").then(parse);
    // keep the promise from counting as unhandled before an adapter awaits it
    hit.catch(() => undefined);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, hit);
  }
  return hit;
}

/** JSON Lines parsed into values; a bad line throws with its 1-based line number. */
export function parseJsonLines(text: string): unknown[] {
  const out: unknown[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      out.push(JSON.parse(line));
    } catch (e) {
      throw new Error(`line ${i + 1}: invalid JSON (${(e as Error).message})`);
    }
  });
  return out;
}
