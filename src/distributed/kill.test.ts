import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { absentResponder, startMockOpenAI, type MockServer } from "../judge/testing/mock-openai-server.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { PgStore } from "../store/index.js";
import { freshDatabase } from "../testing/pg.js";
import { submit } from "./index.js";

const REPO = resolve(import.meta.dirname, "../..");
const TRACES = 1000;
const children: ChildProcess[] = [];
let mock: MockServer | undefined;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await mock?.close();
});

/** 1,000 distinct chat traces (the example booking agent's ten, each made unique), one JSONL file. */
function thousandTraces(dir: string): string {
  const base = readFileSync(join(REPO, "examples/chat/booking-agent.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; messages: { role: string; content: unknown }[] });
  const lines: string[] = [];
  for (let i = 0; i < TRACES; i++) {
    const t = structuredClone(base[i % base.length]!);
    t.id = `kill-${i}`;
    const user = t.messages.find((m) => m.role === "user");
    if (user && typeof user.content === "string") user.content = `${user.content} (request ${i})`;
    lines.push(JSON.stringify(t));
  }
  const file = join(dir, "traces.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

const waitFor = async (cond: () => boolean | Promise<boolean>, what: string, ms = 240_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

const exited = (c: ChildProcess) => new Promise<number | null>((r) => (c.exitCode !== null ? r(c.exitCode) : c.once("exit", (code) => r(code))));

it("3 workers, 1,000 traces, one worker SIGKILLed midway: every trace diagnosed and judged once, every judge call paid once", async () => {
  const url = await freshDatabase("kill");
  const dir = mkdtempSync(join(tmpdir(), "faultline-kill-"));
  const file = thousandTraces(dir);
  // while the gate is closed the mock holds its answers: the kill falls while the victim's calls wait at the endpoint
  let gate: Promise<void> = Promise.resolve();
  mock = await startMockOpenAI({ latencyMs: 20, responder: async (req) => (await gate, absentResponder(req)) });
  const model = "mock-judge";
  const { runId, submitted } = await submit([file], {
    db: url,
    spec: { annotator: `llm:${model}`, rulesAnnotator: RULES_ANNOTATOR, judge: { baseUrl: mock.baseURL, model } },
    name: "kill",
    policy: { jobTimeout: 10, retryDelay: 1 },
  });
  expect(submitted).toBe(TRACES);

  const stderr: string[] = ["", "", ""];
  for (let i = 0; i < 3; i++) {
    const c = spawn(process.execPath, [join(REPO, "bin", "faultline.js"), "worker", "--db", url, "--concurrency", "4", "--exit-when-idle", "--maintenance-interval", "1"], {
      cwd: REPO,
      stdio: ["ignore", "ignore", "pipe"],
    });
    c.stderr!.on("data", (d: Buffer) => (stderr[i] += d.toString()));
    children.push(c);
  }
  const [victim, ...survivors] = children as [ChildProcess, ChildProcess, ChildProcess];
  await waitFor(() => mock!.completed().length >= TRACES * 0.3, "30 % of the judge calls");
  let open!: () => void;
  gate = new Promise<void>((r) => (open = r));
  await new Promise((r) => setTimeout(r, 300)); // answers already on their way are received and cached
  victim.kill("SIGKILL");
  const atKill = { received: mock.requests.length, completed: mock.completed().length };
  await exited(victim);
  await new Promise((r) => setTimeout(r, 300)); // the mock sees the victim's connections close
  open();
  gate = Promise.resolve();
  const codes = await Promise.all(survivors.map(exited));
  expect(codes, stderr.join("\n")).toEqual([0, 0]);
  expect(atKill.completed).toBeLessThan(TRACES);

  const store = new PgStore(url);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    // every trace diagnosed exactly once by the rules and by the judge, with its findings stored once
    const rows = (await c.query<{ annotator: string; n: number; distinct_traces: number }>("SELECT annotator, count(*)::int AS n, count(DISTINCT trace_id)::int AS distinct_traces FROM diagnoses WHERE run_id = $1 GROUP BY annotator ORDER BY annotator", [runId])).rows;
    expect(rows).toEqual([
      { annotator: `llm:${model}`, n: TRACES, distinct_traces: TRACES },
      { annotator: RULES_ANNOTATOR, n: TRACES, distinct_traces: TRACES },
    ]);
    const findings = (await c.query<{ stored: number; recorded: number }>(
      "SELECT (SELECT count(*)::int FROM findings WHERE run_id = $1) AS stored, (SELECT coalesce(sum(json_array_length((diagnosis::json)->'findings')), 0)::int FROM diagnoses WHERE run_id = $1) AS recorded",
      [runId],
    )).rows[0]!;
    expect(findings.stored).toBe(findings.recorded);
    // the victim really died holding jobs: they were taken back and retried by the others
    const retried = (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'faultline-judge' AND retry_count > 0")).rows[0]!.n;
    expect(retried).toBeGreaterThan(0);
    // one answered judge call per trace: nothing the victim was answered was paid again
    expect(mock.completed().length).toBe(TRACES);
    expect((await store.run(runId))?.status).toBe("complete");
    expect(await store.progress(runId)).toEqual({ queued: 0, running: 0, done: TRACES, failed: 0 });
    console.log(
      `kill test: killed at ${atKill.completed} answered calls; ${retried} jobs retried; ${mock.completed().length} calls answered in all, ${mock.requests.length} received (${mock.requests.length - mock.completed().length} of the victim's left unanswered)`,
    );
  } finally {
    await c.end();
    await store.close();
  }
}, 300_000);
