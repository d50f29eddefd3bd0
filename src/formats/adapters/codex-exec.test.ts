import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAll } from "../read.js";
import { itemToSteps, modelFromConfig } from "./codex-exec.js";

const THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/**
 * A `codex exec --json` stream as Zero writes it to traces/stdout.log (itbench.md §2.2): item.started/updated
 * precede item.completed; the second turn produces nothing; the third fails.
 */
const STREAM = [
  { type: "thread.started", thread_id: THREAD },
  { type: "turn.started" },
  { type: "item.started", item: { id: "item_0", type: "todo_list", items: [{ text: "List snapshot files", completed: false }] } },
  { type: "item.completed", item: { id: "item_1", type: "reasoning", text: "**Listing the snapshot directory**" } },
  { type: "item.started", item: { id: "item_2", type: "command_execution", command: "bash -lc ls", aggregated_output: "", exit_code: null, status: "in_progress" } },
  { type: "item.completed", item: { id: "item_2", type: "command_execution", command: "bash -lc ls", aggregated_output: "alerts\nk8s_events_raw.tsv\n", exit_code: 0, status: "completed" } },
  {
    type: "item.completed",
    item: { id: "item_3", type: "command_execution", command: "bash -lc 'head alerts/missing.json'", aggregated_output: "head: alerts/missing.json: No such file or directory\n", exit_code: 1, status: "failed" },
  },
  {
    type: "item.completed",
    item: {
      id: "item_4",
      type: "mcp_tool_call",
      server: "offline_incident_analysis",
      tool: "alert_summary",
      arguments: { base_dir: "/snapshots/Scenario-2" },
      result: { content: [{ type: "text", text: '[{"alertname":"RequestErrorRate"}]' }], structured_content: null },
      error: null,
      status: "completed",
    },
  },
  // an older CLI: no arguments/result fields
  { type: "item.completed", item: { id: "item_5", type: "mcp_tool_call", server: "offline_incident_analysis", tool: "build_topology", status: "completed" } },
  { type: "item.completed", item: { id: "item_6", type: "mcp_tool_call", server: "offline_incident_analysis", tool: "get_k8_spec", arguments: {}, result: null, error: { message: "spec not found" }, status: "failed" } },
  { type: "item.completed", item: { id: "item_7", type: "web_search", query: "flagd cartFailure flag" } },
  { type: "item.updated", item: { id: "item_0", type: "todo_list", items: [{ text: "List snapshot files", completed: true }, { text: "Write agent_output.json", completed: false }] } },
  { type: "item.completed", item: { id: "item_8", type: "file_change", changes: [{ path: "agent_output.json", kind: "add" }], status: "completed" } },
  { type: "item.completed", item: { id: "item_0", type: "todo_list", items: [{ text: "List snapshot files", completed: true }, { text: "Write agent_output.json", completed: true }] } },
  { type: "item.completed", item: { id: "item_9", type: "agent_message", text: "Root cause: otel-demo/ConfigMap/flagd-config." } },
  { type: "turn.completed", usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122 } },
  { type: "turn.started" },
  { type: "turn.completed", usage: { input_tokens: 25010, cached_input_tokens: 24448, output_tokens: 0 } },
  { type: "turn.started" },
  { type: "item.completed", item: { id: "item_10", type: "error", message: "command timed out" } },
  { type: "turn.failed", error: { message: "stream disconnected before completion" } },
  { type: "error", message: "Reconnecting... 1/5" },
];

function zeroRun(withRollout: boolean): string {
  const root = mkdtempSync(join(tmpdir(), "faultline-exec-"));
  const run = join(root, "agent_outputs", "2", "1");
  mkdirSync(join(run, "traces"), { recursive: true });
  const stdout = join(run, "traces", "stdout.log");
  writeFileSync(stdout, [...STREAM.map((e) => JSON.stringify(e)), "Error: codex exited with status 1"].join("\n") + "\n");
  writeFileSync(join(run, "agent_output.json"), JSON.stringify({ entities: [{ name: "otel-demo/ConfigMap/flagd-config", contributing_factor: true }] }));
  writeFileSync(join(run, "config.toml"), 'profile = "sre"\n\n[profiles.sre]\nmodel = "openai/gpt-oss-120b"\n');
  if (withRollout) {
    const sessions = join(run, "sessions", "2026", "01", "15");
    mkdirSync(sessions, { recursive: true });
    writeFileSync(
      join(sessions, `rollout-2026-01-15T14-12-52-${THREAD}.jsonl`),
      [
        { timestamp: "2026-01-15T19:12:52.000Z", type: "session_meta", payload: { id: THREAD } },
        { timestamp: "2026-01-15T19:12:53.000Z", type: "turn_context", payload: { model: "gemini-3-flash-preview" } },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n") + "\n",
    );
  }
  return stdout;
}

describe("codex-exec", () => {
  it("keeps item.completed only and maps every item type", async () => {
    const stdout = zeroRun(true);
    const r = await readAll(stdout);
    expect(r.files[0]!.format).toBe("codex-exec");
    expect(r.traces).toHaveLength(1);
    const t = r.traces[0]!;
    expect(t.id).toBe(THREAD);
    expect(t.framework).toBe("codex");
    expect(t.model).toBe("gemini-3-flash-preview");
    expect(t.steps.map((s) => [s.kind, s.tool?.name ?? s.tags?.join() ?? ""])).toEqual([
      ["reasoning", ""],
      ["tool_call", "shell"],
      ["tool_result", "shell"],
      ["tool_call", "shell"],
      ["tool_result", "shell"],
      ["tool_call", "mcp__offline_incident_analysis__alert_summary"],
      ["tool_result", "mcp__offline_incident_analysis__alert_summary"],
      ["tool_call", "mcp__offline_incident_analysis__build_topology"],
      ["tool_call", "mcp__offline_incident_analysis__get_k8_spec"],
      ["tool_result", "mcp__offline_incident_analysis__get_k8_spec"],
      ["tool_call", "web_search"],
      ["tool_call", "file_change"],
      ["tool_result", "file_change"],
      ["plan", "todo_list"],
      ["message", ""],
      ["message", "empty"],
      ["error", ""],
      ["error", "turn-failed"],
      ["error", ""],
    ]);
    const failed = t.steps[4]!;
    expect(failed.tool).toMatchObject({ callId: "item_3", exitCode: 1, isError: true, callIndex: 3 });
    expect(failed.text).toBe("head: alerts/missing.json: No such file or directory\n");
    expect(t.steps[2]!.tool).toMatchObject({ exitCode: 0, isError: false, output: "alerts\nk8s_events_raw.tsv\n" });
    expect(t.steps[5]!.tool!.args).toEqual({ base_dir: "/snapshots/Scenario-2" });
    expect(t.steps[6]!.text).toBe('[{"alertname":"RequestErrorRate"}]');
    expect(t.steps[7]!.tags).toEqual(["no-result-recorded"]);
    expect(t.steps[9]!.tool).toMatchObject({ isError: true, output: "spec not found" });
    expect(t.steps[13]!.text).toBe("[x] List snapshot files\n[x] Write agent_output.json");
    expect(t.steps[14]).toMatchObject({ text: "Root cause: otel-demo/ConfigMap/flagd-config.", usage: { input: 24763, cachedInput: 24448, output: 122 } });
    expect(t.steps[15]).toMatchObject({ role: "assistant", text: "", usage: { input: 25010, cachedInput: 24448, output: 0 } });
    expect(t.steps[17]!.text).toBe("stream disconnected before completion");
    expect(t.steps[18]!.text).toBe("Reconnecting... 1/5");
    expect(t.metadata).toMatchObject({ turns: 3, failedTurns: 1, emptyTurns: 1, ignoredEvents: { "item.started": 2, "item.updated": 1 } });
    expect(t.outcome?.deliverable).toBe(join(stdout, "..", "..", "agent_output.json"));
    expect(t.task).toEqual({ id: "2", benchmark: "itbench-sre" });
    // the harness line that is not an event is reported with its line, not dropped silently
    expect(r.diagnostics.filter((d) => d.level !== "notice").map((d) => [d.line, d.skipped])).toEqual([[STREAM.length + 1, "line"]]);
  });

  it("falls back to the model of config.toml's active profile when no rollout matches", async () => {
    const r = await readAll(zeroRun(false));
    expect(r.traces[0]!.model).toBe("gpt-oss-120b");
    expect(r.traces[0]!.metadata.modelRaw).toBe("openai/gpt-oss-120b");
  });

  it("continues one trace when the same thread is resumed and starts another for a new thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-exec-resume-"));
    const p = join(dir, "events.jsonl");
    const lines = [
      { type: "thread.started", thread_id: "t-1" },
      { type: "turn.started" },
      { type: "item.completed", item: { id: "item_0", type: "agent_message", text: "first" } },
      { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 2 } },
      { type: "thread.started", thread_id: "t-1" },
      { type: "turn.started" },
      { type: "item.completed", item: { id: "item_0", type: "agent_message", text: "again" } },
      { type: "turn.completed", usage: { input_tokens: 12, cached_input_tokens: 0, output_tokens: 2 } },
      { type: "thread.started", thread_id: "t-2" },
    ];
    writeFileSync(p, lines.map((l) => JSON.stringify(l)).join("\n"));
    const r = await readAll(p);
    expect(r.traces.map((t) => [t.id, t.steps.map((s) => s.text).join("|"), t.model ?? null])).toEqual([
      ["t-1", "first|thread resumed (t-1)|again", null],
      ["t-2", "", null],
    ]);
  });

  it("maps item payloads independently of the stream", () => {
    expect(itemToSteps({ id: "x", type: "collab_tool_call", tool: "spawn_agent", prompt: "check logs", status: "failed" }, 3).map((s) => [s.kind, s.tool?.isError ?? null])).toEqual([
      ["tool_call", null],
      ["tool_result", true],
    ]);
    expect(itemToSteps({ id: "y", type: "something_new" }, 4)[0]).toMatchObject({ kind: "event", text: "item something_new", ref: { line: 4 } });
    expect(modelFromConfig('model = "o3"\n[profiles.a]\nmodel = "x"\n')).toBe("o3");
    expect(modelFromConfig('[mcp_servers.a]\ncommand = "python"\n')).toBeUndefined();
  });
});
