import { createReadStream } from "node:fs";
import { open, readFile, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Readable } from "node:stream";
import { createGunzip, gunzipSync } from "node:zlib";
import { unzipSync } from "fflate";
import { readLines, type ByteInput } from "./io/lines.js";
import { streamJsonArray } from "./io/json-array.js";
import { parseJsonLenient } from "./io/lenient.js";
import { startsLikeJson } from "./io/json-start.js";
import { findInvalidUtf8, lineAt } from "./io/utf8.js";
import type { FileKind, ReadContext, RecordItem, Sample, SourceFile } from "./types.js";

const HEAD_BYTES = 64 * 1024;
const SAMPLE_RECORDS = 5;
/** JSON documents above this size are not parsed during sniffing unless they are arrays (which stream). */
const MAX_DOCUMENT_BYTES = 400 * 1024 * 1024;
/** Files up to this size are read once into memory (one open instead of several); larger ones are streamed. */
const IN_MEMORY_BYTES = 16 * 1024 * 1024;

const firstNonSpace = (s: string) => s.match(/\S/)?.[0];
/** Names that declare JSON: such a file stays JSON even when broken, so its parse error is reported, not skipped as text. */
const JSON_EXT = new Set([".json", ".jsonl", ".ndjson"]);

function looksLikeJsonl(head: string, ext: string): boolean {
  if (ext === ".jsonl" || ext === ".ndjson") return true;
  const lines = head.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length < 2) return false;
  // Pretty-printed JSON opens with a line like "{" or `"key": [`; JSONL opens with a complete record.
  const first = lines[0]!;
  if (/[{[:,]$/.test(first)) return false;
  for (const l of lines.slice(0, Math.min(lines.length - 1, 5))) {
    try {
      const v = JSON.parse(l);
      if (v && typeof v === "object") return true;
    } catch {
      /* a partial or broken line; JSONL may still follow */
    }
  }
  return false;
}

/** gzip member header: magic 1f 8b, method 8 (deflate). */
const isGzip = (b: Uint8Array) => b.length >= 3 && b[0] === 0x1f && b[1] === 0x8b && b[2] === 0x08;
/** gzip files up to this size are inflated in memory at once (when the result fits IN_MEMORY_BYTES × 4); larger ones stream. */
const GZIP_IN_MEMORY_BYTES = 4 * 1024 * 1024;

/** Whether a (lower-cased) extension declares JSON: such a file is never skipped as text or binary. */
export const declaresJson = (ext: string) => JSON_EXT.has(ext);

/** Decompressed chunks of a gzip file or buffer (concatenated members included); the file is closed when iteration stops. */
async function* gunzipChunks(source: string | Buffer): AsyncGenerator<Buffer> {
  const input = typeof source === "string" ? createReadStream(source, { highWaterMark: 1 << 20 }) : Readable.from([source]);
  const gz = createGunzip();
  input.on("error", (e: Error) => gz.destroy(e));
  input.pipe(gz);
  try {
    for await (const c of gz) yield c as Buffer;
  } finally {
    input.destroy();
    gz.destroy();
  }
}

/** The first `n` bytes of a stream; a stream that fails early gives what came before the failure, and the failure. */
async function headOf(chunks: AsyncIterable<Buffer>, n: number): Promise<{ head: Buffer; error?: Error }> {
  const parts: Buffer[] = [];
  let len = 0;
  try {
    for await (const c of chunks) {
      parts.push(c);
      len += c.length;
      if (len >= n) break;
    }
  } catch (e) {
    return { head: Buffer.concat(parts).subarray(0, n), error: e as Error };
  }
  return { head: Buffer.concat(parts).subarray(0, n) };
}

async function collect(chunks: AsyncIterable<Buffer>, limit: number, what: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let len = 0;
  for await (const c of chunks) {
    len += c.length;
    if (len > limit) throw new Error(`${what} is larger than the ${limit} bytes faultline reads whole`);
    parts.push(c);
  }
  return Buffer.concat(parts);
}

/**
 * UTF-16 text: by its byte-order mark, or (no mark) by the zero byte beside nearly every character of ASCII text.
 * UTF-32 marks (FF FE 00 00) are not taken for UTF-16.
 */
function utf16Of(b: Buffer): { encoding: "utf-16le" | "utf-16be"; bom: boolean } | undefined {
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe && !(b[2] === 0 && b[3] === 0)) return { encoding: "utf-16le", bom: true };
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return { encoding: "utf-16be", bom: true };
  const pairs = Math.min(b.length >> 1, 256);
  if (pairs < 2) return undefined;
  let le = 0;
  let be = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (b[i] !== 0 && b[i + 1] === 0) le++;
    else if (b[i] === 0 && b[i + 1] !== 0) be++;
  }
  if (le >= pairs * 0.9 && b[0] !== 0 && b[1] === 0) return { encoding: "utf-16le", bom: false };
  if (be >= pairs * 0.9 && b[0] === 0 && b[1] !== 0) return { encoding: "utf-16be", bom: false };
  return undefined;
}

/** UTF-16 bytes → UTF-8 bytes, without the byte-order mark. */
function utf16ToUtf8(buf: Buffer, encoding: "utf-16le" | "utf-16be"): Buffer {
  let b = buf.length % 2 ? buf.subarray(0, buf.length - 1) : buf;
  if (encoding === "utf-16be") {
    b = Buffer.from(b);
    b.swap16();
  }
  return Buffer.from(b.toString("utf16le").replace(/^\uFEFF/, ""), "utf8");
}

/** "… at position 100" of a JSON.parse error → the line, and what is there when it is a NUL byte. */
function locateParseError(e: Error, text: string): { message: string; line?: number } {
  const pos = Number(e.message.match(/at position (\d+)/)?.[1] ?? NaN);
  if (!Number.isInteger(pos) || pos > text.length) return { message: e.message };
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < pos; i = text.indexOf("\n", i + 1)) line++;
  return { message: text.charCodeAt(pos) === 0 ? `${e.message}: a NUL byte` : e.message, line };
}

/**
 * Opens a file, classifies it and takes a sample for detection. Never throws for bad content.
 * gzip files (`.jsonl.gz`, `.json.gz`, or any file opening with the gzip magic) are read decompressed; UTF-16 files
 * are decoded; a named pipe or /dev/fd path is read once, into memory.
 */
export async function openSource(path: string, ctx: ReadContext): Promise<SourceFile> {
  const st = await stat(path);
  const once = st.isFIFO() || st.isCharacterDevice();
  let name = basename(path).toLowerCase();
  // small files (almost all trace files) and pipes are read once; large ones are sampled by their head and streamed
  let whole: Buffer | undefined = once || st.size <= IN_MEMORY_BYTES ? await readFile(path) : undefined;
  let headBuf: Buffer;
  if (whole) headBuf = whole.subarray(0, HEAD_BYTES);
  else {
    const fh = await open(path, "r");
    headBuf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
    await fh.read(headBuf, 0, headBuf.length, 0);
    await fh.close();
  }
  let size = whole ? whole.length : st.size;
  /** Decompressed chunks when the file is a gzip too large to inflate in memory. */
  let gzipStream: (() => AsyncIterable<Buffer>) | undefined;

  if (isGzip(headBuf)) {
    if (name.endsWith(".gz")) name = name.slice(0, -3);
    let inflated: Buffer | undefined;
    if (whole && whole.length <= GZIP_IN_MEMORY_BYTES) {
      try {
        inflated = gunzipSync(whole, { maxOutputLength: IN_MEMORY_BYTES * 4 });
      } catch {
        /* too large, or damaged: streamed, so what precedes the damage is still read and the damage reported */
      }
    }
    if (inflated) {
      whole = inflated;
      headBuf = inflated.subarray(0, HEAD_BYTES);
      size = inflated.length;
    } else {
      const compressed = whole;
      whole = undefined;
      gzipStream = () => gunzipChunks(compressed ?? path);
      const h = await headOf(gzipStream(), HEAD_BYTES);
      // nothing decompresses at all: say so rather than call the file empty (a later failure is reported where it is)
      if (h.head.length === 0 && h.error) throw new Error(`damaged gzip data (${h.error.message})`);
      headBuf = h.head;
      // the inflated size is unknown until it is read; the head tells empty from not
      size = Math.max(headBuf.length, st.size);
    }
    ctx.report({ level: "notice", message: "gzip-compressed: read decompressed" });
  }

  const u16 = utf16Of(headBuf);
  if (u16) {
    const raw = whole ?? (gzipStream ? await collect(gzipStream(), MAX_DOCUMENT_BYTES, "the decompressed file") : undefined);
    if (!raw && size > MAX_DOCUMENT_BYTES) throw new Error(`UTF-16 file of ${size} bytes is larger than faultline decodes (${MAX_DOCUMENT_BYTES}); convert it to UTF-8`);
    const decoded = utf16ToUtf8(raw ?? (await readFile(path)), u16.encoding);
    whole = decoded;
    gzipStream = undefined;
    headBuf = decoded.subarray(0, HEAD_BYTES);
    size = decoded.length;
    ctx.report({
      level: "notice",
      message: `decoded from ${u16.encoding.toUpperCase()}${u16.bom ? " (byte-order mark)" : " (no byte-order mark; recognised by the zero byte beside each character)"}`,
    });
  }

  const ext = extname(name);
  /** The bytes for one pass of a reader: in memory, the file, or a fresh decompressing stream. */
  const input = (): ByteInput => whole ?? (gzipStream ? gzipStream() : path);
  const allBytes = async (): Promise<Buffer> => whole ?? (gzipStream ? collect(gzipStream(), MAX_DOCUMENT_BYTES, "the decompressed file") : readFile(path));
  // A UTF-8 byte-order mark is not content: JSON.parse and the sniffers must not see it.
  const bom = headBuf[0] === 0xef && headBuf[1] === 0xbb && headBuf[2] === 0xbf;
  const head = headBuf.toString("utf8").replace(/^\uFEFF/, "");
  let kind: FileKind;
  const first = firstNonSpace(head);
  const namedJson = JSON_EXT.has(ext);
  const opensJson = first === "[" || first === "{";
  if (size === 0 || first === undefined) kind = "empty";
  else if (headBuf[0] === 0x50 && headBuf[1] === 0x4b && headBuf[2] === 0x03) kind = "zip";
  // a NUL byte makes a file binary, unless it is named JSON and opens like JSON: then the parser reports the NUL
  // where it is (the line of a JSONL file, the document otherwise), as it does for a NUL beyond the sample
  else if (headBuf.includes(0) && !(namedJson && opensJson)) kind = "binary";
  // a log line may open with "[" too (`[2023-25-06 20:16:55 INFO] …`): the first tokens decide
  else if (opensJson && !namedJson && !startsLikeJson(head)) kind = "text";
  else if (first === "[") kind = looksLikeJsonl(head, ext) ? "jsonl" : "json-array";
  else if (first === "{") kind = looksLikeJsonl(head, ext) ? "jsonl" : "json";
  // a file named JSON stays JSON whatever it holds (`null`, `]}`, a bare string, a garbage line): what is wrong with
  // it is reported, never skipped as text
  else if (ext === ".jsonl" || ext === ".ndjson") kind = "jsonl";
  else if (ext === ".json") kind = "json";
  else kind = "text";

  let docCache: { value: unknown } | undefined;
  let zipCache: Record<string, Uint8Array> | undefined;

  const readDocument = async (): Promise<unknown> => {
    if (docCache) return docCache.value;
    if (!whole && !gzipStream && size > MAX_DOCUMENT_BYTES) throw new Error(`JSON document of ${size} bytes is larger than faultline parses whole`);
    const buf = await allBytes();
    const bad = findInvalidUtf8(buf);
    if (bad >= 0) throw Object.assign(new Error(`invalid UTF-8 at byte ${bad}`), { line: lineAt(buf, bad) });
    const text = buf.toString("utf8", bom ? 3 : 0);
    let r: ReturnType<typeof parseJsonLenient>;
    try {
      r = parseJsonLenient(text);
    } catch (e) {
      const where = locateParseError(e as Error, text);
      throw Object.assign(new Error(where.message), { line: where.line });
    }
    for (const repair of r.repairs) ctx.report({ file: path, level: "warning", message: `repaired: ${repair}` });
    docCache = { value: r.value };
    return r.value;
  };

  async function* streamedRecords(): AsyncGenerator<RecordItem> {
    if (kind === "jsonl") {
      let index = 0;
      for await (const item of readLines(input())) {
        if ("error" in item) {
          ctx.report({ file: path, line: item.line, level: "error", message: item.error, skipped: "line" });
          continue;
        }
        const t = (item.line === 1 ? item.text.replace(/^\uFEFF/, "") : item.text).trim();
        if (t === "") continue;
        try {
          const r = parseJsonLenient(t);
          for (const repair of r.repairs)
            ctx.report({ file: path, line: item.line, level: "warning", message: `repaired: ${repair}` });
          yield { value: r.value, line: item.line, index: index++ };
        } catch (e) {
          ctx.report({
            file: path,
            line: item.line,
            level: "error",
            message: `invalid JSON (${(e as Error).message})${item.text.length > 0 && !/[}\]]\s*$/.test(item.text) ? "; the line looks truncated" : ""}`,
            skipped: "line",
          });
        }
      }
    } else if (kind === "json-array") {
      for await (const item of streamJsonArray(input())) {
        if ("error" in item) {
          ctx.report({ file: path, line: item.line, level: "error", message: `array element ${item.index}: ${item.error}`, skipped: "record" });
          continue;
        }
        for (const repair of item.repairs)
          ctx.report({ file: path, line: item.line, level: "warning", message: `repaired: ${repair}` });
        yield { value: item.value, line: item.line, index: item.index };
      }
    } else if (kind === "json") {
      yield { value: await readDocument(), index: 0 };
    }
  }

  /** Records; a damaged gzip stream ends them with an error instead of failing the reader. */
  async function* records(): AsyncGenerator<RecordItem> {
    try {
      yield* streamedRecords();
    } catch (e) {
      if (!gzipStream || !String((e as NodeJS.ErrnoException).code ?? "").startsWith("Z_")) throw e;
      ctx.report({ file: path, level: "error", message: `damaged gzip data (${(e as Error).message}); the rest of the file is not read`, skipped: "file" });
    }
  }

  const sample: Sample = { path, name, ext, kind, size, head, records: [] };
  try {
    if (kind === "jsonl") {
      // Stream the first records: a long first line may not fit in the head.
      let seen = 0;
      let firstBad: { message: string; line: number } | undefined;
      for await (const item of readLines(input())) {
        if (++seen > 40 || sample.records.length >= SAMPLE_RECORDS) break;
        if ("error" in item) {
          firstBad ??= { message: item.error, line: item.line };
          continue;
        }
        if (!item.text.trim()) continue;
        try {
          sample.records.push(parseJsonLenient(item.line === 1 ? item.text.replace(/^\uFEFF/, "") : item.text).value);
        } catch (e) {
          /* bad or cut-off line: records() reports it when read */
          firstBad ??= { message: (e as Error).message, line: item.line };
        }
      }
      // no record at all: say why, so a file of garbage lines is refused with its first problem
      if (sample.records.length === 0 && firstBad) sample.parseError = firstBad;
    } else if (kind === "json-array") {
      for await (const item of streamJsonArray(input(), SAMPLE_RECORDS)) if ("value" in item) sample.records.push(item.value);
    } else if (kind === "json") {
      sample.records.push(await readDocument());
    } else if (kind === "zip") {
      zipCache = unzipSync(await allBytes());
      sample.entries = Object.keys(zipCache);
    }
  } catch (e) {
    // A document that does not parse is left with no sample records; detection then fails and the reader says why.
    sample.parseError = { message: (e as Error).message, line: (e as { line?: number }).line };
  }

  return {
    path,
    sample,
    records,
    document: readDocument,
    text: async () => (await allBytes()).toString("utf8"),
    bytes: allBytes,
    zipEntries: zipCache,
  };
}
