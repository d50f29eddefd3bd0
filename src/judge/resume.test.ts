import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonlFileCache, sha256, stableStringify } from "./cache.js";
import { OpenAIChatModel } from "./client.js";
import { planJudgement } from "./judge.js";
import { resumeOptions, resumeTraces } from "./testing/resume-child.js";
import { startMockOpenAI, type MockServer } from "./testing/mock-openai-server.js";

const CHILD = fileURLToPath(new URL("./testing/resume-child.ts", import.meta.url));

let server: MockServer;
beforeAll(async () => {
  // Latency keeps calls in flight long enough to kill the child between them.
  server = await startMockOpenAI({ latencyMs: 120 });
});
afterAll(() => server.close());

function startChild(env: Record<string, string>): { child: ChildProcess; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })));
  return { child, exit };
}

const requestHash = (body: { messages?: unknown }) => sha256(stableStringify(body.messages));

describe("SIGKILL and restart", () => {
  it("finishes without repeating the calls that completed before the kill", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-resume-"));
    const env = { FL_BASE_URL: server.baseURL, FL_CACHE: join(dir, "calls.jsonl"), FL_OUT: join(dir, "findings.jsonl") };
    const planModel = new OpenAIChatModel({ baseURL: server.baseURL, model: "resume-model" }, { env: {} });
    const totalCalls = resumeTraces().reduce((n, t) => n + planJudgement(t, [], resumeOptions(planModel)).calls.length, 0);
    expect(totalCalls).toBeGreaterThanOrEqual(8);

    // Run 1: kill -9 once a few responses have gone out.
    const first = startChild(env);
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (server.completed().length >= 4) {
          clearInterval(timer);
          first.child.kill("SIGKILL");
          resolve();
        }
      }, 5);
      void first.exit.then(({ code, stderr }) => {
        clearInterval(timer);
        reject(new Error(`child exited (${code}) before it could be killed: ${stderr}`));
      });
    });
    const killed = await first.exit;
    expect(killed.signal).toBe("SIGKILL");
    const firstRequests = server.requests.length;

    const cache = await JsonlFileCache.open(env.FL_CACHE);
    const done = cache.size;
    const doneHashes = new Set<string>();
    for (const line of readFileSync(env.FL_CACHE, "utf8").split("\n")) {
      try {
        doneHashes.add((JSON.parse(line) as { requestHash: string }).requestHash);
      } catch {
        // a line torn by the kill: not a completed call
      }
    }
    await cache.close();
    expect(done).toBeGreaterThanOrEqual(1);
    expect(done).toBeLessThan(totalCalls);
    expect(firstRequests).toBeGreaterThanOrEqual(done);

    // Run 2: resumes from the cache.
    const second = startChild(env);
    const finished = await second.exit;
    expect(finished.stderr).toBe("");
    expect(finished.code).toBe(0);
    const secondRequests = server.requests.slice(firstRequests);
    expect(secondRequests).toHaveLength(totalCalls - done);
    for (const r of secondRequests) expect(doneHashes.has(requestHash(r.body))).toBe(false);

    const lines = readFileSync(env.FL_OUT, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { trace_id: string; modes: unknown; signals: { judge: { cachedCalls: number } } });
    expect(lines.map((l) => l.trace_id)).toEqual(["resume-0", "resume-1", "resume-2", "resume-3"]);
    expect(lines.every((l) => l.modes !== null)).toBe(true);
    expect(lines.reduce((n, l) => n + l.signals.judge.cachedCalls, 0)).toBe(done);
  });
});
