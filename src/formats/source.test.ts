import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../testing/corpus.js";
import { startsLikeJson } from "./io/json-start.js";
import { openSource } from "./source.js";
import type { Diagnostic } from "./types.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-source-"));
const sniff = async (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  const diagnostics: Omit<Diagnostic, "file">[] = [];
  const src = await openSource(path, { options: {}, report: (d) => diagnostics.push(d) });
  return { ...src.sample, diagnostics };
};
const records = [{ role: "user", content: "hi [x]" }, { role: "assistant", content: "ok" }];

describe("openSource: JSON or text when a file opens with [", () => {
  it("a text log whose first line opens with a [timestamp] is text", async () => {
    expect((await sniff("run.log", "[2023-25-06 20:16:55 INFO] **[Preprocessing]**\n\n[2023-25-06 20:16:56 INFO] x\n")).kind).toBe("text");
    expect((await sniff("svc.txt", "[INFO] server started\n[WARN] disk full\n")).kind).toBe("text");
    expect((await sniff("nolog", "[\nnot json at all\n")).kind).toBe("text");
    expect((await sniff("tmpl.txt", "{{ user.name }} said hello\n")).kind).toBe("text");
  });

  it("a real ChatDev WareHouse log is text", async () => {
    const path = corpus("chatdev", "WareHouse", "Maze_THUNLP_20231006154305", "maze_DefaultOrganization_20231006154305.log");
    const src = await openSource(path, { options: {}, report: () => {} });
    expect(src.sample.kind).toBe("text");
  });

  it("a pretty-printed JSON array is json-array, whatever the file is called", async () => {
    for (const name of ["pretty.json", "pretty.log", "pretty"]) {
      const s = await sniff(name, JSON.stringify(records, null, 2));
      expect(s.kind, name).toBe("json-array");
      expect(s.records).toEqual(records);
    }
  });

  it("a JSON array on one line is json-array, and arrays one per line are JSONL", async () => {
    const one = await sniff("one.txt", JSON.stringify(records));
    expect(one.kind).toBe("json-array");
    expect(one.records).toEqual(records);
    const lines = await sniff("lines.log", `${JSON.stringify(records)}\n${JSON.stringify(records)}\n`);
    expect(lines.kind).toBe("jsonl");
    expect(lines.records).toEqual([records, records]);
  });

  it("a broken file named .json stays JSON, so its parse error is reported rather than skipped as text", async () => {
    const s = await sniff("broken.json", "[2023-25-06 not json]\n");
    expect(s.kind).toBe("json-array");
  });
});

describe("startsLikeJson", () => {
  it("accepts a prefix of JSON cut anywhere, bare NaN/Infinity, and stops at the first complete value", () => {
    const doc = JSON.stringify({ a: [1, -2.5e3, true, null, "x\\\"y"], b: { c: "[INFO]" } });
    for (let cut = 1; cut <= doc.length; cut++) expect(startsLikeJson(doc.slice(0, cut)), doc.slice(0, cut)).toBe(true);
    expect(startsLikeJson("[NaN, -Infinity]")).toBe(true);
    expect(startsLikeJson("[1] and then prose")).toBe(true);
  });

  it("rejects tokens that cannot be JSON within the first line", () => {
    for (const t of ["[2023-25-06 20:16:55 INFO] x", "[INFO] x", "[ERROR]", "[1 2]", "{'a': 1}", "{a: 1}", '{"a" 1}', "[tru]", '["a\nb"]'])
      expect(startsLikeJson(t), t).toBe(false);
  });

  it("judges only the first lines: a break further down is left to the reader", () => {
    expect(startsLikeJson('[\n  {\n    "a": 1\n  },\n  oops\n]')).toBe(true);
    expect(startsLikeJson("[\n  oops\n]")).toBe(false);
  });
});
