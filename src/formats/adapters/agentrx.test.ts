import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";
import { AGENTRX_CATEGORIES, normalizeAgentRxCategory } from "./agentrx.js";

const trace = (traces: Trace[], id: string) => {
  const t = traces.find((x) => x.id === id);
  if (!t) throw new Error(`no trace ${id}`);
  return t;
};
const agentrxGold = (t: Trace) => t.goldLabels?.find((g) => g.source === "agentrx");

describe("agentrx on the corpus", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("agentrx"));
  });

  it("reads 87 traces (58 Magentic-One logs + 29 tau-bench retail runs); the label files are supporting", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(87);
    expect(traces.filter((t) => t.framework === "magentic-one")).toHaveLength(58);
    expect(traces.filter((t) => t.framework === "tau-bench")).toHaveLength(29);
    expect(traces.every((t) => t.source.format === "agentrx")).toBe(true);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(files.filter((f) => f.role === "supporting").map((f) => f.path.split("/").pop()).sort()).toEqual([
      "magentic_one_ground_truth.json", "tau_ground_truth.json", "tau_retail.json",
    ]);
    expect(diagnostics.filter((d) => d.level === "error")).toEqual([]);
    // 44 of the 58 Magentic logs and all 29 tau runs are labelled
    expect(traces.filter((t) => t.framework === "magentic-one" && agentrxGold(t))).toHaveLength(44);
    expect(traces.filter((t) => t.framework === "tau-bench" && agentrxGold(t))).toHaveLength(29);
  });

  it("turns a 1-based root-cause step_number into the canonical index (5f982798…: step 33 → 32, FileSurfer)", () => {
    const t = trace(result.traces, "agentrx:5f982798-16b9-4051-ab57-cfc7ebdb2a91");
    const gold = agentrxGold(t)!;
    expect(gold).toMatchObject({ mistakeStep: 32, mistakeAgent: "FileSurfer" });
    expect(t.steps[32]).toMatchObject({ agent: "FileSurfer", role: "assistant" });
    expect(t.steps[32]!.text!.startsWith("Address: file:///workspace/path_to_july_2020_paper.pdf")).toBe(true);
    expect(gold.failures!.map((f) => [f.step, f.agent, f.category, f.rootCause])).toEqual([
      [12, "WebSurfer", "Instruction/Plan Adherence Failure", false], // written "Websurfer" in the labels
      [16, "WebSurfer", "Instruction/Plan Adherence Failure", false],
      [32, "FileSurfer", "Invention of New Information", true], // written "Invention of new information"
    ]);
    expect(t.source.sidecars![0]).toMatch(/ground_truth\/magentic_one_ground_truth\.json$/);
  });

  it("never leaves a label category or agent in a non-canonical spelling", () => {
    const failures = result.traces.flatMap((t) => agentrxGold(t)?.failures ?? []);
    expect(failures).toHaveLength(295 + 39);
    expect(new Set(failures.map((f) => f.category)).size).toBeGreaterThan(5);
    for (const f of failures) expect(AGENTRX_CATEGORIES).toContain(f.category);
    expect(failures.some((f) => f.agent === "Websurfer")).toBe(false);
    expect(failures.filter((f) => f.rootCause)).toHaveLength(44 + 29);
  });

  it("labels tau run 28 through the mapper shared with tau-bench: message index 33 is canonical step 33", () => {
    const t = trace(result.traces, "agentrx:tau-bench:retail:28:28");
    expect(t.model).toBeUndefined(); // tau_dataset_failed.json names no model
    expect(t.task?.benchmark).toBe("tau-bench/retail");
    expect(t.outcome).toMatchObject({ success: false, reward: 0 });
    const gold = agentrxGold(t)!;
    expect(gold).toMatchObject({ mistakeStep: 33, mistakeAgent: "assistant" });
    expect(gold.failures![0]!.category).toBe("Intent-Plan Misalignment"); // written "Intent Plan Misalignment"
    const step = t.steps[33]!;
    expect(step).toMatchObject({ kind: "tool_call", tool: { name: "cancel_pending_order" }, ref: { original: 33 } });
    expect(t.steps[step.tool!.resultIndex!]).toMatchObject({ kind: "tool_result", tool: { callId: "call_JMy9kYDBHiBfCP9tFBVItc1w" } });
  });

  it("normalises the category spellings of both label files", () => {
    expect(normalizeAgentRxCategory("Instruction Adherence Failure")).toBe("Instruction/Plan Adherence Failure");
    expect(normalizeAgentRxCategory("Intent not supported")).toBe("Intent Not Supported");
    expect(normalizeAgentRxCategory("Made Up Category")).toBeUndefined();
  });
});

describe("AgentRx vs Who&When labels on the same Magentic-One traces (ground-truth-datasets.md §3)", () => {
  it("agrees on the root-cause step in 15 of 43 and on the agent in 26 of 43, as documented", async () => {
    const [ww, rx] = await Promise.all([readAll(corpus("who_and_when", "Hand-Crafted")), readAll(corpus("agentrx", "magentic_dataset"))]);
    const whoAndWhen = new Map(ww.traces.map((t) => [t.task!.id!, t.goldLabels!.find((g) => g.source === "who_and_when")!]));
    const pairs = rx.traces.flatMap((t) => {
      const a = agentrxGold(t);
      const w = whoAndWhen.get(t.task!.id!);
      return a && w ? [{ id: t.task!.id!, rx: a, ww: w }] : [];
    });
    // All 44 labelled trajectories are Who&When traces. The documented 43 leave out 08cae58d…, whose root_cause
    // failure_id is the string "1": the adapter still resolves it (step 5 → 4, WebSurfer), and it agrees on both.
    expect(pairs).toHaveLength(44);
    const stringId = "08cae58d-4084-4616-b6dd-dd6534e4825b";
    const documented = pairs.filter((p) => p.id !== stringId);
    const sameStep = (ps: typeof pairs) => ps.filter((p) => p.rx.mistakeStep === p.ww.mistakeStep).length;
    const sameAgent = (ps: typeof pairs) => ps.filter((p) => p.rx.mistakeAgent === p.ww.mistakeAgent).length;
    expect([documented.length, sameStep(documented), sameAgent(documented)]).toEqual([43, 15, 26]);
    expect([sameStep(pairs), sameAgent(pairs)]).toEqual([16, 27]);
    expect(pairs.find((p) => p.id === stringId)!.rx).toMatchObject({ mistakeStep: 4, mistakeAgent: "WebSurfer" });
  });
});

describe("agentrx on its string-typed copy and on malformed input", () => {
  const root = mkdtempSync(join(tmpdir(), "faultline-agentrx-"));
  mkdirSync(join(root, "ground_truth"));
  mkdirSync(join(root, "tau_retail"));
  mkdirSync(join(root, "magentic_dataset"));

  it("reads string-typed tau records with a Python-repr info, and keeps an unparsable info raw with a warning", async () => {
    const traj = [
      { role: "system", content: "# Retail agent policy\n...", index: "1" },
      { role: "user", content: "cancel my order", index: "2" },
      { role: "assistant", content: "Sure.", tool_calls: [{ id: "c1", type: "function", function: { name: "cancel_pending_order", arguments: '{"order_id":"#W1"}' } }], index: "3" },
      { role: "tool", tool_call_id: "c1", name: "cancel_pending_order", content: "cancelled", index: "4" },
      { role: "assistant", content: "Done.", index: "5" },
    ];
    const info = "{'task': {'user_id': 'u1', 'instruction': 'Cancel #W1', 'actions': [{'name': 'cancel_pending_order', 'kwargs': {'order_id': '#W1'}}]}, 'reward_info': {'reward': 1.0, 'info': None}, 'ok': True}";
    writeFileSync(
      join(root, "tau_retail", "runs.json"),
      JSON.stringify([
        { task_id: "7", reward: "1.0", info, traj, trial: "0" },
        { task_id: "8", reward: "0.0", info: "Task(user_id='u2')", traj, trial: "0" },
      ]),
    );
    writeFileSync(
      join(root, "ground_truth", "tau_ground_truth.json"),
      JSON.stringify([
        {
          trajectory_id: 8,
          failures: [{ failure_id: 1, step_number: 5, step_reason: "r", failure_category: "Inconclusive", category_reason: "c", failed_agent: "ASSISTANT" }],
          root_cause: { failure_id: 1, reason_for_root_cause: "x" },
          failure_summary: "s",
        },
      ]),
    );
    const { traces, diagnostics, files } = await readAll(root);
    expect(files.find((f) => f.path.endsWith("runs.json"))?.format).toBe("agentrx");
    const [ok, bad] = traces;
    expect(ok).toMatchObject({ id: "agentrx:tau-bench:retail:7:0", outcome: { success: true, reward: 1 }, task: { id: "7", text: "Cancel #W1" } });
    expect(ok!.metadata).toMatchObject({ infoParsedFrom: "python-repr", info: { ok: true } });
    expect(agentrxGold(ok!)).toBeUndefined();
    expect(bad!.metadata.infoRaw).toBe("Task(user_id='u2')");
    expect(diagnostics).toEqual(expect.arrayContaining([expect.objectContaining({ level: "warning", message: expect.stringContaining("kept raw in metadata.infoRaw") })]));
    // message index 5 is canonical step 5: message 3 made two steps (text + tool call)
    expect(agentrxGold(bad!)).toMatchObject({ mistakeStep: 5, mistakeAgent: "assistant" });
    expect(bad!.steps[5]).toMatchObject({ text: "Done.", ref: { original: 5 } });
    expect(diagnostics.some((d) => d.message.includes("no entry in tau_ground_truth.json"))).toBe(true);
  });

  it("keeps a malformed Magentic log element's slot so 1-based labels still point at the right step", async () => {
    const p = join(root, "magentic_dataset", "t1.json");
    writeFileSync(
      p,
      '[\n{"content": "task", "role": "human"},\n{"content": "plan", "role": "Orchestrator (thought)"},\n{bad},\n{"content": "search", "role": "Orchestrator (-> WebSurfer)"},\n{"content": "clicked", "role": "Websurfer"}\n]\n',
    );
    writeFileSync(
      join(root, "ground_truth", "magentic_one_ground_truth.json"),
      JSON.stringify([
        {
          trajectory_id: "t1",
          failures: [
            { failure_id: 1, step_number: 5, step_reason: "r", failure_category: "Instruction/Plan Adherence Failure", failed_agent: "websurfer" },
            { failure_id: 2, step_number: 9, step_reason: "r", failure_category: "Odd", failed_agent: "Orchestrator" },
          ],
          root_cause: { failure_id: 1 },
          failure_summary: "s",
        },
      ]),
    );
    const { traces, diagnostics } = await readAll(p);
    expect(traces).toHaveLength(1);
    const t = traces[0]!;
    expect(t.steps.map((s) => s.kind)).toEqual(["message", "reasoning", "event", "handoff", "message"]);
    expect(t.steps[4]).toMatchObject({ agent: "WebSurfer", ref: { line: 6 } });
    expect(agentrxGold(t)).toMatchObject({ mistakeStep: 4, mistakeAgent: "WebSurfer" });
    expect(agentrxGold(t)!.failures![1]).toEqual({ agent: "Orchestrator", category: "Odd", reason: "r", rootCause: false });
    const messages = diagnostics.map((d) => `${d.level}:${d.line ?? ""}:${d.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error:4:array element 2/),
        expect.stringContaining("step_number 9, which names no step"),
        expect.stringContaining('unknown failure category "Odd"'),
      ]),
    );
  });

  it("does not claim ordinary chat lists", async () => {
    const p = join(root, "chat.json");
    writeFileSync(p, JSON.stringify([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]));
    const { files } = await readAll(p);
    expect(files[0]!.format).toBe("openai-chat");
  });
});

describe("agentrx label file on disk", () => {
  it("matches the corpus ground truth for the tau root cause of run 2 (message 7, a wrong count)", async () => {
    const gt = JSON.parse(readFileSync(corpus("agentrx", "ground_truth", "tau_ground_truth.json"), "utf8"));
    expect(gt.find((e: { trajectory_id: number }) => e.trajectory_id === 2).root_cause.failure_id).toBe(2);
    const { traces } = await readAll(corpus("agentrx", "tau_retail"));
    const t = trace(traces, "agentrx:tau-bench:retail:2:2");
    expect(agentrxGold(t)).toMatchObject({ mistakeStep: 6, mistakeAgent: "assistant" });
    expect(t.steps[6]!.text!.startsWith("Currently, there are 11 available T-shirt options")).toBe(true);
  });
});
