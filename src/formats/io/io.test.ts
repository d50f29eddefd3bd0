import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readLines } from "./lines.js";
import { streamJsonArray } from "./json-array.js";
import { parseJsonLenient, parsePythonLiteral } from "./lenient.js";
import { findInvalidUtf8 } from "./utf8.js";

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
