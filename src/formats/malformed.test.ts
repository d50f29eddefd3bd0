import { execFileSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { lstat, readdir, readlink, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import { readAll } from "./read.js";
import { walkFiles, type WalkFs } from "./walk.js";
import { normalizeOtelId, toNanos } from "./otel/values.js";
import { main } from "../cli/main.js";
import { corpus } from "../testing/corpus.js";

// Tests run as root, where chmod 000 does not deny reads: a folder named `locked-EACCES` cannot be listed instead.
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const readdir = (async (path: Parameters<typeof real.readdir>[0], options?: unknown) => {
    if (String(path).endsWith("locked-EACCES"))
      throw Object.assign(new Error(`EACCES: permission denied, scandir '${String(path)}'`), { code: "EACCES", errno: -13, syscall: "scandir", path: String(path) });
    return (real.readdir as (p: unknown, o?: unknown) => Promise<unknown>)(path, options);
  }) as typeof real.readdir;
  return { ...real, readdir, default: { ...real, readdir } };
});

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
const utf16le = (s: string, bom = true) => Buffer.concat([Buffer.from(bom ? [0xff, 0xfe] : []), Buffer.from(s, "utf16le")]);
const utf16be = (s: string) => {
  const b = Buffer.from(s, "utf16le");
  b.swap16();
  return Buffer.concat([Buffer.from([0xfe, 0xff]), b]);
};
/** A pretty-printed conversation document: its user text ("hello there") is on line 7. */
const DOC = JSON.stringify({ id: "doc", model: "gpt-4o", messages: [{ role: "user", content: "hello there" }, { role: "assistant", content: "ok" }] }, null, 2);
const withNul = (text: string, at: number) => Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0]), Buffer.from(text.slice(at + 1))]);
const DEEP_OBJECT = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
const deepCall = (id: string) =>
  `{"id": "${id}", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "f", "arguments": ${DEEP_OBJECT}}}]}]}`;

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
  // a file named JSON that cannot be read as a trace is refused by name (exit 2), never skipped as text or binary
  { name: "only a JSON scalar", file: "scalar.json", content: "42", expect: { level: "error", message: /the document is a bare number \(42\), not an object or array/ }, traces: 0, exit: 2 },
  { name: "a JSON document that is null", file: "null.json", content: "null", expect: { level: "error", message: /the document is null/ }, traces: 0, exit: 2 },
  { name: "a JSON document that is a bare string", file: "string.json", content: '"just words"', expect: { level: "error", message: /the document is a bare string/ }, traces: 0, exit: 2 },
  { name: "a JSON file holding ]}", file: "closers.json", content: "]}", expect: { level: "error", message: /does not parse as JSON/ }, traces: 0, exit: 2 },
  { name: "binary content named .jsonl", file: "blob.jsonl", content: bytes([0x89, 0, 0xff, 3, 0, 0xfe, 0x10, 0x80, 0]), expect: { level: "error", message: /not JSON: binary content/ }, traces: 0, exit: 2 },
  { name: "binary content named .json", file: "blob.json", content: bytes([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]), expect: { level: "error", message: /not JSON: binary content/ }, traces: 0, exit: 2 },
  { name: "one NUL byte in a JSON document", file: "nul.json", content: withNul(DOC, DOC.indexOf("hello") + 2), expect: { level: "error", message: /does not parse as JSON \(.*a NUL byte\)/, line: 7 }, traces: 0, exit: 2 },
  { name: "one NUL byte on a JSONL line", file: "nul.jsonl", content: Buffer.concat([Buffer.from(`${conv("a")}\n`), withNul(conv("b"), 40), Buffer.from(`\n${conv("c")}\n`)]), expect: { level: "error", message: /invalid JSON/, line: 2 }, traces: 2, exit: 2 },
  { name: "a 50 MB garbage line", file: "garbage.jsonl", content: `${"x".repeat(50 * 1024 * 1024)}\n`, expect: { level: "error", message: /unrecognised jsonl file: it does not parse as JSON/, line: 1 }, traces: 0, exit: 2 },
  // gzip is read, decompressed; UTF-16 is decoded
  { name: "gzip-compressed JSONL (.jsonl.gz)", file: "runs.jsonl.gz", content: gzipSync(`${conv("a")}\n${conv("b")}\n`), expect: { level: "notice", message: /gzip-compressed: read decompressed/ }, traces: 2, exit: 0 },
  { name: "gzip-compressed JSON document (.json.gz)", file: "doc.json.gz", content: gzipSync(DOC), expect: { level: "notice", message: /gzip-compressed/ }, traces: 1, exit: 0 },
  { name: "gzip found by its magic bytes", file: "sniffed.jsonl", content: gzipSync(`${conv("a")}\n${conv("b")}\n`), expect: { level: "notice", message: /gzip-compressed/ }, traces: 2, exit: 0 },
  { name: "gzip that does not decompress", file: "broken.json.gz", content: bytes([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3], "not deflate data"), expect: { level: "error", message: /cannot open: damaged gzip data/ }, traces: 0, exit: 2 },
  { name: "UTF-16LE with a byte-order mark", file: "utf16le.jsonl", content: utf16le(`${conv("a")}\n${conv("b")}\n`), expect: { level: "notice", message: /decoded from UTF-16LE \(byte-order mark\)/ }, traces: 2, exit: 0 },
  { name: "UTF-16BE with a byte-order mark", file: "utf16be.json", content: utf16be(DOC), expect: { level: "notice", message: /decoded from UTF-16BE/ }, traces: 1, exit: 0 },
  { name: "UTF-16LE without a byte-order mark", file: "utf16nobom.jsonl", content: utf16le(`${conv("a")}\n${conv("b")}\n`, false), expect: { level: "notice", message: /decoded from UTF-16LE \(no byte-order mark/ }, traces: 2, exit: 0 },
  // one bad value loses only itself
  { name: "a number too large for a double (1e400)", file: "huge.jsonl", content: `${conv("a")}\n{"id": "b", "score": 1e400, "messages": [{"role": "user", "content": "hi"}]}\n`, expect: { level: "warning", message: /replaced 1 number\(s\) too large for a double/, line: 2 }, traces: 2, exit: 0 },
  { name: "a value nested 100 000 levels deep", file: "deep.jsonl", content: `${conv("a")}\n${deepCall("b")}\n${conv("c")}\n`, expect: { level: "warning", message: /cut 1 value\(s\) nested deeper than 512 levels/, line: 2 }, traces: 3, exit: 0 },
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

/** Runs `faultline <args>` in-process; returns the exit status and what went to stdout. */
async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  // the table and summary go through console.log, which the test runner intercepts before stdout
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(`${a.map(String).join(" ")}\n`));
  try {
    const code = await main(["node", "faultline", ...args]);
    return { code, out: out.join("") };
  } finally {
    process.stdout.write = write;
    process.stderr.write = err;
    log.mockRestore();
  }
}

const fresh = (name: string) => {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  return d;
};
const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TAU2 = corpus("tau2-bench", "2025-10-05T07-52-52.930199_telecom_llm_agent_grok-3_user_simulator_grok-3.json");

describe("corrupt files are refused by name, never skipped quietly (issue 12.1)", () => {
  it("a real tau2 file with a NUL at byte 100 is refused like one with the NUL past 64 KiB: exit 2, named in the summary", async () => {
    const dir = fresh("tau2-nul");
    const real = readFileSync(TAU2);
    for (const [name, at] of [["early.json", 100], ["late.json", 100_000]] as const) {
      const b = Buffer.from(real);
      b[at] = 0;
      writeFileSync(join(dir, name), b);
    }
    const { traces, diagnostics, files } = await readAll(dir);
    expect(traces).toHaveLength(0);
    for (const name of ["early.json", "late.json"]) {
      const d = diagnostics.find((x) => x.file === join(dir, name) && x.level === "error");
      expect(d?.message, name).toMatch(/does not parse as JSON .*a NUL byte/);
      expect(d?.line).toBeGreaterThan(0);
      expect(files.find((f) => f.path === join(dir, name))?.role).toBe("refused");
    }
    const text = await cli("inspect", dir);
    expect(text.code).toBe(2);
    // the closing summary names every input that was not read, however many diagnostics scrolled by
    expect(text.out.trim().split("\n").at(-1)).toMatch(/^Not read \(2\): .*early\.json, .*late\.json$/);
    // -v is not needed to see them
    expect(text.out).toMatch(/error .*early\.json:\d+ .*NUL byte/);
  });

  it("a damaged gzip gives what precedes the damage and an error", async () => {
    const dir = fresh("gzip-damaged");
    // incompressible text, so half the compressed bytes hold many whole lines
    const lines = Array.from({ length: 200 }, (_, i) => conv(`g${i}`, createHash("sha256").update(String(i)).digest("hex").repeat(8)));
    const gz = gzipSync(lines.join("\n") + "\n");
    writeFileSync(join(dir, "cut.jsonl.gz"), gz.subarray(0, gz.length >> 1));
    const { traces, diagnostics } = await readAll(dir);
    expect(traces.length).toBeGreaterThan(50);
    expect(traces.length).toBeLessThan(200);
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", message: expect.stringMatching(/damaged gzip data/) }));
  });
});

describe("pipes and process substitution (issue 12.2)", () => {
  it("a named pipe given as an argument is read as a stream", async () => {
    const dir = fresh("fifo-given");
    const src = join(dir, "source.txt");
    writeFileSync(src, VALID);
    const fifo = join(dir, "run.jsonl");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", 'cat "$1" > "$2"', "sh", src, fifo], { stdio: "ignore" });
    try {
      const { traces, files } = await Promise.race([readAll(fifo), new Promise<never>((_, no) => setTimeout(() => no(new Error("blocked reading the pipe")), 10_000))]);
      expect(files.map((f) => [f.path, f.traces])).toEqual([[fifo, 3]]);
      expect(traces.map((t) => t.id)).toEqual(["v1", "v2", "v3"]);
    } finally {
      // a writer nobody read from would wait forever
      if (writer.exitCode === null) writer.kill();
    }
  });

  it("a named pipe inside a folder is skipped with a notice naming it, without blocking", async () => {
    const dir = fresh("fifo-inside");
    writeFileSync(join(dir, "valid.jsonl"), VALID);
    const fifo = join(dir, "pipe.jsonl");
    execFileSync("mkfifo", [fifo]);
    const { traces, diagnostics } = await readAll(dir);
    expect(traces).toHaveLength(3);
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "notice", file: fifo, message: expect.stringMatching(/skipped: named pipe \(FIFO\) inside a folder/) }));
    const r = await cli("inspect", dir, "-v");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/notice .*pipe\.jsonl +skipped: named pipe/);
  });

  it("`faultline inspect <(cat run.jsonl)` reads the /dev/fd pipe", () => {
    const dir = fresh("procsub");
    const file = join(dir, "run.jsonl");
    writeFileSync(file, VALID);
    const out = execFileSync("bash", ["-c", `"${process.execPath}" bin/faultline.js inspect --json <(cat "${file}")`], { cwd: REPO, encoding: "utf8" });
    const doc = JSON.parse(out);
    expect(doc.totals).toMatchObject({ files: 1, traces: 3, errors: 0 });
    expect(doc.files[0].path).toMatch(/^\/(dev|proc\/self)\/fd\/\d+$/);
  });
});

describe("symlinks: each real file once, loops named (issue 12.3)", () => {
  it("mkdir d; cp 47.json d/; ln -s . d/self: one trace, a warning naming the loop, no error", async () => {
    const d = fresh("loop/d");
    copyFileSync(corpus("who_and_when", "Hand-Crafted", "47.json"), join(d, "47.json"));
    symlinkSync(".", join(d, "self"));
    // a second name for the same file is read once too
    symlinkSync("47.json", join(d, "link.json"));
    const { traces, diagnostics, files } = await readAll(d);
    expect(traces).toHaveLength(1);
    expect(files.map((f) => f.path)).toEqual([join(d, "47.json")]);
    expect(diagnostics.filter((x) => x.level === "error")).toEqual([]);
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "warning", file: join(d, "self"), message: expect.stringMatching(/symlink loop: .*self leads back to .*d\b/) }));
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "notice", file: join(d, "link.json"), message: expect.stringMatching(/same file as .*47\.json/) }));
    const r = await cli("inspect", d, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).totals).toMatchObject({ files: 1, traces: 1, errors: 0, warnings: 1 });
  });
});

describe("an unreadable folder is one per-path error; the rest is read (issue 12.4)", () => {
  const eacces = (p: string) => Object.assign(new Error(`EACCES: permission denied, scandir '${p}'`), { code: "EACCES" });

  it("walker: a readdir that fails is reported for that folder and the walk goes on", async () => {
    const base = fresh("eacces-unit");
    for (const sub of ["a", "b"]) {
      mkdirSync(join(base, sub), { recursive: true });
      writeFileSync(join(base, sub, "x.jsonl"), VALID);
    }
    const fs: WalkFs = {
      stat,
      lstat,
      readlink,
      readdir: (async (p: string, o: { withFileTypes: true }) => {
        if (p === join(base, "a")) throw eacces(p);
        return readdir(p, o);
      }) as WalkFs["readdir"],
    };
    const w = await walkFiles([base], fs);
    expect(w.files).toEqual([join(base, "b", "x.jsonl")]);
    expect(w.diagnostics).toEqual([{ level: "error", file: join(base, "a"), message: expect.stringMatching(/^cannot read folder: EACCES: permission denied/), skipped: "file" }]);
  });

  it("inspect: exit 2 naming the folder, every readable file reported", async () => {
    const base = fresh("eacces-cli");
    mkdirSync(join(base, "locked-EACCES"), { recursive: true });
    writeFileSync(join(base, "locked-EACCES", "hidden.jsonl"), VALID);
    writeFileSync(join(base, "valid.jsonl"), VALID);
    const r = await cli("inspect", base, "--json");
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.out);
    expect(doc.totals).toMatchObject({ files: 1, traces: 3, errors: 1 });
    expect(doc.files).toContainEqual(expect.objectContaining({ path: join(base, "locked-EACCES"), format: "unreadable", role: "refused", errors: [{ line: null, message: expect.stringMatching(/EACCES/) }] }));
    const text = await cli("inspect", base);
    expect(text.out).toMatch(/Not read \(1\): .*locked-EACCES/);
  });

  it.skipIf(process.getuid?.() === 0)("with real permissions (chmod 000; skipped as root, where reads are not denied)", async () => {
    const base = fresh("eacces-real");
    mkdirSync(join(base, "closed"), { recursive: true });
    writeFileSync(join(base, "closed", "x.jsonl"), VALID);
    writeFileSync(join(base, "valid.jsonl"), VALID);
    chmodSync(join(base, "closed"), 0o000);
    try {
      const { traces, diagnostics } = await readAll(base);
      expect(traces).toHaveLength(3);
      expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", file: join(base, "closed"), message: expect.stringMatching(/EACCES/) }));
    } finally {
      chmodSync(join(base, "closed"), 0o755);
    }
  });
});

describe("dropped steps are counted and reported; one bad value loses only what it touches (issue 12.5)", () => {
  it("mini-swe-agent: a message whose role is null / {} / false is a skipped step with file and line", async () => {
    const dir = fresh("mini-roles");
    const file = join(dir, "demo__demo-1.traj.json");
    const bash = (cmd: string) => `THOUGHT: run it\n\n\`\`\`bash\n${cmd}\n\`\`\``;
    const obs = (out: string) => `<returncode>0</returncode>\n<output>\n${out}\n</output>`;
    const doc = {
      info: { exit_status: "Submitted", mini_version: "1.0.0", config: { model: { model_name: "gpt-4o" } } },
      trajectory_format: "mini-swe-agent-1",
      instance_id: "demo__demo-1",
      messages: [
        { role: "system", content: "You are a helpful assistant" },
        { role: "user", content: "<pr_description>\nConsider the following PR description:\nFix it\n</pr_description>" },
        { role: null, content: bash("ls") },
        { role: "user", content: obs("a.py") },
        { role: {}, content: bash("cat a.py") },
        { role: "user", content: obs("print(1)") },
        { role: "assistant", content: bash("python a.py") },
        { role: false, content: obs("1") },
      ],
    };
    const text = JSON.stringify(doc, null, 2);
    writeFileSync(file, text);
    // the line where each bad message opens (the "{" just above its role)
    const lineOf = (needle: string) => text.split("\n").findIndex((l) => l.includes(needle));
    const { traces, diagnostics, files } = await readAll(file);
    expect(traces).toHaveLength(1);
    const dropped = diagnostics.filter((d) => d.skipped === "step");
    expect(dropped.map((d) => [d.level, d.file, d.line, d.message.match(/\/messages\/\d+ has role \S+/)?.[0]])).toEqual([
      ["error", file, lineOf('"role": null'), "/messages/2 has role null,"],
      ["error", file, lineOf('"role": {}'), "/messages/4 has role {},"],
      ["error", file, lineOf('"role": false'), "/messages/7 has role false,"],
    ]);
    expect(files[0]!.skippedSteps).toBe(3);
    // the one good call is still a call, its result not taken for the user's words
    expect(traces[0]!.steps.filter((s) => s.kind === "tool_call").map((s) => s.text)).toEqual(["python a.py"]);
    const r = await cli("inspect", file, "--json");
    expect(r.code).toBe(2);
    const out = JSON.parse(r.out);
    expect(out.files[0].skipped_steps).toBe(3);
    expect(out.totals.skipped_steps).toBe(3);
  });

  it("Codex rollout: payload.type 0 is a skipped step with its line", async () => {
    const dir = fresh("codex-type0");
    const file = join(dir, "rollout-2026-02-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-00000000000a.jsonl");
    const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: "2026-02-01T10:00:00.000Z", type, payload });
    writeFileSync(
      file,
      [
        line("session_meta", { id: "0199aaaa-bbbb-7ccc-8ddd-00000000000a", originator: "codex_exec" }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Begin" }] }),
        line("turn_context", { model: "gpt-5" }),
        line("response_item", { type: 0, name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
        line("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] }),
      ].join("\n") + "\n",
    );
    const { traces, diagnostics, files } = await readAll(file);
    expect(traces).toHaveLength(1);
    expect(diagnostics.filter((d) => d.skipped === "step")).toEqual([{ level: "error", file, line: 4, message: expect.stringMatching(/payload\.type 0, not a string; step skipped/), skipped: "step" }]);
    expect(files[0]!.skippedSteps).toBe(1);
    expect((await cli("inspect", file)).out).toMatch(/skipped 0 lines\/records, 1 steps and 0 traces/);
  });

  it("OTel: 1e400 in one span of a real 10-trace dump loses at most that span", async () => {
    const dir = fresh("otel-1e400");
    const text = readFileSync(corpus("otel-genai-vercel", "all-spans.json"), "utf8");
    const time = text.replace(/("startTime": \[\s*)\d+/, "$11e400");
    const id = text.replace(/"spanId": "d3661934fbcf93fd"/, '"spanId": 1e400');
    expect(time).not.toBe(text);
    expect(id).not.toBe(text);
    writeFileSync(join(dir, "time.json"), time);
    writeFileSync(join(dir, "id.json"), id);
    const { traces, diagnostics } = await readAll(dir);
    const of = (name: string) => traces.filter((t) => t.source.file === join(dir, name));
    // a time that is no number: the span stays, without that time
    expect(of("time.json")).toHaveLength(10);
    // an id that is no id: that span (the only one of its trace) is refused, the other nine traces are read
    expect(of("id.json")).toHaveLength(9);
    expect(diagnostics.filter((d) => d.level === "error").map((d) => d.file)).toEqual([join(dir, "id.json")]);
    expect(diagnostics.some((d) => /BigInt|reader failed/.test(d.message))).toBe(false);
    // the value readers never throw on such numbers
    expect(toNanos([1e400, 0])).toBeUndefined();
    expect(toNanos([Infinity, 0])).toBeUndefined();
    expect(normalizeOtelId(Infinity, 8)).toBeUndefined();
    expect(normalizeOtelId(1.5, 8)).toBeUndefined();
  });

  it("a 100 000-deep value inside a JSON string (tool arguments) is cut in the trace, so nothing downstream overflows", async () => {
    const dir = fresh("deep-string");
    const rec = { id: "s1", messages: [{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: DEEP_OBJECT } }] }] };
    writeFileSync(join(dir, "runs.jsonl"), `${JSON.stringify(rec)}\n${conv("s2")}\n`);
    const { traces, diagnostics } = await readAll(dir);
    expect(traces.map((t) => t.id)).toEqual(["s1", "s2"]);
    expect(() => JSON.stringify(traces[0])).not.toThrow();
    expect(diagnostics.filter((d) => d.level === "error")).toEqual([]);
  });
});

describe("trace ids are stable per (file, position) whatever else is read (issue 12.6)", () => {
  const idsOf = async (paths: string[], file: string) => (await readAll(paths)).traces.filter((t) => t.source.file === file).map((t) => t.id);

  it("malformed copies read first give the real file's clashing traces `<id>@<its path>`, the same however many copies there are", async () => {
    const base = fresh("ids");
    const realDir = join(base, "real");
    mkdirSync(realDir, { recursive: true });
    const real = join(realDir, "runs.jsonl");
    const lines = [conv("r1"), conv("r2"), conv("r1"), conv("r3")];
    writeFileSync(real, lines.join("\n") + "\n");
    // malformed copies: the same runs, the last line cut off
    const copy = lines.slice(0, 3).join("\n") + "\n" + lines[3]!.slice(0, 30);
    for (const [folder, names] of [["one-copy", ["a.jsonl"]], ["two-copies", ["a.jsonl", "b.jsonl"]]] as const) {
      mkdirSync(join(base, folder), { recursive: true });
      for (const n of names) writeFileSync(join(base, folder, n), copy);
    }
    const alone = await idsOf([realDir], real);
    expect(alone).toEqual(["r1", "r2", "r1#2", "r3"]);
    const afterOne = await idsOf([join(base, "one-copy"), realDir], real);
    const afterTwo = await idsOf([join(base, "two-copies"), realDir], real);
    expect(afterTwo).toEqual(afterOne);
    expect(afterOne).toEqual(["r1@runs.jsonl", "r2@runs.jsonl", "r1@runs.jsonl#2", "r3"]);
    // read first, the real file keeps its ids whatever follows
    expect(await idsOf([realDir, join(base, "two-copies")], real)).toEqual(alone);
    // every id of a read is unique, and the format's own id is kept
    const all = (await readAll([join(base, "two-copies"), realDir])).traces;
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length);
    expect(all.find((t) => t.id === "r1@runs.jsonl")?.metadata.originalId).toBe("r1");
    expect(all.filter((t) => t.source.file === join(base, "two-copies", "b.jsonl")).map((t) => t.id)).toEqual(["r1@b.jsonl", "r2@b.jsonl", "r1@b.jsonl#2"]);
  });

  it("a real tau2 file keeps its ids when read alone and gets path ids, not counters, after a malformed copy", async () => {
    const base = fresh("ids-tau2");
    const realDir = join(base, "tau2-bench");
    mkdirSync(realDir, { recursive: true });
    const real = join(realDir, "run.json");
    copyFileSync(TAU2, real);
    const copies = join(base, "aaa-copies");
    mkdirSync(copies, { recursive: true });
    copyFileSync(TAU2, join(copies, "copy1.json"));
    copyFileSync(TAU2, join(copies, "copy2.json"));
    const alone = await idsOf([realDir], real);
    expect(alone.length).toBe(5);
    expect(alone.every((id) => !/[#@]/.test(id))).toBe(true);
    expect(await idsOf([copies, realDir], real)).toEqual(alone.map((id) => `${id}@run.json`));
  });
});
