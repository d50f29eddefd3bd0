import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll } from "../src/formats/index.js";
import { startMockOpenAI, type MockServer } from "../src/judge/testing/mock-openai-server.js";
import { mast } from "../src/taxonomy/index.js";
import { quoteInSteps } from "../src/trace/index.js";
import { corpus, CORPUS } from "../src/testing/corpus.js";
import { measureAccuracy, type AccuracyReport } from "./accuracy.js";
import { loadDevSet } from "./dev-set.js";

const DEV = join(import.meta.dirname, "dev-set.jsonl");
const HOLDOUT = join(import.meta.dirname, "holdout-set.jsonl");
const dev = loadDevSet(DEV);
const holdout = loadDevSet(HOLDOUT);

describe("the labelled dev set", () => {
  it("has at least 60 runs from at least 10 corpus sources, successes included, each labelled twice", () => {
    expect(dev.length).toBeGreaterThanOrEqual(60);
    expect(new Set(dev.map((r) => r.corpus_source)).size).toBeGreaterThanOrEqual(10);
    expect(dev.some((r) => r.outcome === true)).toBe(true);
    expect(new Set(dev.map((r) => r.trace_id)).size).toBe(dev.length);
    for (const r of dev) for (const v of [r.labels, r.passes.A, r.passes.B]) expect(Object.keys(v).sort()).toEqual([...mast.codes].sort());
  });

  it("refers to real corpus traces, and every positive label quotes the steps it cites", async () => {
    const files = [...new Set(dev.map((r) => corpus(r.file)))];
    const { traces } = await readAll(files);
    // by file and position: a trace id can carry a suffix that depends on what else was read
    const byId = new Map(traces.map((t) => [`${t.source.file.slice(CORPUS.length + 1)}#${t.source.index}`, t]));
    const unsupported: string[] = [];
    for (const r of dev) {
      const t = byId.get(`${r.file}#${r.index}`);
      expect(t, `${r.id} ${r.trace_id}`).toBeDefined();
      for (const [code, ev] of Object.entries(r.evidence)) {
        const cited = ev.steps.map((i) => t!.steps[i]).filter((s) => s !== undefined);
        // a quote may be an excerpt with elisions: each piece between "…" must be in the cited steps
        const pieces = ev.quote.split(/\s*(?:…|\.\.\.)\s*/).filter((p) => p.trim().length >= 8);
        if (!pieces.length || !pieces.every((p) => quoteInSteps(p, cited))) unsupported.push(`${r.id} ${code}`);
      }
      if (r.decisive) expect(r.decisive.step, r.id).toBeLessThan(t!.steps.length);
    }
    // annotators paraphrase now and then; the adjudicated file keeps that rare
    expect(unsupported.length / dev.reduce((n, r) => n + Object.keys(r.evidence).length, 0)).toBeLessThan(0.1);
  });
});

describe("the held-out set", () => {
  it("is labelled like the dev set and shares no run with it", async () => {
    expect(holdout.length).toBeGreaterThanOrEqual(20);
    const devIds = new Set(dev.map((r) => r.trace_id));
    expect(holdout.filter((r) => devIds.has(r.trace_id)).map((r) => r.id)).toEqual([]);
    const { traces } = await readAll([...new Set(holdout.map((r) => corpus(r.file)))]);
    const byId = new Map(traces.map((t) => [`${t.source.file.slice(CORPUS.length + 1)}#${t.source.index}`, t]));
    for (const r of holdout) {
      const t = byId.get(`${r.file}#${r.index}`);
      expect(t, `${r.id} ${r.trace_id}`).toBeDefined();
      for (const ev of Object.values(r.evidence)) expect(Math.max(...ev.steps), r.id).toBeLessThan(t!.steps.length);
    }
  });
});

describe("accuracy on the dev set and the datasets' labels (regression floors; the figures live in bench:accuracy)", () => {
  let server: MockServer;
  let report: AccuracyReport;
  beforeAll(async () => {
    server = await startMockOpenAI();
    report = await measureAccuracy({ corpus: CORPUS, devSet: DEV, holdoutSet: HOLDOUT, judge: { baseURL: server.baseURL, model: "scripted-judge", concurrency: 4 } });
  }, 180_000);
  afterAll(async () => server?.close());

  it("holds the rules' dev-set floors: micro-F1, premature termination, step repetition", () => {
    const mode = (c: string) => report.dev.rules.modes.find((m) => m.code === c)!;
    expect(report.dev.rules.micro.f1).toBeGreaterThanOrEqual(0.6);
    expect(report.dev.rules.micro.precision).toBeGreaterThanOrEqual(0.8);
    expect(mode("3.1").f1).toBeGreaterThanOrEqual(0.8);
    expect(mode("1.3").f1).toBeGreaterThanOrEqual(0.7);
    expect(report.dev.failedNone / report.dev.failed).toBeLessThanOrEqual(0.25);
    // the held-out set is scored on its own (its figures are reported, not tuned to; only the empty-vector floor holds)
    expect(report.holdout!.runs).toBe(holdout.length);
    expect(report.holdout!.rules.matching.matched).toBe(holdout.length);
    expect(report.holdout!.failedNone / report.holdout!.failed).toBeLessThanOrEqual(0.25);
  });

  it("holds the attribution floors on Who&When and AgentRx (no LLM)", () => {
    const ds = (k: string) => report.datasets.find((d) => d.reference === k)!.report.attribution!;
    expect(ds("who_and_when:algorithm-generated").agent.accuracy).toBeGreaterThanOrEqual(0.5);
    expect(ds("who_and_when:algorithm-generated").step.exact.accuracy).toBeGreaterThanOrEqual(0.2);
    expect(ds("who_and_when:hand-crafted").agent.accuracy).toBeGreaterThanOrEqual(0.45);
    expect(ds("who_and_when:hand-crafted").step.exact.accuracy).toBeGreaterThanOrEqual(0.08);
    expect(ds("agentrx").step.within.find((w) => w.k === 3)!.accuracy).toBeGreaterThanOrEqual(0.4);
  });

  it("scores a judge on the same labels the same way, through a real OpenAI-protocol endpoint", () => {
    // the scripted judge finds nothing and refutes nothing: the combined record keeps the rules' findings
    expect(report.dev.judgeName).toBe("rules+llm:scripted-judge");
    expect(server.completed().length).toBeGreaterThanOrEqual(report.dev.runs);
    expect(report.dev.judge!.matching.matched).toBe(report.dev.runs);
    expect(report.dev.judge!.micro.tp).toBe(report.dev.rules.micro.tp);
    // the judge examines every mode, so none is left unmeasured on its side
    expect(report.dev.judge!.modes.every((m) => m.n === report.dev.runs)).toBe(true);
  });

  it("keeps every corpus source with 50 or more failed runs at no more than 25 % of failed runs without a mode", () => {
    for (const [src, t] of Object.entries(report.sources)) if (t.failed >= 50) expect(t.failedNone / t.failed, src).toBeLessThanOrEqual(0.25);
  });
});
