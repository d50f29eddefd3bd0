import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Trace } from "../../trace/index.js";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";
import { parseToolOutput } from "./codex-rollout.js";

const ROLLOUTS = corpus("itbench", "rollouts");
const NAMES = readdirSync(ROLLOUTS);
/** A corpus rollout by the time stamp in its name, e.g. `12-15-06`. */
const file = (stamp: string) => join(ROLLOUTS, NAMES.find((n) => n.includes(`T${stamp}-`))!);

let traces: Trace[] = [];
const byStamp = (stamp: string): Trace => {
  const t = traces.find((x) => basename(x.source.file).includes(stamp));
  if (!t) throw new Error(`no trace for ${stamp}`);
  return t;
};
const toolCalls = (t: Trace) => t.steps.filter((s) => s.role === "assistant" && (s.kind === "tool_call" || s.kind === "plan") && s.tool);
const tagged = (t: Trace, tag: string) => t.steps.filter((s) => s.tags?.includes(tag));
/** Lines of a rollout file with their 1-based numbers, read independently of the adapter. */
const rawLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text }))
    .filter((l) => l.text.trim() !== "")
    .map((l) => ({ line: l.line, ...(JSON.parse(l.text) as { timestamp: string; type: string; payload: Record<string, unknown> }) }));

beforeAll(async () => {
  const r = await readAll(ROLLOUTS);
  traces = r.traces;
  expect(r.diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
});

describe("codex-rollout on the ITBench corpus", () => {
  it("reads every rollout as one trace (MANIFEST: 28)", () => {
    expect(traces).toHaveLength(28);
    expect(new Set(traces.map((t) => t.source.format))).toEqual(new Set(["codex-rollout"]));
    expect(traces.every((t) => t.framework === "codex" && t.agents.join() === "codex")).toBe(true);
  });

  it("takes the session id, CLI version and instructions from session_meta", () => {
    const t = byStamp("11-08-40");
    expect(t.id).toBe("019bc26a-8a6c-7f43-8605-0aa1c35bd7f8");
    expect(t.metadata.cliVersion).toBe("0.80.0");
    expect(String(t.metadata.instructions).startsWith("**Task**: \n\nYou are an expert SRE")).toBe(true);
    expect(t.task).toEqual({ id: "2", text: "Begin investigation", benchmark: "itbench-sre" });
  });

  it("takes the model from turn_context and normalises routing prefixes", () => {
    expect(byStamp("14-12-52").model).toBe("gemini-3-flash-preview");
    expect(byStamp("12-26-09").model).toBe("mistral");
    const watsonx = byStamp("11-14-05");
    expect(watsonx.model).toBe("gpt-oss-120b");
    expect(watsonx.metadata.modelRaw).toBe("watsonx/openai/gpt-oss-120b");
    expect(byStamp("11-42-08").metadata.modelRaw).toBe("openai/gpt-oss-120b");
  });

  it("counts the tool calls of the 1046952-byte gpt-oss-120b-custom run (MANIFEST: 25) and of the Gemini runs", () => {
    const t = byStamp("12-15-06");
    expect(statSync(t.source.file).size).toBe(1046952);
    expect(t.model).toBe("gpt-oss-120b-custom");
    expect(toolCalls(t)).toHaveLength(25);
    expect(t.steps.filter((s) => s.kind === "tool_result")).toHaveLength(25);
    // MANIFEST counts function calls, update_plan included (kind plan here)
    expect(toolCalls(byStamp("14-12-52"))).toHaveLength(67);
    expect(byStamp("14-12-52").steps.filter((s) => s.kind === "plan")).toHaveLength(25);
    expect(toolCalls(byStamp("14-26-37"))).toHaveLength(44);
    expect(toolCalls(byStamp("14-54-56"))).toHaveLength(12);
    expect(toolCalls(byStamp("14-55-37"))).toHaveLength(11);
  });

  it("pairs shell results by call_id with exit code, duration and error flag", () => {
    const t = byStamp("12-15-06");
    const result = t.steps.find((s) => s.kind === "tool_result" && s.tool?.callId === "chatcmpl-tool-42673c3342fd41509b244ccb973ac1b5")!;
    expect(result.tool).toMatchObject({ name: "shell", exitCode: 1, isError: true, durationMs: 600 });
    expect(result.text).toMatch(/^head: .*: No such file or directory\n$/);
    const call = t.steps[result.tool!.callIndex!]!;
    expect(call.kind).toBe("tool_call");
    expect((call.tool!.args as { command: string[] }).command.slice(0, 2)).toEqual(["bash", "-lc"]);
    // 11 non-zero exit codes in the first Gemini run (itbench.md §5.6): 9 × sandbox 71, 2 × 1
    const failed = byStamp("14-12-52").steps.filter((s) => s.kind === "tool_result" && (s.tool?.exitCode ?? 0) !== 0);
    expect(failed.map((s) => s.tool!.exitCode).sort()).toEqual([1, 1, 71, 71, 71, 71, 71, 71, 71, 71, 71]);
  });

  it("keeps truncated apply_patch arguments as text and marks Codex's refusal as an error", () => {
    const t = byStamp("12-15-06");
    const invalid = tagged(t, "invalid-arguments");
    expect(invalid.map((s) => s.tool!.name)).toEqual(["apply_patch", "apply_patch", "apply_patch", "apply_patch"]);
    expect(typeof invalid[0]!.tool!.args).toBe("string");
    const refusal = t.steps[invalid[0]!.tool!.resultIndex!]!;
    expect(refusal.tool).toMatchObject({ isError: true });
    expect(refusal.text).toBe("failed to parse function arguments: EOF while parsing a string at line 2 column 1502");
  });

  it("parses MCP results from their list of text parts", () => {
    const t = byStamp("12-15-06");
    const mcp = t.steps.find((s) => s.kind === "tool_result" && s.tool?.name === "mcp__offline_incident_analysis__event_analysis")!;
    expect(mcp.text!.startsWith('{\n  "total_count": 3,')).toBe(true);
  });

  it("classifies the first two user messages as injected context, the third as the task, later ones as harness retries", () => {
    for (const t of traces) {
      const injected = tagged(t, "injected-context");
      expect(injected.map((s) => [s.index, s.role])).toEqual([
        [0, "system"],
        [1, "system"],
      ]);
    }
    expect(byStamp("11-08-40").steps[0]!.text!.startsWith("# AGENTS.md instructions for")).toBe(true);
    expect(byStamp("11-08-40").steps[1]!.text!.startsWith("<environment_context>")).toBe(true);
    const retries = tagged(byStamp("11-08-40"), "harness-retry");
    expect(retries).toHaveLength(5);
    expect(retries.every((s) => s.role === "user" && s.text!.startsWith("I don't see agent_output.json file. Please resume"))).toBe(true);
  });

  it("counts harness retries: 5 in 14 of the 16 gpt-oss runs, 4 and 3 in the others", () => {
    const gptOss = traces.filter((t) => t.model?.startsWith("gpt-oss"));
    expect(gptOss).toHaveLength(16);
    const counts = gptOss.map((t) => tagged(t, "harness-retry").length);
    expect(counts.filter((n) => n === 5)).toHaveLength(14);
    expect(tagged(byStamp("11-13-25"), "harness-retry")).toHaveLength(4);
    expect(tagged(byStamp("12-15-06"), "harness-retry")).toHaveLength(3);
    expect(traces.filter((t) => !t.model?.startsWith("gpt-oss")).every((t) => tagged(t, "harness-retry").length === 0)).toBe(true);
  });

  it("shows model calls that produced nothing as empty assistant steps at their turn_context line", () => {
    const path = file("11-08-40");
    const t = byStamp("11-08-40");
    const empty = tagged(t, "empty");
    const turnContextLines = rawLines(path).filter((l) => l.type === "turn_context").map((l) => l.line);
    expect(turnContextLines).toHaveLength(7);
    expect(empty.map((s) => s.ref?.line)).toEqual(turnContextLines);
    expect(empty.every((s) => s.kind === "message" && s.role === "assistant" && s.text === "")).toBe(true);
    expect(t.steps.filter((s) => s.role === "assistant" && !s.tags?.includes("empty"))).toHaveLength(0);
    expect(t.metadata.emptyTurns).toBe(7);
    // the mistral run whose two calls never answered, and the Gemini run that stopped after a call with no output
    expect(tagged(byStamp("12-28-25"), "empty")).toHaveLength(2);
    expect(tagged(byStamp("14-54-56"), "empty").map((s) => s.index)).toEqual([byStamp("14-54-56").steps.length - 1]);
    // a call that answered leaves no placeholder behind
    expect(tagged(byStamp("14-12-52"), "empty")).toHaveLength(0);
  });

  it("puts the context-window-full token count on the last model call of the custom gpt-oss run", () => {
    const t = byStamp("12-15-06");
    const last = t.steps[t.steps.length - 1]!;
    expect(last.tags).toEqual(["empty", "context-window-full"]);
    expect([t.metadata.totalTokens, t.metadata.contextWindow]).toEqual([91200, 91200]);
  });

  it("keeps event_msg mirrors once: 10 assistant messages in the Gemini run with 10 agent_message events", () => {
    const t = byStamp("14-26-37");
    const said = t.steps.filter((s) => s.kind === "message" && s.role === "assistant");
    expect(said).toHaveLength(10);
    expect(said[0]!.text).toBe("I'm starting the investigation by listing the files in the incident snapshot directory.\n");
    expect(t.steps.filter((s) => s.text === "Begin investigation")).toHaveLength(1);
  });

  it("gives the header-only runs zero model output", () => {
    for (const stamp of ["14-18-00", "14-30-38", "13-50-18"]) {
      const t = byStamp(stamp);
      expect(t.steps).toHaveLength(2);
      expect(t.steps.filter((s) => s.role === "assistant")).toHaveLength(0);
      expect(t.model).toBeUndefined();
      expect(t.task?.text).toBeUndefined();
    }
    expect(byStamp("14-18-00").metadata.itbench).toMatchObject({ runKind: "remediation", deliverableName: "agent_remediation.json" });
  });

  it("records turn_aborted as a termination step", () => {
    const t = byStamp("11-13-25");
    const last = t.steps[t.steps.length - 1]!;
    expect(last).toMatchObject({ kind: "termination", text: "turn aborted: interrupted", time: "2026-01-15T16:13:28.110Z" });
  });

  it("times every step from its line and points back to it", () => {
    const path = file("14-55-37");
    const lines = new Map(rawLines(path).map((l) => [l.line, l]));
    const t = byStamp("14-55-37");
    for (const s of t.steps) expect(s.time).toBe(lines.get(s.ref!.line!)!.timestamp);
    expect(t.task?.text?.startsWith("**Task**: Generate Remediation Plan")).toBe(true);
    expect(t.metadata.itbench).toMatchObject({ runKind: "remediation", deliverableName: "agent_remediation.json" });
  });
});

describe("codex-rollout sidecars in a Zero run folder", () => {
  const root = mkdtempSync(join(tmpdir(), "faultline-zero-"));
  const trial = join(root, "outputs", "agent_outputs", "2", "1");
  const sessions = join(trial, "sessions", "2026", "01", "15");
  mkdirSync(sessions, { recursive: true });
  for (const stamp of ["14-54-56", "14-55-37", "11-08-40"]) symlinkSync(file(stamp), join(sessions, basename(file(stamp))));
  symlinkSync(corpus("itbench", "run-scenario-2", "agent_output.json"), join(trial, "agent_output.json"));
  symlinkSync(corpus("itbench", "run-scenario-2", "agent_remediation.json"), join(trial, "agent_remediation.json"));
  // two ground truths beside the incident folders: only the one naming incident 2 may be taken
  symlinkSync(corpus("itbench", "ground-truth", "scenario_2_groundtruth_v1.yaml"), join(root, "outputs", "agent_outputs", "scenario_2_groundtruth_v1.yaml"));
  symlinkSync(corpus("itbench", "ground-truth", "scenario_1_groundtruth_v1.yaml"), join(root, "outputs", "agent_outputs", "scenario_1_groundtruth_v1.yaml"));

  it("finds the deliverable of each run kind and the ground truth of the incident", async () => {
    const r = await readAll(join(root, "outputs"));
    expect(r.traces).toHaveLength(3);
    const diagnosis = r.traces.find((t) => t.source.file.includes("14-54-56"))!;
    expect(diagnosis.outcome).toEqual({
      deliverable: join(trial, "agent_output.json"),
      groundTruth: join(root, "outputs", "agent_outputs", "scenario_2_groundtruth_v1.yaml"),
    });
    expect(diagnosis.source.sidecars).toEqual([diagnosis.outcome!.deliverable, diagnosis.outcome!.groundTruth]);
    expect(diagnosis.metadata.itbench).toMatchObject({ incident: "2", trial: "1", groundTruthFrom: "run" });
    const remediation = r.traces.find((t) => t.source.file.includes("14-55-37"))!;
    expect(remediation.outcome?.deliverable).toBe(join(trial, "agent_remediation.json"));
    const files = r.files.filter((f) => f.role !== "trace").map((f) => [basename(f.path), f.role]);
    expect(files.sort()).toEqual([
      ["agent_output.json", "supporting"],
      ["agent_remediation.json", "supporting"],
      ["scenario_1_groundtruth_v1.yaml", "supporting"],
      ["scenario_2_groundtruth_v1.yaml", "supporting"],
    ]);
  });

  it("falls back to the --ground-truth option when the run has none", async () => {
    const bare = mkdtempSync(join(tmpdir(), "faultline-zero-nogt-"));
    const dir = join(bare, "agent_outputs", "2", "1", "sessions", "2026", "01", "15");
    mkdirSync(dir, { recursive: true });
    const n = basename(file("14-54-56"));
    symlinkSync(file("14-54-56"), join(dir, n));
    const option = corpus("itbench", "ground-truth", "scenario_2_groundtruth_v1.yaml");
    const without = await readAll(join(dir, n));
    expect(without.traces[0]!.outcome).toBeUndefined();
    const withOption = await readAll(join(dir, n), { groundTruth: option });
    expect(withOption.traces[0]!.outcome).toEqual({ groundTruth: option });
    expect(withOption.traces[0]!.metadata.itbench).toMatchObject({ groundTruthFrom: "option" });
    // a folder of scenario folders is accepted too
    const gtDir = mkdtempSync(join(tmpdir(), "faultline-gt-"));
    mkdirSync(join(gtDir, "Scenario-2"));
    symlinkSync(option, join(gtDir, "Scenario-2", "ground_truth.yaml"));
    const fromDir = await readAll(join(dir, n), { groundTruth: gtDir });
    expect(fromDir.traces[0]!.outcome?.groundTruth).toBe(join(gtDir, "Scenario-2", "ground_truth.yaml"));
  });
});

describe("codex-rollout ground truth by scenario id anywhere in the input", () => {
  it("joins scenario 2's v1 ground truth to every corpus rollout when the itbench folder is read, and says why", async () => {
    const root = corpus("itbench");
    const v1 = join(root, "ground-truth", "scenario_2_groundtruth_v1.yaml");
    const r = await readAll(root);
    expect(r.traces).toHaveLength(28);
    for (const t of r.traces) {
      // no deliverable beside the rollouts: run-scenario-2/agent_output.json belongs to another session and is not joined
      expect(t.outcome).toEqual({ groundTruth: v1 });
      expect(t.metadata.itbench).toMatchObject({ scenario: "2", groundTruthFrom: "input-tree" });
    }
    // the diagnosis runs say both sources; the remediation prompts name no snapshot folder
    expect(byStamp("14-12-52").metadata.itbench).toMatchObject({ scenarioFrom: "run folder agent_outputs/2/1; snapshot folder Scenario-2" });
    const joined = r.diagnostics.filter((d) => d.message.startsWith("ground truth joined:"));
    expect(joined).toHaveLength(28);
    expect(joined.every((d) => d.level === "notice")).toBe(true);
    expect(joined.find((d) => d.file.includes("14-12-52"))!.message).toBe(
      `ground truth joined: ${v1} (found in the input tree for scenario 2 (file name); v1 preferred over scenario_2_groundtruth.yaml (v2); ` +
        "the run attempted scenario 2 (from the run folder agent_outputs/2/1 and the snapshot folder Scenario-2))",
    );
    expect(r.diagnostics.filter((d) => d.level === "warning" || d.level === "error")).toEqual([]);
  });

  it("joins nothing when the rollouts folder alone is read, and when the run folder and snapshot folder disagree", async () => {
    expect(traces.every((t) => t.outcome === undefined)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "faultline-scenario-"));
    mkdirSync(join(dir, "gt"));
    symlinkSync(corpus("itbench", "ground-truth", "scenario_2_groundtruth_v1.yaml"), join(dir, "gt", "scenario_2_groundtruth_v1.yaml"));
    const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: "2026-02-01T10:00:00.000Z", type, payload });
    const instructions = "Your incident data is located in these directories (READ-ONLY):\n- /data/ITBench-Lite/snapshots/sre/v0.2/Scenario-2\n\nWrite your diagnosis to: agent_output.json";
    const write = (name: string, cwd: string) =>
      writeFileSync(
        join(dir, name),
        [
          line("session_meta", { id: name, cwd, originator: "codex_exec", instructions }),
          line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Begin investigation" }] }),
        ].join("\n") + "\n",
      );
    write("rollout-agree.jsonl", "/work/agent_outputs/2/4");
    write("rollout-conflict.jsonl", "/work/agent_outputs/3/1");
    const r = await readAll(dir);
    expect(r.traces.find((t) => t.id === "rollout-agree.jsonl")!.outcome).toEqual({ groundTruth: join(dir, "gt", "scenario_2_groundtruth_v1.yaml") });
    expect(r.traces.find((t) => t.id === "rollout-conflict.jsonl")!.outcome).toBeUndefined();
    expect(r.diagnostics.filter((d) => d.level === "warning").map((d) => d.message)).toEqual([
      "the run's scenario is unclear (run folder agent_outputs/3/1 says scenario 3, snapshot folder Scenario-2 says scenario 2); no ground truth joined by scenario id",
    ]);
  });
});

describe("codex-rollout on inputs the corpus lacks", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-rollout-"));
  const line = (type: string, payload: unknown, ts = "2026-02-01T10:00:00.000Z") => JSON.stringify({ timestamp: ts, type, payload });

  it("maps reasoning, custom tools, compaction, text shell output, usage and a missing mirror", async () => {
    const p = join(dir, "rollout-2026-02-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl");
    writeFileSync(
      p,
      [
        line("session_meta", { id: "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", cli_version: "0.90.0", originator: "codex_cli_rs", instructions: "Fix the bug" }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n</environment_context>" }] }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Fix the failing test" }] }),
        line("turn_context", { model: "openai/gpt-5.1-codex-max", effort: "high" }),
        line("response_item", { type: "reasoning", summary: [{ type: "summary_text", text: "**Reading the test**" }], encrypted_content: "gAAAAB..." }),
        line("event_msg", { type: "agent_reasoning", text: "**Reading the test**" }),
        line("response_item", { type: "custom_tool_call", name: "apply_patch", call_id: "call_1", input: "*** Begin Patch\n*** End Patch" }),
        line("response_item", { type: "custom_tool_call_output", call_id: "call_1", output: '{"output":"Success.","metadata":{"exit_code":0,"duration_seconds":0.2}}' }),
        line("response_item", { type: "function_call", name: "shell", call_id: "call_2", arguments: '{"command":["pytest"]}' }),
        line("response_item", { type: "function_call_output", call_id: "call_2", output: "Exit code: 2\nWall time: 1.5 seconds\nOutput:\nFAILED test_x" }),
        line("event_msg", { type: "token_count", info: { last_token_usage: { input_tokens: 1200, cached_input_tokens: 1000, output_tokens: 80, reasoning_output_tokens: 40 } } }),
        line("compacted", { message: "summary of the work so far" }),
        line("event_msg", { type: "agent_message", message: "The test still fails." }),
        line("event_msg", { type: "user_message", message: "try again" }),
      ].join("\n") + "\n",
    );
    const r = await readAll(p);
    expect(r.diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    const t = r.traces[0]!;
    expect(t.model).toBe("gpt-5.1-codex-max");
    expect(t.task?.benchmark).toBeUndefined();
    expect(t.steps.map((s) => [s.kind, s.role, s.tags ?? []])).toEqual([
      ["message", "system", ["injected-context"]],
      ["message", "user", ["task"]],
      ["reasoning", "assistant", ["encrypted"]],
      ["tool_call", "assistant", []],
      ["tool_result", "tool", []],
      ["tool_call", "assistant", []],
      ["tool_result", "tool", []],
      ["event", "system", ["compaction"]],
      ["message", "assistant", []],
      ["message", "user", []],
    ]);
    expect(t.steps[2]!.text).toBe("**Reading the test**");
    expect(t.steps[4]!.tool).toMatchObject({ name: "apply_patch", exitCode: 0, durationMs: 200, isError: false });
    expect(t.steps[6]!.tool).toMatchObject({ name: "shell", exitCode: 2, durationMs: 1500, isError: true, output: "FAILED test_x" });
    expect(t.steps[5]!.usage).toEqual({ input: 1200, output: 80, cachedInput: 1000, reasoning: 40 });
    expect(t.metadata.encryptedReasoning).toBe(1);
  });

  it("reports lines that are not rollout lines and keeps the rest", async () => {
    const p = join(dir, "broken.jsonl");
    writeFileSync(
      p,
      [
        line("session_meta", { id: "s-1", originator: "codex_exec" }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Begin investigation" }] }),
        '{"timestamp":"2026-02-01T10:00:01.000Z","type":"response_item","payload":{"type":"message"',
        JSON.stringify({ timestamp: "2026-02-01T10:00:02.000Z", type: "response_item", payload: "not an object" }),
        line("turn_context", { model: "gpt-oss-120b" }),
      ].join("\n") + "\n",
    );
    const r = await readAll(p);
    expect(r.traces).toHaveLength(1);
    expect(r.traces[0]!.steps.map((s) => s.kind)).toEqual(["message", "message"]);
    const problems = r.diagnostics.filter((d) => d.level !== "notice").map((d) => [d.line, d.skipped]);
    expect(problems).toEqual([
      [3, "line"],
      [4, "record"],
    ]);
  });

  it("parses each tool output shape", () => {
    expect(parseToolOutput('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":0.0}}')).toEqual({ output: "ok\n", exitCode: 0, durationMs: 0, isError: false });
    expect(parseToolOutput('[{"type":"text","text":"a"},{"type":"image","data":"…"}]')).toEqual({ output: "a\n[image]" });
    expect(parseToolOutput("Plan updated")).toEqual({ output: "Plan updated" });
    expect(parseToolOutput("unsupported call: foo")).toEqual({ output: "unsupported call: foo", isError: true });
  });
});
