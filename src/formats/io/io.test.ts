import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readLines } from "./lines.js";
import { streamJsonArray } from "./json-array.js";
import { parseJsonLenient, parsePythonLiteral } from "./lenient.js";
import { findInvalidUtf8 } from "./utf8.js";
import { lineOfPointer } from "./pointer-line.js";
import { CUT_MARKER, sanitizeValue } from "./sanitize.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-io-"));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
const collect = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe("readLines", () => {
  it("numbers lines, strips CR, and reports bad UTF-8 on its own line", async () => {
    const p = file("a.jsonl", Buffer.concat([Buffer.from('{"a":1}\r\n'), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from('{"b":2}')]));
    const lines = await collect(readLines(p, 4));
    expect(lines).toEqual([{ line: 1, text: '{"a":1}' }, { line: 2, error: "invalid UTF-8" }, { line: 3, text: '{"b":2}' }]);
  });
});

describe("streamJsonArray", () => {
  it("yields elements across chunk boundaries with their start lines, isolating a bad element", async () => {
    const p = file("arr.json", '[\n {"x": "a,]b"},\n {"y": [1,2,{"z":"}"}]},\n {bad},\n 3\n]\n');
    const items = await collect(streamJsonArray(p));
    expect(items.map((i) => ("value" in i ? i.value : "ERR"))).toEqual([{ x: "a,]b" }, { y: [1, 2, { z: "}" }] }, "ERR", 3]);
    expect(items[2]!.line).toBe(4);
  });
  it("reports a truncated array", async () => {
    const p = file("trunc.json", '[{"a":1},{"b":');
    const items = await collect(streamJsonArray(p));
    expect(items[0]).toMatchObject({ value: { a: 1 } });
    expect(items[1]).toMatchObject({ error: expect.stringContaining("truncated") });
  });
  it("stops after the sampling limit", async () => {
    const p = file("many.json", JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ i }))));
    expect(await collect(streamJsonArray(p, 3))).toHaveLength(3);
  });
});

describe("lenient parsing", () => {
  it("repairs bare NaN outside strings and says so", () => {
    const r = parseJsonLenient('{"a": NaN, "b": "NaN", "c": [Infinity, -Infinity]}');
    expect(r.value).toEqual({ a: null, b: "NaN", c: [null, null] });
    expect(r.repairs[0]).toMatch(/3 bare NaN/);
  });
  it("parses Python reprs and refuses non-literals", () => {
    expect(parsePythonLiteral("{'a': True, 'b': None, 'c': [1, 2.5, 'it\\'s'], 'd': (1,)}")).toEqual({ a: true, b: null, c: [1, 2.5, "it's"], d: [1] });
    expect(parsePythonLiteral("Task(user_id='x')")).toBeUndefined();
  });
  it("finds the first invalid UTF-8 byte", () => {
    expect(findInvalidUtf8(Buffer.from("héllo"))).toBe(-1);
    expect(findInvalidUtf8(Buffer.from([0x61, 0xc3, 0x28]))).toBe(1);
  });
});

describe("lineOfPointer", () => {
  const doc = JSON.stringify({ a: 1, "x/y": { k: [10, { deep: "v" }] }, messages: [{ role: "user" }, { role: null, content: "a\nb" }] }, null, 2);
  it("finds the line where the value at a pointer starts", () => {
    const lines = doc.split("\n");
    const at = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;
    expect(lineOfPointer(doc, "")).toBe(1);
    expect(lineOfPointer(doc, "/a")).toBe(at('"a": 1'));
    expect(lineOfPointer(doc, "/x~1y/k/1/deep")).toBe(at('"deep"'));
    expect(lineOfPointer(doc, "/messages/1")).toBe(at('"role": null') - 1);
    expect(lineOfPointer(doc, "/messages/1/content")).toBe(at('"content"'));
  });
  it("is undefined for a pointer that is not in the text", () => {
    expect(lineOfPointer(doc, "/messages/2")).toBeUndefined();
    expect(lineOfPointer(doc, "/nope")).toBeUndefined();
    expect(lineOfPointer("42", "/a")).toBeUndefined();
  });
  it("walks deep nesting without recursion", () => {
    expect(lineOfPointer(`${"[".repeat(100_000)}\n1${"]".repeat(100_000)}`, `${"/0".repeat(100_000)}`)).toBe(2);
  });
});

describe("sanitizeValue", () => {
  it("cuts values nested deeper than the limit and replaces non-finite numbers, in place and without recursion", () => {
    const deep = JSON.parse(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`);
    const r = sanitizeValue({ ok: [1, 2], huge: JSON.parse("1e400"), deep });
    expect(r).toMatchObject({ cut: 1, nonFinite: 1 });
    expect((r.value as { huge: unknown }).huge).toBeNull();
    expect(() => JSON.stringify(r.value)).not.toThrow();
    expect(JSON.stringify(r.value)).toContain(CUT_MARKER);
    expect(sanitizeValue(Infinity).value).toBeNull();
    expect(sanitizeValue(Infinity, { keepNonFinite: true }).value).toBe(Infinity);
  });
  it("visits shared and cyclic objects once", () => {
    const a: Record<string, unknown> = { n: 1 };
    a.self = a;
    expect(sanitizeValue({ x: a, y: a })).toMatchObject({ cut: 0, nonFinite: 0 });
  });
});
