import { createReadStream } from "node:fs";
import { decodeUtf8 } from "./utf8.js";

/** A path to read, the bytes themselves, or a stream of chunks (read once). */
export type ByteInput = string | Buffer | AsyncIterable<Buffer>;

export type LineItem = { line: number; text: string } | { line: number; error: string };

/**
 * Streams a file (a path, an in-memory buffer of a small file, or a stream of chunks such as a decompressed gzip)
 * line by line with bounded memory (one chunk plus one partial line).
 * Each line is decoded strictly so bad UTF-8 is reported on its own line instead of corrupting text.
 */
export async function* readLines(source: ByteInput, highWaterMark = 1 << 20): AsyncGenerator<LineItem> {
  let carry: Buffer[] = [];
  let line = 0;
  const emit = (parts: Buffer[]): LineItem => {
    line++;
    let buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (buf.length && buf[buf.length - 1] === 13) buf = buf.subarray(0, buf.length - 1);
    const text = decodeUtf8(buf);
    return text === undefined ? { line, error: "invalid UTF-8" } : { line, text };
  };
  const chunks = typeof source === "string" ? (createReadStream(source, { highWaterMark }) as AsyncIterable<Buffer>) : Buffer.isBuffer(source) ? [source] : source;
  for await (const chunk of chunks) {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(10, start)) !== -1) {
      carry.push(chunk.subarray(start, nl));
      yield emit(carry);
      carry = [];
      start = nl + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
  }
  if (carry.length && carry.some((b) => b.length)) yield emit(carry);
}
