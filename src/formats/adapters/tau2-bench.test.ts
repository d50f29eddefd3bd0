import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

describe("tau2-bench adapter (corpus)", async () => {
  const { traces, files, diagnostics } = await readAll(corpus("tau2-bench"));
  const fileOf = (part: string) => traces.filter((t) => t.source.file.includes(part));

  it("reads the 143 simulations of the MANIFEST with the rewards of its table", () => {
    expect(traces).toHaveLength(143);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    const table: Array<[string, string, number, number]> = [
      ["telecom_llm_agent_gpt-4o_", "gpt-4o", 14, 6],
      ["telecom_llm_agent_grok-3_", "grok-3", 4, 1],
      ["airline_llm_agent_grok-3_", "grok-3", 11, 9],
      ["airline_llm_agent_grok-4-fast-reasoning_", "grok-4-fast-reasoning", 37, 29],
      ["airline_llm_agent_grok-3-mini_", "grok-3-mini", 1, 15],
      ["airline_llm_agent_grok-4_", "grok-4", 7, 9],
    ];
    for (const [part, model, won, lost] of table) {
      const ts = fileOf(part);
      expect(ts.map((t) => t.outcome?.success).filter((s) => s === true)).toHaveLength(won);
      expect(ts.map((t) => t.outcome?.success).filter((s) => s === false)).toHaveLength(lost);
      expect(new Set(ts.map((t) => t.model))).toEqual(new Set([model]));
    }
    expect(new Set(traces.map((t) => t.model)).size).toBe(5);
    expect(fileOf("grok-4_")[0]!.metadata).toMatchObject({ modelRaw: "xai/grok-4", userModel: "xai/grok-4", domain: "airline" });
    expect(traces.filter((t) => t.metadata.terminationReason === "max_steps")).toHaveLength(1);
  });

  it("maps messages to steps with tool calls linked to their results (agent and user-simulator tools)", () => {
    const t = fileOf("gpt-4o")[0]!;
    expect(t).toMatchObject({ id: "ed931b77-75ae-4289-8aab-9ee521d35703", task: { id: "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]", benchmark: "tau2-bench/telecom" }, outcome: { success: false, reward: 0 } });
    expect(t.task?.text).toMatch(/^Reason for call: You mobile data is not working properly/);
    expect(t.steps[0]).toMatchObject({ agent: "assistant", role: "assistant", kind: "message", text: "Hi! How can I help you today?" });
    const call = t.steps.find((s) => s.kind === "tool_call")!;
    expect(call).toMatchObject({ agent: "assistant", tool: { name: "get_customer_by_phone", callId: "call_fRC0zgwYJWrYzwWQcecwmdez", args: { phone_number: "555-123-2002" } }, usage: { input: 6333, output: 22 } });
    const result = t.steps[call.tool!.resultIndex!]!;
    expect(result).toMatchObject({ kind: "tool_result", role: "tool", tool: { name: "get_customer_by_phone", callIndex: call.index, isError: false } });
    expect(result.text).toMatch(/^\{"customer_id": "C1001", "full_name": "John Smith"/);
    const userCall = t.steps.find((s) => s.kind === "tool_call" && s.agent === "user")!;
    expect(userCall.tool).toMatchObject({ name: "check_status_bar", callId: "call_6jiAjeCGL3WrhM7KR1f39eq4" });
    expect(t.steps[userCall.tool!.resultIndex!]!.tool!.name).toBe("check_status_bar");
    expect(t.steps.at(-1)).toMatchObject({ kind: "termination", text: "termination_reason: user_stop" });
    // grok-3-mini keeps its reasoning, which only raw_data holds
    expect(fileOf("grok-3-mini").some((x) => x.steps.some((s) => s.kind === "reasoning"))).toBe(true);
    // tool errors are flagged
    expect(traces.flatMap((x) => x.steps).filter((s) => s.tool?.isError === true)).toHaveLength(7);
  });

  it("reports a bad simulation and reads the rest", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-tau2-"));
    const path = join(dir, "run.json");
    const good = { id: "s1", task_id: "t1", trial: 0, reward_info: { reward: 1.0 }, messages: [{ role: "assistant", content: "hi", turn_idx: 0 }] };
    const noReward = { id: "s2", task_id: "t1", trial: 1, reward_info: null, messages: [] };
    writeFileSync(path, JSON.stringify({ timestamp: "x", info: { agent_info: { llm: "openai/gpt-4.1" }, environment_info: { domain_name: "retail" } }, tasks: [{ id: "t1" }], simulations: [good, "oops", noReward] }));
    const r = await readAll(path);
    expect(r.traces.map((t) => [t.id, t.model, t.outcome?.success])).toEqual([
      ["s1", "gpt-4.1", true],
      ["s2", "gpt-4.1", undefined],
    ]);
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ level: "error", message: "simulations[1] is not an object", skipped: "trace" }));
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ level: "warning", message: "simulations[2]: no reward_info.reward; no outcome" }));
  });
});
