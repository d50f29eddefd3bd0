import { open, readFile, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { unzipSync } from "fflate";
import { readLines } from "./io/lines.js";
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

/** Opens a file, classifies it and takes a sample for detection. Never throws for bad content. */
export async function openSource(path: string, ctx: ReadContext): Promise<SourceFile> {
  const st = await stat(path);
  const name = basename(path).toLowerCase();
  const ext = extname(name);
  // small files (almost all trace files) are read once; large ones are sampled by their head and streamed
  const whole = st.size <= IN_MEMORY_BYTES ? await readFile(path) : undefined;
  let headBuf: Buffer;
  if (whole) headBuf = whole.subarray(0, HEAD_BYTES);
  else {
    const fh = await open(path, "r");
    headBuf = Buffer.alloc(Math.min(HEAD_BYTES, st.size));
    await fh.read(headBuf, 0, headBuf.length, 0);
    await fh.close();
  }
  const source = whole ?? path;
  // A UTF-8 byte-order mark is not content: JSON.parse and the sniffers must not see it.
  const bom = headBuf[0] === 0xef && headBuf[1] === 0xbb && headBuf[2] === 0xbf;
  const head = headBuf.toString("utf8").replace(/^\uFEFF/, "");
  let kind: FileKind;
  const first = firstNonSpace(head);
  if (st.size === 0 || first === undefined) kind = "empty";
  else if (headBuf[0] === 0x50 && headBuf[1] === 0x4b && headBuf[2] === 0x03) kind = "zip";
  else if (headBuf.includes(0)) kind = "binary";
  // a log line may open with "[" too (`[2023-25-06 20:16:55 INFO] …`): the first tokens decide
  else if ((first === "[" || first === "{") && !JSON_EXT.has(ext) && !startsLikeJson(head)) kind = "text";
  else if (first === "[") kind = looksLikeJsonl(head, ext) ? "jsonl" : "json-array";
  else if (first === "{") kind = looksLikeJsonl(head, ext) ? "jsonl" : "json";
  else kind = "text";

  let docCache: { value: unknown } | undefined;
  let zipCache: Record<string, Uint8Array> | undefined;

  const readDocument = async (): Promise<unknown> => {
    if (docCache) return docCache.value;
    if (st.size > MAX_DOCUMENT_BYTES) throw new Error(`JSON document of ${st.size} bytes is larger than faultline parses whole`);
    const buf = whole ?? (await readFile(path));
    const bad = findInvalidUtf8(buf);
    if (bad >= 0) throw Object.assign(new Error(`invalid UTF-8 at byte ${bad}`), { line: lineAt(buf, bad) });
    const r = parseJsonLenient(buf.toString("utf8", bom ? 3 : 0));
    for (const repair of r.repairs) ctx.report({ file: path, level: "warning", message: `repaired: ${repair}` });
    docCache = { value: r.value };
    return r.value;
  };

  async function* records(): AsyncGenerator<RecordItem> {
    if (kind === "jsonl") {
      let index = 0;
      for await (const item of readLines(source)) {
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
      for await (const item of streamJsonArray(source)) {
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

  const sample: Sample = { path, name, ext, kind, size: st.size, head, records: [] };
  try {
    if (kind === "jsonl") {
      // Stream the first records: a long first line may not fit in the head.
      let seen = 0;
      for await (const item of readLines(source)) {
        if (++seen > 40 || sample.records.length >= SAMPLE_RECORDS) break;
        if ("error" in item || !item.text.trim()) continue;
        try {
          sample.records.push(JSON.parse(item.line === 1 ? item.text.replace(/^\uFEFF/, "") : item.text));
        } catch {
          /* bad or cut-off line: records() reports it when read */
        }
      }
    } else if (kind === "json-array") {
      for await (const item of streamJsonArray(source, SAMPLE_RECORDS)) if ("value" in item) sample.records.push(item.value);
    } else if (kind === "json") {
      sample.records.push(await readDocument());
    } else if (kind === "zip") {
      zipCache = unzipSync(whole ?? (await readFile(path)));
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
    text: async () => (whole ? whole.toString("utf8") : readFile(path, "utf8")),
    bytes: async () => whole ?? readFile(path),
    zipEntries: zipCache,
  };
}

