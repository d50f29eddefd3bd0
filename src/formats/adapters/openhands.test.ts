import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { manifestTraceCount } from "../../testing/manifest.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";

const SWEBENCH = "swebench-verified_claude-3.5-sonnet";
const byId = (traces: Trace[], id: string) => {
  const t = traces.find((x) => x.id === id);
  if (!t) throw new Error(`no trace ${id}`);
  return t;
};
const jsonLines = (...parts: string[]) =>
  readFileSync(corpus("openhands", ...parts), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
const completionLog = (id: string) => {
  const dir = corpus("openhands", SWEBENCH, "llm_completions", id);
  return JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]!), "utf8"));
};

describe("openhands on the corpus", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("openhands"));
  });

  it("reads the MANIFEST's trace count (6 + 6 + 3 + 3 + 2), refuses nothing and recognises every supporting file by its keys", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(manifestTraceCount("openhands"));
    expect(traces).toHaveLength(20);
    const from = (part: string) => traces.filter((t) => t.source.file.includes(part));
    expect(from(`${SWEBENCH}/llm_completions/`).every((t) => t.source.format === "openhands-llm-completions")).toBe(true);
    expect([from(SWEBENCH), from("prontoqa_gpt-4o"), from("multi-swe-bench"), from("runtime-trajs"), from("resolver-mock-output")].map((l) => l.length)).toEqual([6, 6, 3, 3, 2]);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    const notes = files.filter((f) => f.role === "supporting").map((f) => `${f.path.split("/").pop()} → ${f.note}`);
    expect(notes.filter((n) => /^metadata\.json → openhands: OpenHands run metadata/.test(n))).toHaveLength(1);
    expect(notes.filter((n) => /^metadata\.json → openhands: OpenDevin run summary/.test(n))).toHaveLength(1);
    expect(notes.filter((n) => /^output\.swebench_eval\.md → openhands: .*evaluation report/.test(n))).toHaveLength(1);
    expect(notes.filter((n) => /^instance_.*\.log → openhands: .*evaluation log/.test(n))).toHaveLength(6);
  });

  it("SWE-bench completion logs: one trace per instance, resolved from output.swebench_eval.md", () => {
    const md = readFileSync(corpus("openhands", SWEBENCH, "output.swebench_eval.md"), "utf8");
    const resolvedSection = md.split("## Resolved Instances")[1]!.split("## ")[0]!;
    for (const id of ["django__django-10973", "astropy__astropy-12907", "django__django-10914"]) {
      expect(resolvedSection).toContain(`[${id}]`);
      expect(byId(result.traces, id).outcome).toMatchObject({ success: true, metric: "swe-bench:resolved" });
    }
    for (const id of ["django__django-11141", "astropy__astropy-13033", "django__django-11206"]) {
      expect(resolvedSection).not.toContain(`[${id}]`);
      expect(byId(result.traces, id).outcome).toMatchObject({ success: false });
    }
    expect(byId(result.traces, "django__django-10973").source.sidecars?.some((s) => s.endsWith("output.swebench_eval.md"))).toBe(true);
  });

  it("django-10973 completion log: model from metadata.json, tool calls linked to tool messages, exit codes, the final response", () => {
    const t = byId(result.traces, "django__django-10973");
    const src = completionLog("django__django-10973");
    const meta = JSON.parse(readFileSync(corpus("openhands", SWEBENCH, "metadata.json"), "utf8"));
    expect(meta.llm_config.model).toBe("litellm_proxy/claude-3-5-sonnet-20241022");
    expect(t.model).toBe("claude-3-5-sonnet-20241022");
    expect(t.metadata).toMatchObject({ agentClass: "CodeActAgent", modelRaw: "litellm_proxy/claude-3-5-sonnet-20241022", responseModel: src.response.model, llmCallFiles: 1 });
    const first = t.steps.find((s) => s.kind === "tool_call")!;
    expect(first.tool).toMatchObject({ name: "str_replace_editor", callId: src.messages[2].tool_calls[0].id, args: { command: "view", path: "/workspace/django__django__3.0" } });
    expect(t.steps[first.tool!.resultIndex!]).toMatchObject({ kind: "tool_result", text: src.messages[3].content[0].text });
    const failed = t.steps.filter((s) => s.kind === "tool_result" && s.tool?.exitCode === 1);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((s) => s.text!.includes("[Command finished with exit code 1]"))).toBe(true);
    // the nudge OpenHands sends when the agent talks instead of acting
    expect(t.steps.filter((s) => s.tags?.includes("harness-retry"))).toHaveLength(1);
    const last = t.steps.at(-1)!;
    expect(last).toMatchObject({ kind: "termination", tool: { name: "finish" }, ref: { pointer: "/response/choices/0/message" }, usage: { input: 10237, output: 312 } });
    // each tool call of the prompt once; the response's finish call is the termination
    const promptCalls = src.messages.flatMap((m: { tool_calls?: unknown[] }) => m.tool_calls ?? []);
    expect(t.steps.filter((s) => s.kind === "tool_call")).toHaveLength(promptCalls.length);
    expect(t.steps.filter((s) => s.kind === "tool_result")).toHaveLength(src.messages.filter((m: { role: string }) => m.role === "tool").length);
  });

  it("completion logs: the exit-code line ending a tool message becomes tool.exitCode; non-zero codes and editor ERROR: replies set isError", () => {
    // django-10914 step 31: a reproduce script that prints a Traceback yet exits 0
    const step31 = byId(result.traces, "django__django-10914").steps[31]!;
    expect(step31).toMatchObject({ kind: "tool_result", tool: { name: "execute_bash", exitCode: 0 } });
    expect(step31.text).toContain("Traceback (most recent call last)");
    expect(step31.text!.endsWith("[Command finished with exit code 0]")).toBe(true);
    expect(step31.tool!.isError).toBeUndefined();

    const codes: number[] = [];
    let editorErrors = 0;
    for (const id of ["astropy__astropy-12907", "astropy__astropy-13033", "django__django-10914", "django__django-10973", "django__django-11141", "django__django-11206"]) {
      const raw: string[] = completionLog(id)
        .messages.filter((m: { role: string }) => m.role === "tool")
        .map((m: { content: { text: string }[] }) => m.content.map((p) => p.text).join(""));
      const results = byId(result.traces, id).steps.filter((s) => s.kind === "tool_result");
      expect(results).toHaveLength(raw.length);
      raw.forEach((text, i) => {
        const lastLine = text.trimEnd().split("\n").at(-1)!;
        const prefix = "[Command finished with exit code ";
        const code = lastLine.startsWith(prefix) ? Number.parseInt(lastLine.slice(prefix.length), 10) : undefined;
        const failed = code !== undefined ? code !== 0 : text.startsWith("ERROR:");
        if (code !== undefined) codes.push(code);
        if (code === undefined && failed) editorErrors++;
        expect({ id, i, exitCode: results[i]!.tool?.exitCode, isError: results[i]!.tool?.isError ?? false }).toEqual({ id, i, exitCode: code, isError: failed });
      });
    }
    // the corpus holds both outcomes of a command and the editor's refusal to overwrite (django-11206)
    expect(codes.filter((c) => c === 0).length).toBeGreaterThan(0);
    expect(codes.filter((c) => c !== 0).length).toBeGreaterThan(0);
    expect(editorErrors).toBeGreaterThan(0);
  });

  it("event streams: the editor's ERROR: replies are failed results like non-zero exit codes", () => {
    const lines = jsonLines("multi-swe-bench_llama-4-maverick", "output.jsonl");
    const traces = lines.map((l) => byId(result.traces, l.instance_id));
    const editorErrors = traces.flatMap((t) => t.steps.filter((s) => s.kind === "tool_result" && s.tool?.name === "str_replace_editor" && s.text?.startsWith("ERROR:\n")));
    expect(editorErrors.length).toBeGreaterThan(0);
    expect(editorErrors.every((s) => s.tool?.isError === true)).toBe(true);
    // every command result carries the exit code of its event (extras.metadata, whose `suffix` holds the marker the model saw)
    traces.forEach((t, line) => {
      for (const s of t.steps.filter((x) => x.kind === "tool_result" && x.tool?.name === "execute_bash")) {
        const meta = lines[line].history[Number(s.ref!.pointer!.split("/")[2])].extras.metadata;
        expect(meta.suffix).toContain(`[The command completed with exit code ${meta.exit_code}.]`);
        expect({ exitCode: s.tool!.exitCode, isError: s.tool!.isError ?? false }).toEqual({ exitCode: meta.exit_code, isError: meta.exit_code !== 0 });
      }
    });
    // the resolver's IPython agentskills edits: refusals leave the file unchanged ("Your changes have NOT been applied")
    const ipython = byId(result.traces, "neubig/pr-viewer#1").steps.filter((s) => s.kind === "tool_result" && s.tool?.name === "run_ipython");
    const refused = ipython.filter((s) => s.tool?.isError);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((s) => s.text!.includes("Your changes have NOT been applied") || s.text!.startsWith("[No exact match found in"))).toBe(true);
    const applied = ipython.filter((s) => /lines total after edit\)\]/.test(s.text!.split("\n")[0]!));
    expect(applied.length).toBeGreaterThan(0);
    expect(applied.some((s) => s.tool?.isError)).toBe(false);
  });

  it("ProntoQA (OpenDevin pairs): test_result.result 5 true / 1 false, gpt-4o from the line or the run's metadata.json", () => {
    const lines = jsonLines("prontoqa_gpt-4o", "output.jsonl");
    const traces = result.traces.filter((t) => t.source.file.includes("prontoqa_gpt-4o"));
    expect(traces.map((t) => t.outcome?.success)).toEqual(lines.map((l) => l.test_result.result));
    expect(traces.filter((t) => t.outcome?.success === true)).toHaveLength(5);
    expect(traces.every((t) => t.model === "gpt-4o-2024-05-13")).toBe(true);
    expect(traces.filter((t) => t.metadata.modelFrom === "metadata.json").map((t) => t.id)).toEqual(lines.filter((l) => !l.metadata).map((l) => l.id));
    const p4 = byId(result.traces, "ProntoQA_4");
    expect(p4.task?.expected).toBe(lines[3].instance.answer);
    const call = p4.steps.find((s) => s.kind === "tool_call")!;
    expect(call.tool).toMatchObject({ name: "run_ipython", callId: "event-3", args: { code: "%pip install scitools-pyke" } });
    expect(p4.steps[call.tool!.resultIndex!]).toMatchObject({ kind: "tool_result", text: lines[3].history[1][1].content, ref: { line: 4, pointer: "/history/1/1", original: 4 } });
    expect(p4.steps.at(-1)).toMatchObject({ kind: "termination", tool: { name: "finish" } });
    // the "null" observation placeholders of the pairs are not steps
    expect(p4.steps.some((s) => s.text === "" && s.role === "tool")).toBe(false);
  });

  it("multi-SWE-bench event stream: model from llm_config, function names, exit codes, errors, the run error", () => {
    const lines = jsonLines("multi-swe-bench_llama-4-maverick", "output.jsonl");
    expect(lines[0].metadata.llm_config.model).toBe("openai/openrouter-llama-4-maverick");
    const t = byId(result.traces, "ponylang__ponyc-4595");
    expect(t.model).toBe("openrouter-llama-4-maverick");
    expect(t.metadata).toMatchObject({ modelRaw: "openai/openrouter-llama-4-maverick", responseModel: "llama-4-maverick" });
    expect(t.outcome?.success).toBeUndefined();
    expect(t.outcome?.raw).toMatchObject({ patchProduced: true });
    const run = t.steps.find((s) => s.kind === "tool_call")!;
    expect(run.tool).toMatchObject({ name: "execute_bash", callId: "toolu_01" });
    expect(t.steps[run.tool!.resultIndex!]!.tool).toMatchObject({ name: "execute_bash", exitCode: 0 });
    expect(t.steps.filter((s) => s.tags?.includes("injected-context"))).toHaveLength(2);
    const capped = byId(result.traces, "ponylang__ponyc-4588");
    expect(capped.metadata.error).toBe("RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 50, max iteration: 50");
    const parameterError = byId(result.traces, "ponylang__ponyc-4593").steps.find((s) => s.kind === "error")!;
    expect(parameterError.text?.startsWith("Parameter 'command' is expected to be one of")).toBe(true);
  });

  it("replay arrays and resolver output: model from model_response, termination, id-less events linked in order, resolver success", () => {
    const interactions = byId(result.traces, "basic_interactions");
    expect(interactions.model).toBe("gpt-4o-2024-08-06");
    expect(interactions.steps.at(-1)).toMatchObject({ kind: "termination", agent: "agent" });
    expect(byId(result.traces, "basic").model).toBe("claude-3-5-sonnet-20241022");
    const resolver = result.traces.filter((t) => t.source.file.includes("resolver-mock-output"));
    expect(resolver.map((t) => t.id)).toEqual(["neubig/pr-viewer#5", "neubig/pr-viewer#1"]);
    expect(resolver.every((t) => t.outcome?.success === true && t.outcome.metric === "resolver:success")).toBe(true);
    const touch = resolver[0]!.steps.find((s) => s.kind === "tool_call")!;
    expect(touch).toMatchObject({ text: "touch LICENSE", tool: { name: "run" } });
    expect(resolver[0]!.steps[touch.tool!.resultIndex!]!.tool).toMatchObject({ name: "run", exitCode: 0 });
  });
});

describe("openhands on bad and partial input", () => {
  const call = (messages: unknown[], ts: number) =>
    JSON.stringify({ messages, response: { model: "litellm_proxy/gpt-4o", choices: [{ message: { role: "assistant", content: "done" } }], usage: { prompt_tokens: 10, completion_tokens: 2 } }, args: [], kwargs: {}, timestamp: ts, cost: 0.01 });

  it("reads the calls of one instance folder as one trace (the latest call) and lists the earlier call as supporting", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "fl-oh-")), "llm_completions", "demo__demo-1");
    mkdirSync(dir, { recursive: true });
    const early = [{ role: "system", content: "sys" }, { role: "user", content: "fix it" }];
    writeFileSync(join(dir, "gpt-4o-1733339000.5.json"), call(early, 1733339000.5));
    writeFileSync(join(dir, "gpt-4o-1733339100.25.json"), call([...early, { role: "assistant", content: "looking" }, { role: "user", content: "Please continue working on the task on whatever approach you think is suitable." }], 1733339100.25));
    const { traces, files } = await readAll(dir);
    expect(traces).toHaveLength(1);
    expect(traces[0]).toMatchObject({ id: "demo__demo-1", model: "gpt-4o", source: { format: "openhands-llm-completions" } });
    expect(traces[0]!.source.file.endsWith("gpt-4o-1733339100.25.json")).toBe(true);
    expect(traces[0]!.steps.map((s) => s.text)).toEqual(["sys", "fix it", "looking", "Please continue working on the task on whatever approach you think is suitable.", "done"]);
    expect(traces[0]!.steps[3]!.tags).toEqual(["harness-retry"]);
    expect(files.find((f) => f.path.endsWith("gpt-4o-1733339000.5.json"))).toMatchObject({ role: "supporting", note: expect.stringContaining("earlier LLM call of demo__demo-1") });
  });

  it("reports a bad output.jsonl line with its number and reads the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-oh-jsonl-"));
    const file = join(dir, "output.jsonl");
    const good = (id: string) =>
      JSON.stringify({ instance_id: id, instruction: "do it", history: [{ id: 0, source: "user", action: "message", args: { content: "do it" } }, { id: 1, source: "agent", action: "run", args: { command: "ls", thought: "" } }, { id: 2, source: "agent", observation: "run", cause: 1, content: "a.py", extras: { exit_code: 0 } }], test_result: { git_patch: "" } });
    writeFileSync(file, [good("a-1"), '{"instance_id": "a-2", "history": [', JSON.stringify({ instance_id: "a-3", history: "nope", instruction: "x" }), good("a-4")].join("\n") + "\n");
    const { traces, diagnostics } = await readAll(file);
    expect(traces.map((t) => t.id)).toEqual(["a-1", "a-4"]);
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", file, line: 2 }));
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", file, line: 3, skipped: "trace" }));
    const ls = traces[0]!.steps.find((s) => s.kind === "tool_call")!;
    expect(traces[0]!.steps[ls.tool!.resultIndex!]!.tool).toMatchObject({ name: "run", exitCode: 0, output: "a.py" });
    expect(traces[0]!.outcome?.raw).toEqual({ patchProduced: false });
  });
});

describe("openhands run caps", () => {
  const runMetadata = (maxIterations: number) =>
    JSON.stringify({ agent_class: "CodeActAgent", llm_config: { model: "litellm_proxy/gpt-4o" }, max_iterations: maxIterations, dataset: "demo" });
  const toolCall = (id: string, name: string) => ({ id, type: "function", function: { name, arguments: "{}" } });
  const completion = (messages: unknown[], answer: Record<string, unknown>) =>
    JSON.stringify({ messages, response: { model: "gpt-4o", choices: [{ message: { role: "assistant", ...answer } }] }, args: [], kwargs: {}, timestamp: 1733339100, cost: 0 });

  it("completion logs: max_iterations actions without finish end with a step-limit step; with finish, or fewer, they do not", async () => {
    const root = mkdtempSync(join(tmpdir(), "fl-oh-cap-"));
    writeFileSync(join(root, "metadata.json"), runMetadata(3));
    const conversation = [
      { role: "system", content: "sys" },
      { role: "user", content: "fix it" },
      // one response with two tool calls is two actions, two iterations
      { role: "assistant", content: "", tool_calls: [toolCall("c1", "execute_bash"), toolCall("c2", "execute_bash")] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
      { role: "tool", tool_call_id: "c2", content: "ok" },
    ];
    const write = (id: string, answer: Record<string, unknown>, messages = conversation) => {
      const dir = join(root, "llm_completions", id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "gpt-4o-1733339100.json"), completion(messages, answer));
    };
    write("capped", { content: "", tool_calls: [toolCall("c3", "execute_bash")] });
    write("finished", { content: "", tool_calls: [toolCall("c3", "finish")] });
    write("short", { content: "", tool_calls: [toolCall("c3", "execute_bash")] }, conversation.slice(0, 2));
    const { traces } = await readAll(root);
    const get = (id: string) => traces.find((t) => t.id === id)!;
    expect(get("capped").steps.at(-1)).toMatchObject({
      agent: "openhands",
      role: "system",
      kind: "termination",
      tags: ["step-limit"],
      text: "max_iterations 3 (metadata.json) reached: 3 actions from 2 LLM responses, the last without finish",
    });
    expect(get("finished").steps.some((s) => s.tags?.includes("step-limit"))).toBe(false);
    expect(get("short").steps.some((s) => s.tags?.includes("step-limit"))).toBe(false);
  });

  it("event streams: only an iteration or budget error is a cap; other run errors are not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fl-oh-err-"));
    const file = join(dir, "output.jsonl");
    const rec = (id: string, error: string | null) =>
      JSON.stringify({ instance_id: id, instruction: "x", error, history: [{ id: 0, source: "user", action: "message", args: { content: "x" } }] });
    const budget = "RuntimeError: Agent reached maximum budget for conversation.Current budget: 2.01, max budget: 2.00";
    writeFileSync(file, [rec("budget", budget), rec("stuck", "AgentStuckInLoopError: Agent got stuck in a loop"), rec("none", null)].join("\n") + "\n");
    const { traces } = await readAll(file);
    expect(traces.map((t) => [t.id, t.steps.filter((s) => s.tags?.includes("step-limit")).map((s) => s.text)])).toEqual([
      ["budget", [budget]],
      ["stuck", []],
      ["none", []],
    ]);
  });
});
