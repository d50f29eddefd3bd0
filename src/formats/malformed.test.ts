import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAll } from "./read.js";
import { main } from "../cli/main.js";

/**
 * Malformed input never stops a run: each generated case gives a diagnostic naming the file (and line where there is
 * one), what was lost is counted, and a valid file beside it is still read in full.
 */
const root = mkdtempSync(join(tmpdir(), "faultline-malformed-"));
const conv = (id: string, text = "hello") =>
  JSON.stringify({ id, model: "gpt-4o", messages: [{ role: "user", content: text }, { role: "assistant", content: "ok" }] });
const VALID = [conv("v1"), conv("v2"), conv("v3")].join("\n") + "\n";

interface Case {
  name: string;
  file: string;
  content: string | Buffer;
  /** Expected diagnostic: level, message pattern, line (undefined = no line expected). */
  expect: { level: "error" | "warning" | "notice"; message: RegExp; line?: number };
  /** Traces still read from the malformed file itself. */
  traces: number;
  /** Exit status of `faultline inspect` on the case folder (valid file included). */
  exit: 0 | 2;
}

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

const CASES: Case[] = [
  { name: "empty file", file: "empty.jsonl", content: "", expect: { level: "error", message: /empty file/, line: 1 }, traces: 0, exit: 2 },
  { name: "whitespace only", file: "blank.json", content: "  \n\n\t\n", expect: { level: "error", message: /empty file/, line: 1 }, traces: 0, exit: 2 },
  { name: "truncated last JSONL line", file: "trunc.jsonl", content: `${conv("a")}\n${conv("b")}\n${conv("c").slice(0, 40)}`, expect: { level: "error", message: /invalid JSON.*truncated/, line: 3 }, traces: 2, exit: 2 },
  { name: "invalid JSON in the middle", file: "mid.jsonl", content: `${conv("a")}\n{"id": "b", messages: oops}\n${conv("c")}\n`, expect: { level: "error", message: /invalid JSON/, line: 2 }, traces: 2, exit: 2 },
  { name: "bad UTF-8 on one line", file: "utf8.jsonl", content: bytes(`${conv("a")}\n`, [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a], `${conv("c")}\n`), expect: { level: "error", message: /invalid UTF-8/, line: 2 }, traces: 2, exit: 2 },
  { name: "bad UTF-8 in a JSON document", file: "utf8doc.json", content: bytes('{\n "messages": [\n  {"role": "user", "content": "', [0xc3, 0x28], '"}\n ]\n}\n'), expect: { level: "error", message: /invalid UTF-8/, line: 3 }, traces: 0, exit: 2 },
  { name: "wrong field type in a canonical trace", file: "types.jsonl", content: `${JSON.stringify({ schema: "faultline.trace/1", id: "t", source: { file: "x", format: "y", index: 0 }, agents: [], steps: "not-a-list" })}\n`, expect: { level: "error", message: /not a canonical trace: steps/, line: 1 }, traces: 0, exit: 2 },
  { name: "a record that is not a conversation", file: "notconv.jsonl", content: `${conv("a")}\n{"messages": "nope"}\n${conv("c")}\n`, expect: { level: "error", message: /not a chat conversation/, line: 2 }, traces: 2, exit: 2 },
  { name: "a JSONL line that is an array", file: "arrline.jsonl", content: `${conv("a")}\n[1,2,3]\n${conv("c")}\n`, expect: { level: "error", message: /not a chat conversation/, line: 2 }, traces: 2, exit: 2 },
  { name: "truncated JSON document", file: "truncdoc.json", content: '{"messages": [{"role": "user", "content": "hi"}, {"role": "assis', expect: { level: "error", message: /does not parse as JSON/ }, traces: 0, exit: 2 },
  { name: "truncated JSON array", file: "truncarr.json", content: '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "us', expect: { level: "error", message: /truncated JSON array/ }, traces: 1, exit: 2 },
  { name: "unrecognised JSON object", file: "unknown.json", content: '{"hello": "world", "n": 1}', expect: { level: "error", message: /unrecognised json file: no format matched; tried .*openai-chat/ }, traces: 0, exit: 2 },
  { name: "unrecognised JSONL", file: "unknown.jsonl", content: '{"a":1}\n{"a":2}\n', expect: { level: "error", message: /unrecognised jsonl file: no format matched/ }, traces: 0, exit: 2 },
  { name: "unrecognised JSON array", file: "numbers.json", content: "[1, 2, 3]", expect: { level: "error", message: /unrecognised json-array file/ }, traces: 0, exit: 2 },
  { name: "random zip", file: "random.zip", content: bytes([0x50, 0x4b, 0x03, 0x04], "garbage"), expect: { level: "error", message: /unrecognised zip file|cannot|does not parse/ }, traces: 0, exit: 2 },
  { name: "binary file", file: "blob.bin", content: bytes([0, 1, 2, 3, 0, 255]), expect: { level: "notice", message: /skipped: binary/ }, traces: 0, exit: 0 },
  { name: "markdown notes", file: "NOTES.md", content: "# notes\n\nnot a trace\n", expect: { level: "notice", message: /skipped: not a trace format/ }, traces: 0, exit: 0 },
  { name: "yaml config", file: "config.yaml", content: "model: gpt-4o\n", expect: { level: "notice", message: /skipped/ }, traces: 0, exit: 0 },
  { name: "plain text", file: "notes.txt", content: "just some words\n", expect: { level: "notice", message: /skipped/ }, traces: 0, exit: 0 },
  { name: "bare NaN is repaired with a warning", file: "nan.json", content: '{"model": "m", "score": NaN, "messages": [{"role": "user", "content": "hi"}]}', expect: { level: "warning", message: /repaired: replaced 1 bare NaN/ }, traces: 1, exit: 0 },
  { name: "NaN on a JSONL line", file: "nan.jsonl", content: `${conv("a")}\n{"id": "b", "x": NaN, "messages": [{"role": "user", "content": "hi"}]}\n`, expect: { level: "warning", message: /repaired/, line: 2 }, traces: 2, exit: 0 },
  { name: "byte-order mark", file: "bom.jsonl", content: bytes([0xef, 0xbb, 0xbf], `${conv("a")}\n${conv("b")}\n`), expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "CRLF line endings", file: "crlf.jsonl", content: `${conv("a")}\r\n${conv("b")}\r\n`, expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "blank lines between records", file: "gaps.jsonl", content: `\n${conv("a")}\n\n\n${conv("b")}\n\n`, expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "a very long line", file: "long.jsonl", content: `${conv("a", "x".repeat(5_000_000))}\n${conv("b")}\n`, expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "an element of an array of conversations is broken", file: "arrconv.json", content: `[${conv("a")},\n{"id": "b", "messages": [}],\n${conv("c")}]`, expect: { level: "error", message: /array element 1: invalid JSON/, line: 2 }, traces: 2, exit: 2 },
  { name: "only a JSON scalar", file: "scalar.json", content: "42", expect: { level: "notice", message: /skipped/ }, traces: 0, exit: 0 },
  { name: "string with NaN inside is not touched", file: "nanstr.jsonl", content: `${JSON.stringify({ id: "s", messages: [{ role: "user", content: "NaN Infinity" }] })}\n`, expect: { level: "notice", message: /.*/ }, traces: 1, exit: 0 },
  { name: "unterminated string at end of JSONL", file: "unterminated.jsonl", content: `${conv("a")}\n{"id": "b", "messages": [{"role": "user", "content": "abc`, expect: { level: "error", message: /invalid JSON/, line: 2 }, traces: 1, exit: 2 },
  // a leading "[" is not enough to make JSON: the first tokens decide (src/formats/io/json-start.ts)
  { name: "a text log whose lines open with [", file: "run.log", content: "[2023-06-25 20:16:55 INFO] server started\n[2023-06-25 20:16:56 WARN] disk 91% full\n", expect: { level: "notice", message: /skipped: not a trace format \(\.log\)/ }, traces: 0, exit: 0 },
  { name: "a pretty-printed array of conversations in a .txt file", file: "pretty.txt", content: JSON.stringify([JSON.parse(conv("p1")), JSON.parse(conv("p2"))], null, 2), expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "a one-line array of conversations in a .log file", file: "oneline.log", content: `[${conv("o1")}, ${conv("o2")}]`, expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
  { name: "duplicate ids across lines stay distinct", file: "dups.jsonl", content: `${conv("same")}\n${conv("same")}\n`, expect: { level: "notice", message: /.*/ }, traces: 2, exit: 0 },
];

describe("malformed input", () => {
  for (const c of CASES) {
    it(`${c.name}: diagnostic, counts, valid neighbour read, exit ${c.exit}`, async () => {
      const dir = join(root, c.file.replace(/\W/g, "_"));
      mkdirSync(dir, { recursive: true });
      const bad = join(dir, c.file);
      writeFileSync(bad, c.content);
      writeFileSync(join(dir, "valid.jsonl"), VALID);

      const { traces, diagnostics, files } = await readAll(dir);
      const own = diagnostics.filter((d) => d.file === bad);
      if (c.expect.level !== "notice" || c.expect.message.source !== ".*") {
        const hit = own.find((d) => d.level === c.expect.level && c.expect.message.test(d.message));
        expect(hit, `diagnostics were: ${JSON.stringify(own)}`).toBeDefined();
        if (c.expect.line !== undefined) expect(hit!.line).toBe(c.expect.line);
      }
      if (c.exit === 0) expect(own.filter((d) => d.level === "error")).toEqual([]);
      expect(traces.filter((t) => t.source.file === bad)).toHaveLength(c.traces);
      // the valid neighbour is always read in full
      expect(traces.filter((t) => t.source.file.endsWith("valid.jsonl")).map((t) => t.id)).toEqual(
        expect.arrayContaining(["v1", "v2", "v3"]),
      );
      // what was lost is counted in the file summary
      const summary = files.find((f) => f.path === bad)!;
      expect(summary.errors).toBe(own.filter((d) => d.level === "error").length);
      const lost = own.filter((d) => d.skipped === "line" || d.skipped === "record").length;
      expect(summary.skippedLines).toBe(lost);

      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
      let code: number;
      try {
        code = await main(["node", "faultline", "inspect", dir, "--json"]);
      } finally {
        process.stdout.write = write;
      }
      expect(code).toBe(c.exit);
      const doc = JSON.parse(out.join(""));
      expect(doc.totals.traces).toBe(c.traces + 3);
    });
  }

  it("has dozens of cases", () => expect(CASES.length).toBeGreaterThanOrEqual(24));

  it("a missing path is reported and the rest is still read", async () => {
    const dir = join(root, "missing-case");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "valid.jsonl"), VALID);
    const { traces, diagnostics } = await readAll([join(dir, "nope.jsonl"), dir]);
    expect(diagnostics.find((d) => /no such file/.test(d.message))?.file).toBe(join(dir, "nope.jsonl"));
    expect(traces).toHaveLength(3);
  });

  it("usage errors exit 1", async () => {
    const err = process.stderr.write.bind(process.stderr);
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      expect(await main(["node", "faultline", "inspect"])).toBe(1);
      expect(await main(["node", "faultline", "no-such-command"])).toBe(1);
      expect(await main(["node", "faultline", "inspect", root, "--format", "nope"])).toBe(1);
    } finally {
      process.stderr.write = err;
    }
  });
});
