import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { mast } from "../taxonomy/index.js";
import { corpus } from "../testing/corpus.js";
import { buildTrace, DiagnosisSchema, type Finding, type Trace } from "../trace/index.js";
import { JsonlFileCache, MemoryCache } from "./cache.js";
import { OpenAIChatModel, type ProviderConfig } from "./client.js";
import { addToTotals, dryRunReport, emptyTotals, judgeTrace, judgeTraces, planJudgement, plannedMessages, type JudgeOptions, type JudgeSignals } from "./judge.js";
import { Pool } from "./pool.js";
import { estimateTokens } from "./render.js";
import { jsonAnswer, mastAnswer, promptText, requestedCodes, startMockOpenAI, type MockRequest, type MockServer } from "./testing/mock-openai-server.js";

let server: MockServer;
beforeAll(async () => {
  server = await startMockOpenAI();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.splice(0);
  server.setResponder((req) => ({ kind: "answer", content: jsonAnswer(requestedCodes(req.body)) }));
});

const model = (cfg: Partial<ProviderConfig> = {}, pool?: Pool) =>
  new OpenAIChatModel({ baseURL: server.baseURL, model: "judge-model", backoff: { initialMs: 5, maxMs: 20 }, maxAttempts: 2, timeoutMs: 5000, ...cfg }, { env: {}, pool });

const opts = (extra: Partial<JudgeOptions> = {}): JudgeOptions => ({ model: model(), ...extra });
const judgeOf = (d: { signals: Record<string, unknown> }) => d.signals.judge as JudgeSignals;

/** A small run: the agent announces a test run, never runs it, and submits. */
function shortTrace(id = "short-1"): Trace {
  return buildTrace(
    { id, source: { file: "mem.json", format: "test", index: 0 }, task: { text: "Fix the date parser and mail the result to lead@corp.example.com" }, model: "gpt-x", outcome: { success: false } },
    [
      { agent: "user", role: "user", kind: "message", text: "Please fix parse_duration for negative values." },
      { agent: "coder", role: "assistant", kind: "message", text: "I will run the tests now to check the fix." },
      { agent: "coder", role: "assistant", kind: "tool_call", tool: { name: "submit", callId: "c1", args: { patch: "diff --git a/x.py" } } },
      { agent: "env", role: "tool", kind: "tool_result", tool: { name: "submit", callId: "c1", output: "Submission received." } },
    ],
  );
}

/** A long run for windowing: 60 steps of ~40 tokens each. */
function longTrace(): Trace {
  return buildTrace(
    { id: "long-1", source: { file: "mem.json", format: "test", index: 1 }, task: { text: "Investigate the outage." } },
    Array.from({ length: 60 }, (_, i) => ({
      agent: i % 2 ? "sre" : "env",
      role: (i % 2 ? "assistant" : "tool") as "assistant" | "tool",
      kind: "message" as const,
      text: `Step ${i}: kubectl get pods -n shop returned pod-${i} CrashLoopBackOff after ${i} restarts, checking logs again.`,
    })),
  );
}

describe("judgeTrace — one call over a trace that fits", () => {
  it("produces a valid diagnosis with verified evidence, provenance and usage", async () => {
    server.setResponder((req) => ({
      kind: "answer",
      content: jsonAnswer(
        requestedCodes(req.body),
        {
          "2.6": { steps: [1, 2], evidence: ["I will run the tests now"], agent: "coder", confidence: 0.9, rationale: "announced a test run, then submitted" },
          "3.2": { steps: [2, 3], evidence: ["Submission received."], agent: "coder" },
        },
        { summary: "The coder submitted without testing.", taskSuccess: false },
      ),
    }));
    const j = await judgeTrace(shortTrace(), [], opts());
    expect(j.failed).toBe(false);
    const d = DiagnosisSchema.parse(j.diagnosis);
    expect(d.annotator).toBe("llm:judge-model");
    expect(d.taxonomy).toBe("mast-v3");
    expect(Object.entries(d.modes!).filter(([, v]) => v === 1).map(([k]) => k)).toEqual(["2.6", "3.2"]);
    expect(d.findings).toEqual([
      { mode: "2.6", confidence: 0.9, steps: [1, 2], agent: "coder", evidence: "I will run the tests now", detector: "llm:judge-model", rationale: "announced a test run, then submitted" },
      { mode: "3.2", confidence: 0.8, steps: [3, 2], agent: "coder", evidence: "Submission received.", detector: "llm:judge-model", rationale: "scripted" },
    ]);
    expect(d.signals.provenance).toEqual({ "2.6": "judge", "3.2": "judge" });
    expect(d.outcome).toMatchObject({ success: false });
    const s = judgeOf(d);
    expect(s).toMatchObject({ calls: 1, cachedCalls: 0, windows: 1, rejectedClaims: 0, truncated: false, taskSuccess: false, summary: "The coder submitted without testing." });
    expect(s.usage.reportedCalls).toBe(1);
    expect(s.usage.input).toBeGreaterThan(0);
    // One call over everything: all 14 codes in one schema.
    expect(requestedCodes(server.requests[0]!.body)).toEqual([...mast.codes]);
  });

  it("redacts before sending and records the count", async () => {
    const j = await judgeTrace(shortTrace(), [], opts());
    expect(judgeOf(j.diagnosis).redactions).toEqual({ total: 1, byKind: { email: 1 } });
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain("lead@corp.example.com");
    expect(promptText(server.requests[0]!.body)).toContain("[REDACTED:email]");
  });

  it("rejects and counts claims whose evidence is not in the cited steps; the mode stays unlabelled by them", async () => {
    server.setResponder((req) => ({
      kind: "answer",
      content: jsonAnswer(requestedCodes(req.body), {
        "1.3": { steps: [2], evidence: ["rm -rf / executed twice"] }, // fabricated
        "2.2": { steps: [0], evidence: ["Submission received."] }, // real text, wrong step
        "2.6": { steps: [1], evidence: ["I will run the tests now", "tests passed"] }, // one real, one fabricated
      }),
    }));
    const j = await judgeTrace(shortTrace(), [], opts());
    const d = j.diagnosis;
    expect(d.modes!["1.3"]).toBe(0);
    expect(d.modes!["2.2"]).toBe(0);
    expect(d.modes!["2.6"]).toBe(1);
    const s = judgeOf(d);
    expect(s.rejectedClaims).toBe(2);
    expect(s.rejectedQuotes).toBe(3);
    expect(s.rejected.map((r) => [r.mode, r.reason])).toEqual([
      ["1.3", "quote does not occur in the trace"],
      ["2.2", "quote is not in the cited steps [0] (it occurs in step 3)"],
      ["2.6", "quote does not occur in the trace"],
    ]);
    expect(d.findings.map((f) => f.evidence)).toEqual(["I will run the tests now"]);
  });

  it("retries an answer that is not JSON, then succeeds", async () => {
    server.push({ kind: "answer", content: "{ this is not json" });
    const j = await judgeTrace(shortTrace(), [], opts());
    expect(j.failed).toBe(false);
    expect(server.requests).toHaveLength(2);
    expect(judgeOf(j.diagnosis).retries).toEqual({ unparseable: 1 });
  });

  it("records an answer that never parses as an error with modes null — never as absent", async () => {
    server.setResponder(() => ({ kind: "answer", content: '{"summary":"s","taskSuccess":null,"modes":{}}' }));
    const j = await judgeTrace(shortTrace(), [], opts());
    expect(j.failed).toBe(true);
    expect(j.diagnosis.modes).toBeNull();
    expect(j.diagnosis.findings).toEqual([]);
    expect(j.diagnosis.error).toMatch(/^call whole failed: unparseable: answer does not fit the schema: \.modes\.1\.1/);
    expect(server.requests).toHaveLength(2);
    expect(DiagnosisSchema.parse(j.diagnosis).error).toBeDefined();
    // The failed attempts were still paid for.
    expect(judgeOf(j.diagnosis).usage.reportedCalls).toBe(2);
  });

  it("records a provider failure (5xx every time) as an error", async () => {
    server.setResponder(() => ({ kind: "status", status: 502 }));
    const j = await judgeTrace(shortTrace(), [], opts());
    expect(j.diagnosis.modes).toBeNull();
    expect(j.diagnosis.error).toMatch(/server-error: HTTP 502.*gave up after 2 attempts/);
  });

  it("fails without calling when the context cannot hold the prompt", async () => {
    const j = await judgeTrace(shortTrace(), [], opts({ contextTokens: 3000 }));
    expect(j.diagnosis.modes).toBeNull();
    expect(j.diagnosis.error).toMatch(/cannot hold the prompt/);
    expect(server.requests).toHaveLength(0);
  });

  it("prices the tokens when a price table is given", async () => {
    server.setResponder((req) => ({ kind: "answer", content: jsonAnswer(requestedCodes(req.body)), usage: { prompt_tokens: 2_000_000, completion_tokens: 100_000 } }));
    const j = await judgeTrace(shortTrace(), [], { model: model({ price: { inputPerMTok: 2.5, outputPerMTok: 10 } }) });
    expect(judgeOf(j.diagnosis).costUsd).toBeCloseTo(2 * 2.5 + 0.1 * 10, 6);
  });
});

describe("rule hints", () => {
  const hints: Finding[] = [
    { mode: "1.3", confidence: 0.9, steps: [2], evidence: "submit", detector: "rules/step-repetition" },
    { mode: "FM-2.2", confidence: 0.6, steps: [1], evidence: "I will run the tests now", detector: "rules/guessed-args" },
    { mode: "9.9", confidence: 0.5, steps: [], evidence: "", detector: "rules/custom" },
  ];
  const responder = (req: MockRequest) => ({
    kind: "answer" as const,
    content: jsonAnswer(requestedCodes(req.body), {
      "1.3": { steps: [2], evidence: ['"patch":"diff --git a/x.py"'] },
      "2.6": { steps: [1], evidence: ["I will run the tests now"] },
    }),
  });

  it("are shown to the judge, and the vector records rules / judge / both", async () => {
    server.setResponder(responder);
    const j = await judgeTrace(shortTrace(), hints, opts());
    const text = promptText(server.requests[0]!.body);
    expect(text).toContain("- 1.3 from rules/step-repetition, steps 2, confidence 0.9");
    expect(text).toContain("- 2.2 from rules/guessed-args");
    expect(j.diagnosis.signals.provenance).toEqual({ "1.3": "both", "2.2": "rules", "2.6": "judge" });
    expect(judgeOf(j.diagnosis).hints.map((h) => [h.mode, h.status])).toEqual([
      ["1.3", "confirmed"],
      ["2.2", "refuted"],
    ]);
    expect(judgeOf(j.diagnosis).unknownHints).toEqual([{ mode: "9.9", detector: "rules/custom" }]);
    expect(j.diagnosis.findings.filter((f) => f.mode === "1.3").map((f) => f.detector)).toEqual(["rules/step-repetition", "llm:judge-model"]);
  });

  it("can drop the labels of refuted hints", async () => {
    server.setResponder(responder);
    const j = await judgeTrace(shortTrace(), hints, opts({ refutedHints: "drop" }));
    expect(j.diagnosis.modes!["2.2"]).toBe(0);
    expect(j.diagnosis.signals.provenance).toEqual({ "1.3": "both", "2.6": "judge" });
  });
});

describe("windowed judging of a long trace", () => {
  it("carries the running summary forward, ORs modes over windows, and ends with a whole-run pass", async () => {
    let n = 0;
    server.setResponder((req) => {
      n++;
      const codes = requestedCodes(req.body);
      const text = promptText(req.body);
      const first = Number(/steps (\d+)–\d+ of 60/.exec(text)?.[1] ?? -1);
      const present: Record<string, { steps: number[]; evidence: string[] }> = {};
      if (codes.includes("1.3") && first === 0) present["1.3"] = { steps: [3], evidence: ["checking logs again"] };
      if (codes.includes("2.3") && text.includes("[step 50]")) present["2.3"] = { steps: [50], evidence: ["pod-50 CrashLoopBackOff"] };
      if (codes.includes("3.1")) present["3.1"] = { steps: [59], evidence: ["Step 59: kubectl get pods"] };
      return { kind: "answer", content: jsonAnswer(codes, present, { summary: `summary #${n}`, taskSuccess: !codes.includes("3.1") }) };
    });
    const j = await judgeTrace(longTrace(), [], opts({ windowTokens: 700, overlapTokens: 100 }));
    expect(j.failed).toBe(false);
    const reqs = server.requests;
    const s = judgeOf(j.diagnosis);
    expect(s.windows).toBeGreaterThan(2);
    expect(reqs).toHaveLength(s.windows + 1);
    // Windows judge the ten execution modes; the final pass the four whole-run modes.
    for (const r of reqs.slice(0, -1)) expect(requestedCodes(r.body)).toEqual(mast.codes.filter((c) => !["1.5", "3.1", "3.2", "3.3"].includes(c)));
    expect(requestedCodes(reqs.at(-1)!.body)).toEqual(["1.5", "3.1", "3.2", "3.3"]);
    // Each window after the first sees the summary the previous answer wrote; the final pass sees the last one.
    for (let i = 1; i < reqs.length; i++) expect(promptText(reqs[i]!.body)).toContain(`summary #${i}`);
    expect(promptText(reqs.at(-1)!.body)).toContain("Final pass over the whole run");
    expect(promptText(reqs.at(-1)!.body)).toContain("[step 59]");
    const on = Object.entries(j.diagnosis.modes!).filter(([, v]) => v === 1).map(([k]) => k);
    expect(on).toEqual(["1.3", "2.3", "3.1"]);
    // The judge's view of success comes from the final pass, not from a window.
    expect(s.taskSuccess).toBe(false);
    // 60 outline lines do not fit the final pass's 700-token budget next to the tail: the cut is reported.
    expect(s.truncated).toBe(true);
    expect(s.forcedCuts.map((c) => c.kind)).toEqual(["outline-omitted"]);
    const cut = s.forcedCuts[0]!;
    expect(promptText(reqs.at(-1)!.body)).toContain(`[… outline of steps ${cut.from}–${cut.to} omitted`);
  });

  it("shows a step larger than a window in parts across windows instead of cutting it", async () => {
    const output = Array.from({ length: 400 }, (_, i) => `log line ${i} with details`).join("\n");
    const t = buildTrace({ id: "big", source: { file: "m", format: "t", index: 0 } }, [
      { agent: "a", role: "assistant", kind: "message", text: "short start" },
      { agent: "env", role: "tool", kind: "tool_result", tool: { name: "cat", output } },
      { agent: "a", role: "assistant", kind: "message", text: "short end" },
    ]);
    const j = await judgeTrace(t, [], opts({ windowTokens: 300 }));
    const s = judgeOf(j.diagnosis);
    expect(s.forcedCuts.filter((c) => c.kind === "step-clipped")).toEqual([]);
    const windows = server.requests.map((r) => promptText(r.body)).filter((p) => /\(part \d+\/\d+\)/.test(p));
    expect(windows.length).toBeGreaterThan(2);
    const shown = windows.join("\n");
    expect(shown).not.toMatch(/\[… \d+ chars elided …\]/);
    for (let i = 0; i < 400; i++) expect(shown).toContain(`log line ${i} with details`);
    const plan = planJudgement(t, [], opts({ windowTokens: 300 }));
    expect(dryRunReport([plan]).traces[0]).toMatchObject({ coverage: 1, elisions: [], split_steps: 1 });
  });

  it("reports every field a field limit clips, and the coverage that leaves, in the dry run", () => {
    const t = buildTrace({ id: "clip", source: { file: "m", format: "t", index: 0 } }, [
      { agent: "a", role: "assistant", kind: "message", text: "x".repeat(5000) },
      { agent: "a", role: "assistant", kind: "message", text: "short end" },
    ]);
    const row = dryRunReport([planJudgement(t, [], opts({ render: { maxFieldChars: 1000 } }))]).traces[0]!;
    expect(row.elisions).toHaveLength(1);
    expect(row.elisions[0]).toMatchObject({ step: 0, field: "text" });
    expect(row.chars - row.shown_chars).toBe(row.elisions[0]!.chars);
    expect(row.coverage).toBeLessThan(0.25);
  });
});

describe("cache", () => {
  it("a second run pays nothing and gives the same diagnosis", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "fl-judge-")), "calls.jsonl");
    const cache1 = await JsonlFileCache.open(path);
    const first = await judgeTrace(longTrace(), [], opts({ windowTokens: 700, cache: cache1 }));
    await cache1.close();
    const sent = server.requests.length;
    expect(sent).toBeGreaterThan(2);
    const cache2 = await JsonlFileCache.open(path);
    const second = await judgeTrace(longTrace(), [], opts({ windowTokens: 700, cache: cache2 }));
    await cache2.close();
    expect(server.requests.length).toBe(sent);
    const s = judgeOf(second.diagnosis);
    expect(s.cachedCalls).toBe(s.calls);
    expect(s.usage).toEqual({ input: 0, output: 0, reportedCalls: 0, estimatedCalls: 0 });
    expect(s.cachedUsage).toEqual(judgeOf(first.diagnosis).usage);
    expect(second.diagnosis.modes).toEqual(first.diagnosis.modes);
  });

  it("a changed setting misses the cache", async () => {
    const cache = new MemoryCache();
    await judgeTrace(shortTrace(), [], opts({ cache }));
    await judgeTrace(shortTrace(), [], { model: model({ temperature: 0.7 }), cache });
    expect(server.requests).toHaveLength(2);
    expect(cache.entries.size).toBe(2);
  });
});

describe("MAST-compatible mode", () => {
  const names = Object.fromEntries(mast.modes.map((m) => [m.code, m.name]));

  it("sends one user message in the official structure and parses labels that contain 'no' correctly", async () => {
    server.setResponder(() => ({ kind: "answer", content: mastAnswer(names, ["2.5", "3.2"], { summary: "Ignored the tester; 1.3 was fine.", completed: false }) }));
    const j = await judgeTrace(shortTrace(), [], opts({ mode: "mast-compatible" }));
    expect(j.failed).toBe(false);
    const body = server.requests[0]!.body;
    expect(body.messages!.map((m) => m.role)).toEqual(["user"]);
    expect(body.response_format).toBeUndefined();
    expect(Object.entries(j.diagnosis.modes!).filter(([, v]) => v === 1).map(([k]) => k)).toEqual(["2.5", "3.2"]);
    expect(judgeOf(j.diagnosis)).toMatchObject({ mode: "mast-compatible", taskSuccess: false, summary: "Ignored the tester; 1.3 was fine." });
  });

  it("a trace over the budget is not cut silently: early steps become outline lines and the cut is recorded", async () => {
    server.setResponder(() => ({ kind: "answer", content: mastAnswer(names, []) }));
    const j = await judgeTrace(longTrace(), [], opts({ mode: "mast-compatible", contextTokens: 7000 }));
    expect(j.failed).toBe(false);
    const s = judgeOf(j.diagnosis);
    expect(s.truncated).toBe(true);
    expect(s.forcedCuts[0]).toMatchObject({ kind: "steps-outlined", from: 0 });
    const text = promptText(server.requests[0]!.body);
    expect(text).toContain("[step 59]");
    expect(text).toMatch(/Outline of steps 0–\d+/);
  });

  it("a missing answer line is retried and then an error, never a zero", async () => {
    const partial = mastAnswer(names, []).replace(/^3\.3 .*$/m, "");
    server.setResponder(() => ({ kind: "answer", content: partial }));
    const j = await judgeTrace(shortTrace(), [], opts({ mode: "mast-compatible" }));
    expect(j.diagnosis.modes).toBeNull();
    expect(j.diagnosis.error).toContain("section C has no line for code 3.3");
    expect(server.requests).toHaveLength(2);
  });
});

describe("many traces", () => {
  it("judges with bounded concurrency and yields in input order", async () => {
    const pool = new Pool(2);
    const slow = await startMockOpenAI({ latencyMs: 60 });
    try {
      const m = new OpenAIChatModel({ baseURL: slow.baseURL, model: "judge-model" }, { env: {}, pool });
      const traces = Array.from({ length: 6 }, (_, i) => shortTrace(`t${i}`));
      const ids: string[] = [];
      const totals = emptyTotals();
      let input = 0;
      for await (const j of judgeTraces(traces, { model: m, concurrency: 4 })) {
        ids.push(j.diagnosis.trace_id);
        addToTotals(totals, j);
        input += j.signals.usage.input;
      }
      expect(ids).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
      expect(totals).toMatchObject({ traces: 6, failed: 0, calls: 6, cachedCalls: 0, redactions: 6 });
      expect(totals.usage.input).toBe(input);
      expect(totals.usage.reportedCalls).toBe(6);
      const st = pool.stats();
      expect(st.maxActive).toBe(2);
      expect(st.completed).toBe(6);
      expect(st.busyFraction).toBeGreaterThan(0.5);
    } finally {
      await slow.close();
    }
  });
});

describe("dry run", () => {
  it("estimates windows and input tokens for a real corpus trace without sending anything", async () => {
    const file = corpus("mini-swe-agent", "trajs", "django__django-10999", "django__django-10999.traj.json");
    const { traces } = await readAll(file);
    expect(traces).toHaveLength(1);
    const trace = traces[0]!;
    const m = model({ baseURL: "http://127.0.0.1:9/v1" });
    const whole = planJudgement(trace, [], { model: m });
    const windowed = planJudgement(trace, [], { model: m, windowTokens: 4000 });
    const report = dryRunReport([whole, windowed]);
    expect(server.requests).toHaveLength(0);
    expect(report.traces[0]).toMatchObject({ trace_id: trace.id, windows: 1, calls: 1 });
    // The single call holds every step: at least the steps' own tokens.
    const stepTokens = whole.steps.reduce((n, s) => n + s.tokens, 0);
    expect(report.traces[0]!.input_tokens_estimate).toBeGreaterThan(stepTokens);
    const msgs = whole.calls[0]!.build("");
    expect(report.traces[0]!.input_tokens_estimate).toBe(msgs.reduce((n, x) => n + estimateTokens(x.content) + 4, 0));
    // Smaller windows: more calls, overlap and repeated prompt overhead cost more in total.
    expect(report.traces[1]!.windows).toBeGreaterThan(3);
    expect(report.traces[1]!.calls).toBe(report.traces[1]!.windows + 1);
    expect(report.traces[1]!.input_tokens_estimate).toBeGreaterThan(report.traces[0]!.input_tokens_estimate);
    expect(report.totals.input_tokens_estimate).toBe(report.traces[0]!.input_tokens_estimate + report.traces[1]!.input_tokens_estimate);
    // Every step is in some window; forced cuts are counted when a step exceeds the window.
    expect(report.traces[1]!.forced_cuts).toBe(windowed.forcedCuts.length);
    for (const c of windowed.forcedCuts) expect(c.kind).toBe("step-clipped");
    // What --dry-run prints: each call's messages, the running summary as a placeholder after the first window.
    const shown = plannedMessages(windowed);
    expect(shown).toHaveLength(windowed.calls.length);
    expect(shown[0]!.messages[1]!.content).not.toContain("running summary from the earlier windows");
    expect(shown[1]!.messages[1]!.content).toContain("[running summary from the earlier windows]");
    expect(shown.at(-1)!.call).toBe("final");
  });
});

describe("a trace with no steps", () => {
  it("is not judged: no call, modes null and an error", async () => {
    const empty = buildTrace({ id: "empty", source: { file: "mem.json", format: "test", index: 0 } }, []);
    expect(planJudgement(empty, [], opts())).toMatchObject({ calls: [], error: "the trace has no steps: nothing to judge" });
    const j = await judgeTrace(empty, [], opts());
    expect(server.requests).toHaveLength(0);
    expect(j.failed).toBe(true);
    expect(j.diagnosis).toMatchObject({ trace_id: "empty", modes: null, error: "the trace has no steps: nothing to judge" });
  });
});
