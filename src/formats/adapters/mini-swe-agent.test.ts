import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { manifestTraceCount } from "../../testing/manifest.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";

const RESOLVED = ["django__django-13410", "django__django-16255", "matplotlib__matplotlib-23314", "pydata__xarray-4629", "sympy__sympy-13480", "sympy__sympy-23534"];
const UNRESOLVED = ["astropy__astropy-7606", "django__django-10999", "django__django-11790", "psf__requests-2317", "pytest-dev__pytest-7205", "scikit-learn__scikit-learn-26194"];

const rawTrajectory = (id: string) => JSON.parse(readFileSync(corpus("mini-swe-agent", "trajs", id, `${id}.traj.json`), "utf8"));
const byId = (traces: Trace[], id: string) => {
  const t = traces.find((x) => x.id === id);
  if (!t) throw new Error(`no trace ${id}`);
  return t;
};

describe("mini-swe-agent on the corpus", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("mini-swe-agent"));
  });

  it("reads the MANIFEST's trace count, refuses nothing and recognises every supporting file by its keys", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(manifestTraceCount("mini-swe-agent"));
    expect(traces).toHaveLength(12);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    const notes = files.filter((f) => f.role === "supporting").map((f) => f.note ?? "");
    expect(notes.filter((n) => n.includes("report.json"))).toHaveLength(12);
    expect(notes.filter((n) => n.includes("results_summary.json"))).toHaveLength(1);
    expect(notes.filter((n) => n.includes("instances_by_exit_status"))).toHaveLength(1);
  });

  it("takes the outcome from logs/<id>/report.json: 6 resolved and 6 unresolved, as the MANIFEST lists", () => {
    const { traces } = result;
    expect(traces.filter((t) => t.outcome?.success === true).map((t) => t.id).sort()).toEqual([...RESOLVED].sort());
    expect(traces.filter((t) => t.outcome?.success === false).map((t) => t.id).sort()).toEqual([...UNRESOLVED].sort());
    for (const t of traces) {
      const report = JSON.parse(readFileSync(corpus("mini-swe-agent", "logs", t.id, "report.json"), "utf8"));
      expect(t.outcome).toMatchObject({ success: report.resolved, metric: "swe-bench:resolved", raw: { patchApplied: report.patch_successfully_applied } });
      expect(t.source.sidecars?.[0]?.endsWith(`/logs/${t.id}/report.json`)).toBe(true);
      const src = rawTrajectory(t.id);
      expect(t.metadata.exitStatus).toBe(src.info.exit_status);
      expect(t.metadata.exitStatus).toBe("Submitted");
    }
    const astropy = byId(traces, "astropy__astropy-7606");
    expect(astropy.outcome?.raw).toMatchObject({ status: "unresolved", tests: { FAIL_TO_PASS: expect.any(Object) } });
  });

  it("normalises the model google/gemini-3-pro-preview from info.config.model", () => {
    for (const t of result.traces) {
      const src = rawTrajectory(t.id);
      expect(src.info.config.model.model_name).toBe("google/gemini-3-pro-preview");
      expect(t.model).toBe("gemini-3-pro-preview");
      expect(t.metadata.modelRaw).toBe("google/gemini-3-pro-preview");
      expect(t.framework).toBe("mini-swe-agent");
    }
  });

  it("sympy-23534: the bash block is a tool_call, the next user message its result with the parsed returncode", () => {
    const t = byId(result.traces, "sympy__sympy-23534");
    const src = rawTrajectory("sympy__sympy-23534");
    const calls = t.steps.filter((s) => s.kind === "tool_call");
    expect(calls).toHaveLength(src.messages.filter((m: { role: string }) => m.role === "assistant").length);
    expect(calls[0]).toMatchObject({ agent: "mini-swe-agent", tool: { name: "bash", args: { command: "ls -F" } }, model: "gemini-3-pro-preview" });
    expect(calls[0]!.usage).toEqual({ input: 1489, output: 118, cachedInput: 0, reasoning: 78 });
    const first = t.steps[calls[0]!.tool!.resultIndex!]!;
    expect(first).toMatchObject({ kind: "tool_result", role: "tool", text: src.messages[3].content, tool: { name: "bash", exitCode: 0 } });
    expect(first.tool!.output!.startsWith("AUTHORS\nCODEOWNERS\n")).toBe(true);
    expect(t.steps.find((s) => s.kind === "reasoning" && s.ref?.pointer === "/messages/2")?.text).toBe(
      "THOUGHT: I need to explore the codebase to locate the `symbols` function. I'll start by listing the files in the current directory.",
    );
    expect(t.steps.find((s) => s.ref?.pointer === "/messages/2/extra/response/choices/0/message/reasoning")?.text).toBe(
      src.messages[2].extra.response.choices[0].message.reasoning,
    );
    // the submit command's result is the submitted patch
    const last = t.steps.at(-1)!;
    expect(last).toMatchObject({ kind: "tool_result", text: src.info.submission });
    expect(t.steps[last.tool!.callIndex!]!.text).toBe("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached");
    expect(t.task?.text?.startsWith("Using symbols to create functions doesn't work if there is an extra layer of parentheses")).toBe(true);
  });

  it("psf__requests-2317: a two-block answer is not executed (a format-error re-prompt follows), a timeout is an error result", () => {
    const t = byId(result.traces, "psf__requests-2317");
    const src = rawTrajectory("psf__requests-2317");
    const retry = t.steps.find((s) => s.tags?.includes("format-error"))!;
    expect(retry).toMatchObject({ role: "user", kind: "message", ref: { pointer: "/messages/25" } });
    expect(src.messages[25].content.startsWith("Please always provide EXACTLY ONE action")).toBe(true);
    // a parsing re-prompt is not a request to continue or deliver
    expect(result.traces.flatMap((x) => x.steps).filter((s) => s.tags?.includes("harness-retry"))).toEqual([]);
    expect(t.steps[retry.index - 1]).toMatchObject({ role: "assistant", kind: "message", ref: { pointer: "/messages/24" } });
    const timeout = t.steps.find((s) => s.tags?.includes("timeout"))!;
    expect(timeout).toMatchObject({ kind: "tool_result", tool: { name: "bash", isError: true }, ref: { pointer: "/messages/59" } });
    expect(t.steps[timeout.tool!.callIndex!]!.text).toBe("python3 test_requests.py");
  });
});

describe("mini-swe-agent on bad and partial input", () => {
  const trajectory = (id: string, messages: unknown[]) =>
    JSON.stringify({ info: { exit_status: "LimitsExceeded", submission: "", mini_version: "1.15.0", config: { model: { model_name: "anthropic/claude-sonnet-4" } } }, messages, trajectory_format: "mini-swe-agent-1", instance_id: id });

  it("takes the verdict from results_summary.json when there is no report, and reports a message that is not an object", async () => {
    const root = mkdtempSync(join(tmpdir(), "fl-mini-"));
    mkdirSync(join(root, "trajs", "demo__demo-1"), { recursive: true });
    const file = join(root, "trajs", "demo__demo-1", "demo__demo-1.traj.json");
    writeFileSync(
      file,
      trajectory("demo__demo-1", [
        { role: "system", content: "You are a helpful assistant" },
        { role: "user", content: "<pr_description>\nConsider the following PR description:\nFix the bug\n</pr_description>" },
        { role: "assistant", content: "THOUGHT: look\n\n```bash\nls\n```" },
        "not a message",
        { role: "user", content: "<returncode>2</returncode>\n<output>\nls: cannot access\n</output>" },
      ]),
    );
    writeFileSync(join(root, "results_summary.json"), JSON.stringify({ total: 1, passed: 0, failed: 1, pass_rate: 0, instances: [{ instance_id: "demo__demo-1", resolved: false, patch_applied: false }] }));
    writeFileSync(join(root, "trajs", "exit_statuses_1.yaml"), "instances_by_exit_status:\n  LimitsExceeded:\n  - demo__demo-1\n");
    const { traces, diagnostics, files } = await readAll(root);
    expect(traces).toHaveLength(1);
    const t = traces[0]!;
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", file, message: expect.stringContaining("/messages/3"), skipped: "step" }));
    expect(t.outcome).toMatchObject({ success: false, raw: { exitStatus: "LimitsExceeded", submitted: false } });
    expect(t.metadata).toMatchObject({ exitStatus: "LimitsExceeded", runExitStatus: "LimitsExceeded" });
    expect(t.source.sidecars).toEqual([join(root, "results_summary.json"), join(root, "trajs", "exit_statuses_1.yaml")]);
    expect(t.model).toBe("claude-sonnet-4");
    expect(t.task?.text).toBe("Fix the bug");
    const call = t.steps.find((s) => s.kind === "tool_call")!;
    expect(t.steps[call.tool!.resultIndex!]!.tool).toMatchObject({ exitCode: 2, output: "ls: cannot access" });
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    // LimitsExceeded is the step/cost cap: stated as the final step
    expect(t.steps.at(-1)).toEqual({ index: t.steps.length - 1, agent: "mini-swe-agent", role: "system", kind: "termination", text: "LimitsExceeded", tags: ["step-limit"], ref: { pointer: "/info/exit_status" } });
  });

  it("turns the empty user message LimitsExceeded leaves at the end into the step-limit termination step, with the limits", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-mini-limit-"));
    const file = join(dir, "demo__demo-2.traj.json");
    const doc = JSON.parse(
      trajectory("demo__demo-2", [
        { role: "system", content: "You are a helpful assistant" },
        { role: "user", content: "<pr_description>\nFix it\n</pr_description>" },
        { role: "assistant", content: "THOUGHT: look\n\n```bash\nls\n```" },
        { role: "user", content: "<returncode>0</returncode>\n<output>\na.py\n</output>" },
        { role: "user", content: "" },
      ]),
    );
    doc.info.config.agent = { step_limit: 1, cost_limit: 3 };
    doc.info.model_stats = { instance_cost: 0.01, api_calls: 1 };
    writeFileSync(file, JSON.stringify(doc));
    const { traces } = await readAll(file);
    const t = traces[0]!;
    expect(t.steps.at(-1)).toMatchObject({
      kind: "termination",
      role: "system",
      tags: ["step-limit"],
      text: "LimitsExceeded (step_limit 1, cost_limit 3, 1 model calls, cost 0.01)",
      ref: { pointer: "/messages/4" },
    });
    expect(t.steps.filter((s) => s.role === "user" && (s.text ?? "") === "")).toEqual([]);
    expect(t.steps.at(-2)).toMatchObject({ kind: "tool_result", ref: { pointer: "/messages/3" } });
  });
});
