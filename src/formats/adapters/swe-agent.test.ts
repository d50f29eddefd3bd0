import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { manifestTraceCount } from "../../testing/manifest.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";

const TEST_REPO = "tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1";
const PYDICOM = "tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1";
const MARSHMALLOW = "trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1";
const MADEUP = "commit0_prepare/traj_example";

const raw = (...parts: string[]) => JSON.parse(readFileSync(corpus("swe-agent", ...parts), "utf8"));
const byFile = (traces: Trace[], part: string) => {
  const t = traces.find((x) => x.source.file.includes(part));
  if (!t) throw new Error(`no trace from ${part}`);
  return t;
};

describe("swe-agent on the corpus", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("swe-agent"));
  });

  it("reads the MANIFEST's trace count, refuses nothing and recognises every supporting file by its keys", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(manifestTraceCount("swe-agent"));
    expect(traces).toHaveLength(6);
    expect(traces.every((t) => t.source.format === "swe-agent" && t.framework === "swe-agent")).toBe(true);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    const supporting = files.filter((f) => f.role === "supporting");
    expect(supporting.map((f) => f.path.split("/").pop()).sort()).toEqual([...Array(4).fill("all_preds.jsonl"), ...Array(5).fill("args.yaml")]);
    expect(supporting.every((f) => f.note?.startsWith("swe-agent: "))).toBe(true);
  });

  it("v0 (test-repo-i1): model from args.yaml, one tool_call per trajectory step named by the command, linked raw observations", () => {
    const t = byFile(result.traces, "swe-agent__test-repo-i1.traj");
    const src = raw(TEST_REPO, "swe-agent__test-repo-i1.traj");
    expect(readFileSync(corpus("swe-agent", TEST_REPO, "args.yaml"), "utf8")).toContain("model_name: gpt4\n");
    expect(t.model).toBe("gpt4");
    expect(t.metadata).toMatchObject({ generation: "v0", exitStatus: "submitted", modelFrom: "args.yaml" });
    expect(t.id).toBe("swe-agent__test-repo-i1");
    // history and trajectory hold the same 5 turns: kept once
    const calls = t.steps.filter((s) => s.kind === "tool_call");
    expect(calls.map((s) => s.tool!.name)).toEqual(["find_file", "open", "edit", "python", "submit"]);
    expect(calls).toHaveLength(src.trajectory.length);
    expect(t.steps.filter((s) => s.kind === "reasoning")).toHaveLength(src.trajectory.length);
    expect(t.steps).toHaveLength(3 + 3 * src.trajectory.length);
    const open = calls[1]!;
    expect(open.text).toBe("open tests/missing_colon.py");
    const result1 = t.steps[open.tool!.resultIndex!]!;
    expect(result1).toMatchObject({ kind: "tool_result", role: "tool", tool: { name: "open", callId: open.tool!.callId, output: src.trajectory[1].observation } });
    // the text is what the model saw: the history observation with SWE-agent's state footer
    expect(result1.text).toBe(src.history[6].content);
    expect(t.steps[open.index - 1]).toMatchObject({ kind: "reasoning", text: src.trajectory[1].thought });
    // the submitted patch is only in the trajectory's last observation
    const submit = calls[4]!;
    expect(t.steps[submit.tool!.resultIndex!]!.tool!.output).toBe(src.info.submission);
    expect(t.steps[1]).toMatchObject({ role: "user", tags: ["injected-context", "demonstration"] });
    expect(t.steps[0]).toMatchObject({ role: "system", kind: "message" });
    expect(t.task?.text?.startsWith("SyntaxError: invalid syntax")).toBe(true);
    expect(t.outcome).toMatchObject({ raw: { exitStatus: "submitted", submitted: true } });
    expect(t.outcome?.success).toBeUndefined();
  });

  it("v1 function calling (marshmallow-1867): tool names and call ids from history tool_calls, durations, replay flag", () => {
    const t = byFile(result.traces, "marshmallow-code__marshmallow-1867.traj");
    const src = raw(MARSHMALLOW, "marshmallow-code__marshmallow-1867.traj");
    expect(src.replay_config.agent.model.name).toBe("gpt-4o");
    expect(t.model).toBe("gpt-4o");
    expect(t.metadata).toMatchObject({ generation: "v1", modelFrom: "replay_config", replayed: true, exitStatus: "submitted" });
    const calls = t.steps.filter((s) => s.kind === "tool_call");
    expect(calls).toHaveLength(src.trajectory.length);
    expect(calls[0]!.tool).toMatchObject({ name: "create", callId: "call_cyI71DYnRdoLHWwtZgIaW2wr", args: { filename: "reproduce.py" } });
    expect(calls[2]!.tool!.name).toBe("bash");
    const created = t.steps[calls[0]!.tool!.resultIndex!]!;
    expect(created.tool!.output).toBe(src.trajectory[0].observation);
    expect(created.tool!.durationMs).toBeCloseTo(src.trajectory[0].execution_time * 1000, 6);
    expect(t.task?.text).toBe(src.replay_config.problem_statement.text);
  });

  it("the commit0 'made up' runs produced no patch: outcome false with exit status submitted, model from args.yaml", () => {
    const madeUp = result.traces.filter((t) => t.source.file.includes(MADEUP));
    expect(madeUp).toHaveLength(3);
    for (const t of madeUp) {
      expect(raw(t.source.file.split("/swe-agent/")[1]!).info.submission).toBeNull();
      expect(t.model).toBe("claude-3-5-sonnet-20240620");
      expect(t.outcome).toMatchObject({ success: false, raw: { exitStatus: "submitted", submitted: false, predictionPatch: "null" } });
      expect(t.source.sidecars?.some((s) => s.endsWith("all_preds.jsonl"))).toBe(true);
      expect(t.task?.id).toBe("97af1e");
    }
    const portalocker = byFile(result.traces, "portalocker_madeup_cmd");
    expect(portalocker.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool!.name)).toEqual(["edit", "edit", "submit"]);
    const firstEdit = portalocker.steps.find((s) => s.kind === "tool_call")!;
    expect(portalocker.steps[firstEdit.tool!.resultIndex!]!.tool!.output).toBe("No file open. Use the `open` command first.");
  });

  it("marks the edits SWE-agent refused as failed results: the linter's syntax-error rejection and 'No file open'", () => {
    const refused = /^\s*(Your proposed edit has introduced new syntax error\(s\)|No file open\. Use the `open` command first\.)/;
    const results = result.traces.flatMap((t) => t.steps.filter((s) => s.kind === "tool_result").map((s) => ({ t, s })));
    const failed = results.filter(({ s }) => s.tool?.isError === true);
    // every flagged result has one of the two wordings, and every result with one is flagged
    expect(failed.every(({ s }) => refused.test(s.tool!.output!))).toBe(true);
    expect(results.filter(({ s }) => refused.test(s.tool!.output ?? "")).length).toBe(failed.length);
    const pydicom = byFile(result.traces, "pydicom__pydicom-1458.traj");
    const src = raw(PYDICOM, "pydicom__pydicom-1458.traj");
    const lintRejections = src.trajectory.filter((s: { observation: string }) => s.observation.startsWith("Your proposed edit has introduced new syntax error(s)")).length;
    expect(lintRejections).toBe(3);
    expect(pydicom.steps.filter((s) => s.kind === "tool_result" && s.tool?.isError)).toHaveLength(lintRejections);
    const rejected = pydicom.steps.find((s) => s.kind === "tool_result" && s.tool?.isError)!;
    expect(pydicom.steps[rejected.tool!.callIndex!]!.tool!.name).toBe("edit");
    const portalocker = byFile(result.traces, "portalocker_madeup_cmd");
    // both of its edits were refused, the submit was not
    expect(portalocker.steps.filter((s) => s.kind === "tool_result").map((s) => [s.tool!.name, s.tool!.isError ?? false])).toEqual([
      ["edit", true],
      ["edit", true],
      ["submit", false],
    ]);
    // a successful edit of the same run family is not flagged
    const testRepo = byFile(result.traces, "swe-agent__test-repo-i1.traj");
    expect(testRepo.steps.filter((s) => s.kind === "tool_result" && s.tool?.isError)).toEqual([]);
  });

  it("pydicom-1458 keeps its patch and reads the matching all_preds.jsonl line", () => {
    const t = byFile(result.traces, "pydicom__pydicom-1458.traj");
    const pred = JSON.parse(readFileSync(corpus("swe-agent", PYDICOM, "all_preds.jsonl"), "utf8").trim());
    expect(pred.instance_id).toBe("pydicom__pydicom-1458");
    expect(t.outcome?.raw).toMatchObject({ submitted: true, predictionPatch: "present" });
    expect(t.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool!.name)).toEqual(
      raw(PYDICOM, "pydicom__pydicom-1458.traj").trajectory.map((s: { action: string }) => s.action.trim().split(/\s+/)[0]),
    );
  });
});

describe("swe-agent on bad and partial input", () => {
  const trajectory = (steps: unknown[], history: unknown[]) => JSON.stringify({ environment: "swe_main", trajectory: steps, history, info: { exit_status: "exit_cost", submission: null } });

  it("reports a step that is not an object by its pointer, keeps the rest, and says when history and trajectory disagree", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-swe-agent-"));
    const file = join(dir, "demo__demo-1.traj");
    writeFileSync(
      file,
      trajectory(
        [{ action: "ls\n", observation: "a.py\n", thought: "look", response: "look\n```\nls\n```" }, 42, { action: "submit\n", observation: "", thought: "done", response: "" }],
        [
          { role: "system", content: "SETTING", agent: "primary" },
          { role: "user", content: "ISSUE:\nfix it\n\nINSTRUCTIONS:\ngo", agent: "primary" },
          { role: "assistant", content: "look", thought: "look", action: "ls\n", agent: "primary" },
          { role: "user", content: "a.py\n(Open file: n/a)", agent: "primary" },
        ],
      ),
    );
    const { traces, diagnostics } = await readAll(file);
    expect(traces).toHaveLength(1);
    const t = traces[0]!;
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", file, message: expect.stringContaining("/trajectory/1"), skipped: "record" }));
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "warning", message: expect.stringContaining("history and trajectory disagree") }));
    // the turn in both places once, the trajectory-only submit once
    expect(t.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool!.name)).toEqual(["ls", "submit"]);
    expect(t.task?.text).toBe("fix it");
    expect(t.outcome).toMatchObject({ success: false, raw: { exitStatus: "exit_cost", submitted: false } });
    // exit_cost is the cost cap: stated as the final step
    expect(t.steps.at(-1)).toMatchObject({ agent: "swe-agent", role: "system", kind: "termination", text: "exit_status: exit_cost", tags: ["step-limit"], ref: { pointer: "/info/exit_status" } });
  });

  it("keeps SWE-agent's own words for the cost cap after autosubmission, and adds no cap step for other exits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-swe-agent-cost-"));
    const run = (name: string, exitStatus: string) => {
      const file = join(dir, `${name}.traj`);
      const steps = [
        { action: "ls\n", observation: "a.py\n", thought: "look", response: "look" },
        { action: "", observation: "diff --git a/a.py b/a.py", thought: "Exit due to cost limit", response: "Exit due to cost limit" },
      ];
      writeFileSync(file, JSON.stringify({ environment: "swe_main", trajectory: steps, history: [], info: { exit_status: exitStatus, submission: "diff --git a/a.py b/a.py" } }));
      return file;
    };
    const capped = (await readAll(run("demo__cost", "submitted (exit_cost)"))).traces[0]!;
    expect(capped.steps.at(-1)).toMatchObject({ kind: "termination", text: "Exit due to cost limit (exit_status: submitted (exit_cost))", tags: ["step-limit"] });
    const context = (await readAll(run("demo__context", "submitted (exit_context)"))).traces[0]!;
    expect(context.steps.some((s) => s.tags?.includes("step-limit"))).toBe(false);
  });

  it("recognises args.yaml by its keys, not by its name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-swe-agent-args-"));
    writeFileSync(join(dir, "args.yaml"), "name: something else\nsteps: 3\n");
    writeFileSync(join(dir, "run-config.yaml"), "agent:\n  model:\n    model_name: gpt4\nenvironment:\n  image_name: x\n");
    const { files } = await readAll(dir);
    expect(files.find((f) => f.path.endsWith("/args.yaml"))?.role).toBe("skipped");
    expect(files.find((f) => f.path.endsWith("/run-config.yaml"))).toMatchObject({ role: "supporting", note: expect.stringContaining("swe-agent") });
  });
});
