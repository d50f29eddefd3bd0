import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { scoreOutcome } from "../../outcome/index.js";
import { buildTrace } from "../../trace/index.js";
import { readAll } from "../read.js";
import type { OtelEvent, OtelSpan } from "./span.js";
import { spansToSteps } from "./steps.js";
import { spanTraceDraft } from "./trace.js";

const examples = (p: string) => fileURLToPath(new URL(`../../../examples/${p}`, import.meta.url));

/** trace id → success, from the generator's own label file (written beside the traces, not read from them). */
function exampleVerdicts(): Map<string, boolean> {
  const [header, ...rows] = readFileSync(examples("labels.csv"), "utf8").trim().split("\n");
  const cols = header!.split(",");
  const id = cols.indexOf("trace_id");
  const success = cols.indexOf("success");
  return new Map(rows.map((r) => r.split(",")).map((c) => [c[id]!, c[success] === "1"]));
}

describe("OTel evaluation events → outcome, on the bundled OTLP example", () => {
  it("reads the 6 rollout-watcher traces with the verdict the generator labelled (4 success, 2 failure)", async () => {
    const { traces, diagnostics } = await readAll(examples("otlp/rollout-watcher.otlp.json"));
    expect(diagnostics).toEqual([]);
    expect(traces).toHaveLength(6);
    const labelled = exampleVerdicts();
    for (const t of traces) {
      expect(labelled.has(t.id)).toBe(true);
      expect(t.outcome).toMatchObject({ success: labelled.get(t.id), score: labelled.get(t.id) ? 1 : 0, metric: "otel:task_success" });
    }
    expect(traces.filter((t) => t.outcome?.success === true)).toHaveLength(4);
    expect(traces.filter((t) => t.outcome?.success === false)).toHaveLength(2);
    // the outcome stage reads it as the dataset's verdict
    const scored = await scoreOutcome(traces.find((t) => t.outcome?.success === false)!);
    expect(scored).toMatchObject({ success: false, score: 0, metric: "otel:task_success", rule: "dataset verdict" });
  });
});

const T = "0af7651916cd43dd8448eb211c80319c";
const evaluation = (name: string | undefined, score?: unknown, label?: unknown, explanation?: string): OtelEvent => ({
  name: "gen_ai.evaluation.result",
  attributes: Object.fromEntries(
    Object.entries({
      "gen_ai.evaluation.name": name,
      "gen_ai.evaluation.score.value": score,
      "gen_ai.evaluation.score.label": label,
      "gen_ai.evaluation.explanation": explanation,
    }).filter(([, v]) => v !== undefined),
  ),
});
const span = (spanId: string, events: OtelEvent[], attributes: Record<string, unknown>, parentSpanId?: string): OtelSpan => ({
  traceId: T,
  spanId,
  parentSpanId,
  name: String(attributes["gen_ai.operation.name"] ?? "span"),
  attributes,
  events,
  status: { code: 0 },
  ref: {},
});
const agent = (events: OtelEvent[]) => span("00000000000000aa", events, { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "solver" });
const llm = (events: OtelEvent[]) =>
  span("00000000000000bb", events, { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"done"}]}]' }, "00000000000000aa");
const outcomeOf = (spans: OtelSpan[]) => {
  const mapped = spansToSteps(spans);
  return buildTrace(spanTraceDraft(mapped, { id: T, file: "f", format: "test", index: 0 }), mapped.steps).outcome;
};

describe("OTel evaluation events → outcome, synthetic spans", () => {
  it("accepts the documented verdict names in any case and spacing, label or 0/1 score", () => {
    expect(outcomeOf([agent([evaluation("Task Success", undefined, "PASS")]), llm([])])).toMatchObject({ success: true, metric: "otel:Task Success" });
    expect(outcomeOf([agent([evaluation("success", 0)]), llm([])])).toMatchObject({ success: false, score: 0, metric: "otel:success" });
    expect(outcomeOf([agent([evaluation("task-completion", "1")]), llm([])])).toMatchObject({ success: true, score: 1, metric: "otel:task-completion" });
    expect(outcomeOf([agent([evaluation("outcome", 0.2, true)]), llm([])])).toMatchObject({ success: true, score: 0.2, metric: "otel:outcome" });
    expect(outcomeOf([agent([evaluation("outcome", undefined, "failed")]), llm([])])).toMatchObject({ success: false, metric: "otel:outcome" });
  });

  it("never invents success: other names, non-root spans, unclear or contradictory scores only reach outcome.raw", () => {
    const relevance = outcomeOf([agent([evaluation("relevance", 1, "pass", "on topic")]), llm([])]);
    expect(relevance).toEqual({
      raw: { evaluations: [{ name: "relevance", spanId: "00000000000000aa", root: true, score: 1, label: "pass", explanation: "on topic" }] },
    });
    // a task_success judged on one LLM call is not the run's verdict
    const inner = outcomeOf([agent([]), llm([evaluation("task_success", 1, "pass")])]);
    expect(inner?.success).toBeUndefined();
    expect(inner?.raw).toEqual({ evaluations: [{ name: "task_success", spanId: "00000000000000bb", root: false, score: 1, label: "pass" }] });
    const partial = outcomeOf([agent([evaluation("task_success", 0.7)]), llm([])]);
    expect(partial).toMatchObject({ score: 0.7, metric: "otel:task_success" });
    expect(partial?.success).toBeUndefined();
    const contradictory = outcomeOf([agent([evaluation("task_success", 0, "pass")]), llm([])]);
    expect(contradictory?.success).toBeUndefined();
    expect(contradictory?.raw).toMatchObject({ evaluations: [{ problem: 'label "pass" contradicts score 0' }] });
    expect(outcomeOf([agent([evaluation(undefined, 1, "pass")]), llm([])])?.success).toBeUndefined();
  });

  it("keeps every evaluation in raw beside the verdict, and leaves disagreeing root verdicts unknown", () => {
    const both = outcomeOf([agent([evaluation("toxicity", 0.01), evaluation("task_success", 1, "pass")]), llm([evaluation("groundedness", 0.9)])]);
    expect(both).toMatchObject({ success: true, score: 1, metric: "otel:task_success" });
    expect((both!.raw as { evaluations: { name: string }[] }).evaluations.map((e) => e.name)).toEqual(["toxicity", "task_success", "groundedness"]);
    const rerun = outcomeOf([agent([evaluation("task_success", 0.5), evaluation("task_success", 1, "pass")]), llm([])]);
    expect(rerun).toMatchObject({ success: true, score: 1 });
    const disagree = outcomeOf([agent([evaluation("task_success", 1, "pass"), evaluation("success", 0, "fail")]), llm([])]);
    expect(disagree?.success).toBeUndefined();
    expect(disagree?.raw).toMatchObject({ evaluations: [{ problem: "root verdict evaluations disagree" }, { problem: "root verdict evaluations disagree" }] });
  });

  it("leaves a trace without evaluation events without an outcome", () => {
    expect(outcomeOf([agent([]), llm([])])).toBeUndefined();
  });
});
