import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";
import { tauRunFromFileName } from "./tau-bench.js";

const trace = (traces: Trace[], id: string) => {
  const t = traces.find((x) => x.id === id);
  if (!t) throw new Error(`no trace ${id}`);
  return t;
};

describe("tau-bench on the corpus (gpt-4o-airline.json)", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("tau-bench"));
  });

  it("reads 200 runs (50 tasks x 4 trials), 84 successes, model and domain from the file name", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(200);
    expect(new Set(traces.map((t) => t.id)).size).toBe(200);
    expect(traces.filter((t) => t.outcome?.success === true)).toHaveLength(84);
    expect(traces.every((t) => t.outcome?.success === (t.outcome?.reward === 1))).toBe(true);
    expect(new Set(traces.map((t) => t.model))).toEqual(new Set(["gpt-4o"]));
    expect(new Set(traces.map((t) => t.task?.benchmark))).toEqual(new Set(["tau-bench/airline"]));
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
  });

  it("maps task 0 trial 0: failure, instruction, expected actions, a linked get_user_details call", () => {
    const t = trace(result.traces, "tau-bench:airline:0:0");
    expect(t).toMatchObject({ framework: "tau-bench", source: { format: "tau-bench", index: 0 } });
    expect(t.outcome).toMatchObject({ success: false, reward: 0, metric: "reward" });
    expect((t.task!.expected as { actions: { name: string }[] }).actions[0]!.name).toBe("book_reservation");
    expect(t.metadata).toMatchObject({ trial: 0, domain: "airline" });
    expect(t.steps[0]).toMatchObject({ role: "system", kind: "message" });
    expect(t.steps[1]).toMatchObject({ agent: "user", text: "Hi! I'm looking to book a flight from New York to Seattle on May 20th." });
    const call = t.steps.find((s) => s.kind === "tool_call")!;
    expect(call.tool).toMatchObject({ name: "get_user_details", callId: "call_oIHazX6yQrB8hUwl4cRilFKj", args: { user_id: "mia_li_3668" } });
    const result_ = t.steps[call.tool!.resultIndex!]!;
    expect(result_).toMatchObject({ kind: "tool_result", role: "tool", tool: { callIndex: call.index, callId: "call_oIHazX6yQrB8hUwl4cRilFKj" } });
    expect(result_.tool!.output!.startsWith('{"name": {"first_name": "Mia", "last_name": "Li"}')).toBe(true);
  });

  it("marks reward 1 runs as successes (task 6 trial 0)", () => {
    expect(trace(result.traces, "tau-bench:airline:6:0").outcome).toMatchObject({ success: true, reward: 1 });
  });
});

describe("tauRunFromFileName", () => {
  it("reads the historical <model>-<domain> names and run.py checkpoint names", () => {
    expect(tauRunFromFileName("historical_trajectories/gpt-4o-airline.json")).toEqual({ model: "gpt-4o", domain: "airline" });
    expect(tauRunFromFileName("sonnet-35-new-retail.json")).toEqual({ model: "sonnet-35-new", domain: "retail" });
    expect(tauRunFromFileName("results/tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_0108153215.json")).toEqual({
      agentStrategy: "tool-calling", model: "gpt-4o", temperature: 0, userModel: "gpt-4o",
    });
    expect(tauRunFromFileName("tau_dataset_failed.json")).toEqual({});
  });
});

describe("tau-bench on malformed input", () => {
  it("reports a record that is not a result, reads the rest, and maps a crashed run to an error step", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-tau-"));
    const p = join(dir, "gpt-4o-mini-retail.json");
    const good = { task_id: 1, reward: 1.0, info: {}, traj: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }], trial: 0 };
    const crashed = { task_id: 2, reward: 0.0, info: { error: "RateLimitError", traceback: "Traceback …" }, traj: [], trial: 0 };
    writeFileSync(p, JSON.stringify([good, { task_id: 3, reward: 0 }, crashed], null, 1));
    const { traces, diagnostics } = await readAll(p);
    expect(traces.map((t) => t.id)).toEqual(["tau-bench:retail:1:0", "tau-bench:retail:2:0"]);
    expect(traces[0]!.model).toBe("gpt-4o-mini");
    expect(traces[1]!.steps).toEqual([expect.objectContaining({ kind: "error", text: "RateLimitError\nTraceback …" })]);
    expect(diagnostics.filter((d) => d.level === "error")).toEqual([expect.objectContaining({ skipped: "trace", message: expect.stringContaining("not a tau-bench result") })]);
    expect(diagnostics.find((d) => d.level === "error")!.line).toBeGreaterThan(1);
  });
});
