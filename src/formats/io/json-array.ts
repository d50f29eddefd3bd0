import { createReadStream } from "node:fs";
import { decodeUtf8 } from "./utf8.js";
import { parseJsonLenient } from "./lenient.js";
import type { ByteInput } from "./lines.js";

export type ArrayItem =
  | { index: number; line: number; value: unknown; repairs: string[] }
  | { index: number; line: number; error: string };

/**
 * Streams the elements of a top-level JSON array one at a time, so a 200 MB array of records never has to be held
 * as one string. A byte scanner finds element boundaries (tracking strings and nesting); each element is parsed on
 * its own, so one bad element is reported with its line and the rest still come through.
 * Stops early once `limit` elements have been yielded (used for format sniffing).
 */
export async function* streamJsonArray(source: ByteInput, limit = Infinity): AsyncGenerator<ArrayItem> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let started = false; // saw the opening [
  let parts: Buffer[] = [];
  let elemStart = -1; // offset in the current chunk where the pending element begins, -1 if none pending
  let line = 1;
  let elemLine = 1;
  let index = 0;
  let done = false;
  let elemSeen = false; // the pending element has a non-space byte (its line is where that byte is)

  const finish = (chunk: Buffer, end: number): ArrayItem | undefined => {
    if (elemStart >= 0) parts.push(chunk.subarray(elemStart, end));
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts = [];
    elemStart = -1;
    elemSeen = false;
    const text = decodeUtf8(buf);
    const trimmed = text?.trim();
    if (trimmed === "") return undefined; // "[]" or a trailing comma
    const i = index++;
    if (text === undefined) return { index: i, line: elemLine, error: "invalid UTF-8" };
    try {
      const r = parseJsonLenient(trimmed!);
      return { index: i, line: elemLine, value: r.value, repairs: r.repairs };
    } catch (e) {
      return { index: i, line: elemLine, error: `invalid JSON: ${(e as Error).message}` };
    }
  };

  const stream = typeof source === "string" ? createReadStream(source, { highWaterMark: 1 << 20 }) : undefined;
  try {
    for await (const chunk of (stream ?? (Buffer.isBuffer(source) ? [source] : source)) as AsyncIterable<Buffer>) {
      const n = chunk.length;
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (c === 10) line++;
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 92) escaped = true;
          else if (c === 34) inString = false;
          continue;
        }
        if (!started) {
          if (c === 91 /* [ */) {
            started = true;
            depth = 1;
            elemStart = i + 1;
            elemLine = line;
          }
          continue;
        }
        if (!elemSeen && c !== 32 && c !== 10 && c !== 13 && c !== 9 && c !== 44) {
          elemSeen = true;
          elemLine = line;
        }
        if (c === 34) inString = true;
        else if (c === 123 || c === 91) depth++;
        else if (c === 125 || c === 93) {
          depth--;
          if (depth === 0) {
            const item = finish(chunk, i);
            if (item) yield item;
            done = true;
            break;
          }
        } else if (c === 44 && depth === 1) {
          const item = finish(chunk, i);
          if (item) {
            yield item;
            if (index >= limit) return;
          }
          elemStart = i + 1;
          elemLine = line;
        }
      }
      if (done) break;
      if (elemStart >= 0) {
        parts.push(chunk.subarray(elemStart));
        elemStart = 0;
      }
    }
    if (!done && started && index < limit) {
      yield { index: index++, line: elemLine, error: "truncated JSON array: the file ends before the closing ]" };
    }
  } finally {
    stream?.destroy();
  }
}
