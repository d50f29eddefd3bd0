import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { jsonAnswer, promptText, requestedCodes, startMockOpenAI, type MockReply, type MockRequest, type MockServer } from "../judge/testing/mock-openai-server.js";
import { Store } from "../store/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { DiagnosisSchema, type Diagnosis } from "../trace/index.js";

/*
 * End to end through the real CLI process (bin/faultline.js) against the mock OpenAI-compatible server: findings.jsonl
 * lines, exit status, the store-backed call cache across runs, a SIGKILL-ed run resuming, the dry run, analyze --judge.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = join(ROOT, "bin", "faultline.js");
const CHAT = join(ROOT, "examples", "chat");

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function startCli(args: string[]): { child: ChildProcess; exit: Promise<Exit> } {
  // No key in the child's environment: the mock needs none, and none must be required.
  const env = { ...process.env, OPENAI_API_KEY: "" };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<Exit>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, exit };
}

const cli = (args: string[]) => startCli(args).exit;
const readLines = (path: string): Diagnosis[] => readFileSync(path, "utf8").trim().split("\n").map((l) => DiagnosisSchema.parse(JSON.parse(l)));
const traceOf = (req: MockRequest) => /^Trace (\S+)$/m.exec(promptText(req.body))?.[1];
const present = (d: Diagnosis) => MAST_CODES.filter((c) => d.modes?.[c] === 1);

const FABRICATED = "I double-checked the seat map with the airline before confirming";
const REAL_QUOTE = "Your reservation ABC123 is now on UA180 at 18:00, seat 14C.";

/** chat-1: a verified 3.2 claim; chat-2: a 2.6 claim whose quote is in no step; chat-3: a 400 (when `failChat3`); rest: absent. */
function scripted(failChat3: () => boolean) {
  return (req: MockRequest): MockReply => {
    const codes = requestedCodes(req.body);
    switch (traceOf(req)) {
      case "chat-1":
        return { kind: "answer", content: jsonAnswer(codes, { "3.2": { steps: [8], evidence: [REAL_QUOTE], agent: "assistant", confidence: 0.7 } }, { taskSuccess: true }) };
      case "chat-2":
        return { kind: "answer", content: jsonAnswer(codes, { "2.6": { steps: [8], evidence: [FABRICATED], confidence: 0.9 } }) };
      case "chat-3":
        if (failChat3()) return { kind: "status", status: 400, body: { error: { message: "context_length_exceeded (scripted)", type: "invalid_request_error" } } };
        return { kind: "answer", content: jsonAnswer(codes) };
      default:
        return { kind: "answer", content: jsonAnswer(codes) };
    }
  };
}

let server: MockServer;
let failChat3 = true;
beforeAll(async () => {
  server = await startMockOpenAI({ responder: scripted(() => failChat3) });
});
afterAll(() => server.close());
beforeEach(() => {
  failChat3 = true;
  server.requests.splice(0);
});

describe("faultline judge against an OpenAI-compatible server", () => {
  const dir = mkdtempSync(join(tmpdir(), "fl-judge-cli-"));
  const out = join(dir, "out");
  const db = join(dir, "store.db");
  const prices = join(dir, "prices.json");
  writeFileSync(prices, JSON.stringify({ $comment: "test prices", "m*": { input_per_mtok: 2, output_per_mtok: 8 } }));
  const args = () => ["judge", CHAT, "--base-url", server.baseURL, "--model", "m", "--out", out, "--db", db, "--max-attempts", "1", "--concurrency", "3"];

  it("writes one line per trace, rejects fabricated evidence, records a failed trace and exits 2", async () => {
    const r = await cli(args());
    expect(r.stderr).toBe("");
    expect(r.code).toBe(2);
    expect(server.requests).toHaveLength(10);
    const lines = readLines(join(out, "findings.jsonl"));
    expect(lines.map((d) => d.trace_id)).toEqual(Array.from({ length: 10 }, (_, i) => `chat-${i + 1}`));
    expect(lines.every((d) => d.annotator === "llm:m")).toBe(true);

    const [c1, c2, c3] = lines;
    // chat-1: the judge's claim is verified against step 8 and labels 3.2.
    expect(present(c1!)).toEqual(["3.2"]);
    expect(c1!.findings).toEqual([expect.objectContaining({ mode: "3.2", steps: [8], evidence: REAL_QUOTE, detector: "llm:m", confidence: 0.7 })]);
    expect((c1!.signals.provenance as Record<string, string>)["3.2"]).toBe("judge");
    // chat-2: the fabricated quote is rejected and counted; 2.6 is not labelled. The rule finding (3.3) was shown as a
    // hint, judged absent (refuted), and kept by default with provenance "rules".
    const j2 = c2!.signals.judge as { rejectedClaims: number; rejected: { mode: string; quote?: string }[]; hints: { mode: string; status: string }[] };
    expect(j2.rejectedClaims).toBe(1);
    expect(j2.rejected[0]).toMatchObject({ mode: "2.6", quote: FABRICATED });
    // the rules' own 2.6 (an update reported although every update call failed) stands on its own evidence
    expect(c2!.findings.filter((f) => f.mode === "2.6").map((f) => f.detector)).toEqual(["rules/reasoning-action-mismatch"]);
    expect(j2.hints).toEqual([expect.objectContaining({ mode: "2.6", status: "unverified" }), expect.objectContaining({ mode: "3.3", status: "refuted" })]);
    expect(present(c2!)).toEqual(["2.6", "3.3"]);
    expect((c2!.signals.provenance as Record<string, string>)["3.3"]).toBe("rules");
    // chat-3: the provider refused: no vector, an error naming the call and the status.
    expect(c3!.modes).toBeNull();
    expect(c3!.error).toMatch(/call whole failed: client-error: HTTP 400/);
    // the outcome is the rules pipeline's (the dataset reward), not the judge's opinion
    expect(c1!.outcome.success).toBe(true);

    expect(r.stdout).toMatch(/calls\s+10 \(0 from the cache, 10 sent\)/);
    expect(r.stdout).toMatch(/evidence\s+1 claimed mode rejected/);
    expect(r.stdout).toMatch(/Not annotated \(1\)[^\n]*\n\s+chat-3\s+call whole failed/);
    expect(r.stdout).toMatch(/^model\s+traces\s+success/m); // the per-model table

    const store = new Store(db);
    try {
      const run = store.runs().find((x) => x.annotator === "llm:m")!;
      expect(run.trace_count).toBe(10);
      expect(store.diagnoses(run.id, "llm:m")).toHaveLength(10);
    } finally {
      store.close();
    }
  });

  it("a re-run sends only the calls that failed, then nothing at all; cost comes from the price table", async () => {
    failChat3 = false;
    const second = await cli([...args(), "--json", "--price-table", prices]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    expect(server.requests.map(traceOf)).toEqual(["chat-3"]);
    const doc = JSON.parse(second.stdout) as { judge: { totals: { calls: number; cachedCalls: number; costUsd: number; usage: { input: number; output: number } } } };
    expect(doc.judge.totals).toMatchObject({ calls: 10, cachedCalls: 9 });
    const u = doc.judge.totals.usage;
    expect(u.input).toBeGreaterThan(0);
    expect(doc.judge.totals.costUsd).toBeCloseTo((u.input * 2 + u.output * 8) / 1e6, 12);

    server.requests.splice(0);
    const third = await cli(args());
    expect(third.code).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(third.stdout).toMatch(/calls\s+10 \(10 from the cache, 0 sent\)/);
    // each trace is counted once (read, then annotated)
    expect(third.stdout).toMatch(/\n10 traces from 1 files \(10 annotated\)/);
    expect(readLines(join(out, "findings.jsonl")).every((d) => d.modes !== null)).toBe(true);
  });

  it("--cache FILE keeps the calls in a JSONL file instead of the store", async () => {
    failChat3 = false;
    const cacheFile = join(dir, "calls.jsonl");
    const a = [...args(), "--db", join(dir, "other.db"), "--cache", cacheFile];
    expect((await cli(a)).code).toBe(0);
    expect(server.requests).toHaveLength(10);
    expect(readFileSync(cacheFile, "utf8").trim().split("\n")).toHaveLength(10);
    server.requests.splice(0);
    expect((await cli(a)).code).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it("--redact adds a pattern and --keep switches a built-in kind off, in what would be sent", async () => {
    const r = await cli([...args(), "--dry-run", "--show-prompts", "--redact", "booking=ABC\\d+", "--keep", "email"]);
    expect(r.code).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(r.stdout).toContain("[REDACTED:booking]");
    expect(r.stdout).not.toMatch(/ABC123/);
    const bad = await cli([...args(), "--dry-run", "--redact", "booking=ABC("]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--redact booking=ABC\(: invalid regular expression/);
    expect((await cli([...args(), "--dry-run", "--keep", "phone"])).code).toBe(1);
  });

  it("--dry-run --json plans every call and sends nothing", async () => {
    const r = await cli([...args(), "--dry-run", "--json", "--window-tokens", "150"]);
    expect(r.code).toBe(0);
    expect(server.requests).toHaveLength(0);
    const doc = JSON.parse(r.stdout) as { traces: { trace_id: string; windows: number; input_tokens_estimate: number }[]; totals: { input_tokens_estimate: number } };
    expect(doc.traces.map((t) => t.trace_id)).toHaveLength(10);
    for (const t of doc.traces) {
      expect(t.windows).toBeGreaterThan(1); // 150-token windows split these traces
      expect(t.input_tokens_estimate).toBeGreaterThan(0);
    }
    expect(doc.totals.input_tokens_estimate).toBe(doc.traces.reduce((n, t) => n + t.input_tokens_estimate, 0));
  });

  it("refuses to run without --model, and a missing named key variable, with exit status 1", async () => {
    const noModel = await cli(["judge", CHAT, "--base-url", server.baseURL]);
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toMatch(/--model is required/);
    const noKey = await cli(["judge", CHAT, "--base-url", server.baseURL, "--model", "m", "--api-key-env", "FL_TEST_NO_SUCH_KEY"]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/FL_TEST_NO_SUCH_KEY/);
    expect(server.requests).toHaveLength(0);
  });
});

describe("faultline analyze --judge", () => {
  it("stores the rules diagnosis and writes the combined one with provenance per mode", async () => {
    failChat3 = false;
    const dir = mkdtempSync(join(tmpdir(), "fl-analyze-judge-"));
    const db = join(dir, "store.db");
    const r = await cli(["analyze", CHAT, "--judge", "--base-url", server.baseURL, "--model", "m", "--out", dir, "--db", db, "--max-attempts", "1"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = readLines(join(dir, "findings.jsonl"));
    expect(lines).toHaveLength(10);
    expect(lines.every((d) => d.annotator === "rules+llm:m")).toBe(true);
    const byId = new Map(lines.map((d) => [d.trace_id, d]));
    // chat-1: judge only; chat-2: rules only (the judge's fabricated 2.6 is rejected, the rules' own 2.6 stands);
    // rule signals stay at the top level
    expect(byId.get("chat-1")!.signals.provenance).toEqual({ "3.2": "judge" });
    expect(byId.get("chat-2")!.signals.provenance).toEqual({ "2.6": "rules", "3.3": "rules" });
    expect(byId.get("chat-2")!.signals).toHaveProperty("judge");
    expect(Object.keys(byId.get("chat-2")!.signals).length).toBeGreaterThan(3);

    const store = new Store(db);
    try {
      const run = store.runs().find((x) => x.annotator === "rules+llm:m")!;
      const rules = store.diagnoses(run.id, RULES_ANNOTATOR);
      const combined = store.diagnoses(run.id, "rules+llm:m");
      expect(rules).toHaveLength(10);
      expect(combined).toHaveLength(10);
      // every rule label is in the combined vector
      for (const d of rules) for (const c of present(d)) expect(byId.get(d.trace_id)!.modes![c]).toBe(1);
    } finally {
      store.close();
    }
  });
});

describe("SIGKILL and restart through the CLI", () => {
  let slow: MockServer;
  beforeAll(async () => {
    // Latency keeps calls in flight long enough to kill the process between them.
    slow = await startMockOpenAI({ latencyMs: 100 });
  });
  afterAll(() => slow.close());

  it("resumes from the store without repeating completed calls", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-judge-kill-"));
    const args = ["judge", CHAT, "--base-url", slow.baseURL, "--model", "m", "--out", dir, "--db", join(dir, "store.db"), "--window-tokens", "150", "--concurrency", "2", "--json"];
    const plan = JSON.parse((await cli([...args, "--dry-run"])).stdout) as { totals: { calls: number } };
    const total = plan.totals.calls;
    expect(total).toBeGreaterThan(20);

    const first = startCli(args);
    let completedAtKill = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (slow.completed().length >= 6) {
          clearInterval(timer);
          completedAtKill = slow.completed().length;
          first.child.kill("SIGKILL");
          resolve();
        }
      }, 5);
      void first.exit.then((e) => {
        clearInterval(timer);
        reject(new Error(`the CLI exited (${e.code}) before it could be killed: ${e.stderr}`));
      });
    });
    expect((await first.exit).signal).toBe("SIGKILL");
    const firstRequests = slow.requests.length;

    const second = await cli(args);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const doc = JSON.parse(second.stdout) as { judge: { totals: { calls: number; cachedCalls: number } } };
    const resumed = doc.judge.totals.cachedCalls;
    expect(doc.judge.totals.calls).toBe(total);
    // Calls answered before the kill are served from the store (a response in flight at the kill may be lost) …
    expect(resumed).toBeGreaterThanOrEqual(completedAtKill - 2);
    expect(resumed).toBeLessThan(total);
    // … and only the rest is sent again.
    expect(slow.requests.length - firstRequests).toBe(total - resumed);
    expect(readLines(join(dir, "findings.jsonl")).every((d) => d.modes !== null)).toBe(true);
  });
});
