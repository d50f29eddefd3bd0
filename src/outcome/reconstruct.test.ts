import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { corpus } from "../testing/corpus.js";
import { buildTrace, type StepDraft, type Trace } from "../trace/index.js";
import { scoreOutcome } from "./outcome.js";
import { parsePatch, parseShell, pythonLiteral, reconstructDeliverable } from "./reconstruct.js";

const GT2 = corpus("itbench", "ground-truth", "scenario_2_groundtruth_v1.yaml");

/** A diagnosis naming these root-cause candidates, as an agent writes it. */
const diagnosis = (...names: string[]) =>
  JSON.stringify({ entities: names.map((name) => ({ name, contributing_factor: true, reasoning: "r", evidence: "e" })), propagations: [], alerts_explained: [] }, null, 2);

// ---------------------------------------------------------------------------------------------------------------
// A synthetic Codex rollout: a failed heredoc, a wrong apply_patch, then the right diagnosis by a bash heredoc
// ---------------------------------------------------------------------------------------------------------------

describe("a synthetic ITBench rollout whose agent_output.json is not beside it", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-reconstruct-"));
  const right = `${diagnosis("otel-demo/ConfigMap/flagd-config", "otel-demo/Service/cart")}\n`;
  const wrong = diagnosis("otel-demo/Service/fraud-detection");
  const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: "2026-02-01T10:00:00.000Z", type, payload });
  const shellOut = (output: string, exit: number) => JSON.stringify({ output, metadata: { exit_code: exit, duration_seconds: 0.1 } });
  let trace: Trace;

  beforeAll(async () => {
    mkdirSync(join(dir, "rollouts"));
    mkdirSync(join(dir, "ground-truth"));
    symlinkSync(GT2, join(dir, "ground-truth", "scenario_2_groundtruth_v1.yaml"));
    const instructions = "Your incident data is located in these directories (READ-ONLY):\n- /data/snapshots/sre/v0.2/Scenario-2\n\n**Write your diagnosis to: /w/agent_outputs/2/1/agent_output.json**";
    writeFileSync(
      join(dir, "rollouts", "rollout-2026-02-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-000000000001.jsonl"),
      [
        line("session_meta", { id: "0199aaaa-bbbb-7ccc-8ddd-000000000001", cwd: "/w/agent_outputs/2/1", originator: "codex_exec", cli_version: "0.80.0", instructions }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Begin investigation" }] }),
        line("turn_context", { model: "test-model" }),
        // one string as the whole argv: Codex cannot exec it
        line("response_item", { type: "function_call", name: "shell", call_id: "c1", arguments: JSON.stringify({ command: [`cat <<EOF > /w/agent_outputs/2/1/agent_output.json\n${wrong}\nEOF`] }) }),
        line("response_item", { type: "function_call_output", call_id: "c1", output: shellOut("sandbox-exec: execvp() of 'cat <<EOF …' failed: No such file or directory\n", 71) }),
        line("turn_context", { model: "test-model" }),
        line("response_item", { type: "custom_tool_call", name: "apply_patch", call_id: "c2", input: `*** Begin Patch\n*** Add File: agent_output.json\n${wrong.split("\n").map((l) => `+${l}`).join("\n")}\n*** End Patch` }),
        line("response_item", { type: "custom_tool_call_output", call_id: "c2", output: shellOut("Success. Updated the following files:\nA agent_output.json\n", 0) }),
        line("turn_context", { model: "test-model" }),
        line("response_item", { type: "function_call", name: "shell", call_id: "c3", arguments: JSON.stringify({ command: ["bash", "-lc", `cat > agent_output.json <<'EOF'\n${right}EOF\njq . agent_output.json > /dev/null && echo ok`] }) }),
        line("response_item", { type: "function_call_output", call_id: "c3", output: shellOut("ok\n", 0) }),
        line("turn_context", { model: "test-model" }),
        line("response_item", { type: "function_call", name: "shell", call_id: "c4", arguments: JSON.stringify({ command: ["jq", ".", "agent_output.json"] }) }),
        line("response_item", { type: "function_call_output", call_id: "c4", output: shellOut(right, 0) }),
        line("event_msg", { type: "agent_message", message: "The diagnosis is in agent_output.json." }),
      ].join("\n") + "\n",
    );
    const r = await readAll(dir);
    expect(r.traces).toHaveLength(1);
    trace = r.traces[0]!;
  });

  it("rebuilds the deliverable the run wrote: the last successful write, not the failed or the overwritten one", () => {
    const writeStep = trace.steps.find((s) => s.tool?.callId === "c3" && s.kind === "tool_call")!.index;
    const rebuilt = reconstructDeliverable(trace.steps, "agent_output.json");
    expect(rebuilt.content).toBe(right);
    expect([rebuilt.step, rebuilt.via]).toEqual([writeStep, "shell heredoc"]);
    expect(rebuilt.writes.map((w) => [w.via, w.op, w.ok])).toEqual([
      ["shell heredoc", "write", false],
      ["apply_patch", "write", true],
      ["shell heredoc", "write", true],
    ]);
  });

  it("joins the scenario's ground truth from the input tree and scores the rebuilt deliverable", async () => {
    expect(trace.outcome).toEqual({ groundTruth: join(dir, "ground-truth", "scenario_2_groundtruth_v1.yaml") });
    const o = await scoreOutcome(trace);
    const writeStep = trace.steps.find((s) => s.tool?.callId === "c3" && s.kind === "tool_call")!.index;
    expect(o).toMatchObject({ success: true, score: 1, metric: "root_cause_recall" });
    expect(o.details).toMatchObject({
      precision: 0.5, recall: 1, found: ["flagd-config"],
      deliverable: null, deliverable_source: "reconstructed", deliverable_step: writeStep, deliverable_via: "shell heredoc",
      deliverable_problem: null, ground_truth_from: "input-tree",
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Write shapes, on hand-built steps
// ---------------------------------------------------------------------------------------------------------------

/** Steps of tool calls, each followed by its result (exit code given, 0 by default). */
function run(calls: { name?: string; args: unknown; exit?: number; output?: string; noResult?: boolean }[]): Trace {
  const steps: StepDraft[] = [];
  calls.forEach((c, i) => {
    const callId = `c${i}`;
    const name = c.name ?? "shell";
    steps.push({ agent: "a", role: "assistant", kind: "tool_call", text: name, tool: { name, callId, args: c.args } });
    if (!c.noResult) steps.push({ agent: "a", role: "tool", kind: "tool_result", text: c.output ?? "", tool: { name, callId, output: c.output ?? "", exitCode: c.exit ?? 0 } });
  });
  return buildTrace({ id: "t", source: { file: "x", format: "codex-rollout", index: 0 } }, steps);
}
const sh = (script: string) => ({ args: { command: ["bash", "-lc", script] } });
const content = (t: Trace, name = "agent_output.json") => reconstructDeliverable(t.steps, name);

describe("write actions the reconstruction reads", () => {
  it("echo / printf redirects, appends, and tee", () => {
    expect(content(run([sh(`echo '{"entities": []}' > /w/agent_output.json`)])).content).toBe('{"entities": []}\n');
    expect(content(run([sh(`printf '%s' "{\\"a\\": 1}" > agent_output.json`)])).content).toBe('{"a": 1}');
    expect(content(run([sh("echo -n '{' > agent_output.json"), sh("echo '}' >> agent_output.json")])).content).toBe("{}\n");
    expect(content(run([sh("tee agent_output.json <<'EOF' >/dev/null\n{}\nEOF")])).content).toBe("{}\n");
    expect(content(run([sh("cat <<'EOF' | jq . > agent_output.json\n{\"b\": 2}\nEOF")])).content).toBe('{"b": 2}\n');
  });

  it("an unquoted heredoc is taken verbatim, with a note", () => {
    const r = content(run([sh('cat > agent_output.json <<EOF\n{"evidence": "cost $5 `date`"}\nEOF')]));
    expect(r.content).toBe('{"evidence": "cost $5 `date`"}\n');
    expect(r.notes).toEqual(["step 0: an unquoted heredoc was taken verbatim (the shell would have expanded $ and ` in it)"]);
  });

  it("Python writes: json.dump of a literal or a variable, write() of a string, Path.write_text, a script written then run", () => {
    const dumpVar = "import json\ndata = {\n  'entities': [{'name': 'otel-demo/ConfigMap/flagd-config', 'contributing_factor': True, 'x': None,},],\n}\nwith open('agent_output.json', 'w') as f:\n    json.dump(data, f, indent=2)\n";
    expect(JSON.parse(content(run([{ args: { command: ["python3", "-c", dumpVar] } }])).content!)).toEqual({ entities: [{ name: "otel-demo/ConfigMap/flagd-config", contributing_factor: true, x: null }] });
    const writeStr = 'out = "/w/agent_output.json"\nf = open(out, "w")\nf.write(\'{"entities": []}\')\nf.close()\n';
    expect(content(run([{ args: { command: ["python3", "-c", writeStr] } }])).content).toBe('{"entities": []}');
    const pathText = "from pathlib import Path\nimport json\nPath('agent_output.json').write_text(json.dumps({'a': [1, 2.5, False]}))\n";
    expect(content(run([{ args: { command: ["python3", "-c", pathText] } }])).content).toBe('{"a":[1,2.5,false]}');
    const viaScript = run([sh(`cat > write.py <<'EOF'\n${dumpVar}EOF`), sh("python3 write.py")]);
    expect(content(viaScript)).toMatchObject({ step: 2, via: "python" });
    const computed = content(run([{ args: { command: ["python3", "-c", "import json\ndata = build()\njson.dump(data, open('agent_output.json', 'w'))"] } }]));
    expect(computed.content).toBeUndefined();
    expect(computed.problem).toMatch(/^the last successful write \(step 0\) could not be rebuilt: /);
  });

  it("apply_patch adds and updates; an update applies on top of the known content", () => {
    const t = run([
      { name: "apply_patch", args: "*** Begin Patch\n*** Add File: agent_output.json\n+{\n+  \"entities\": [\n+    \"a\"\n+  ]\n+}\n*** End Patch" },
      { name: "apply_patch", args: { input: "*** Begin Patch\n*** Update File: agent_output.json\n@@\n   \"entities\": [\n-    \"a\"\n+    \"a\",\n+    \"b\"\n   ]\n*** End Patch" } },
    ]);
    expect(content(t)).toMatchObject({ content: '{\n  "entities": [\n    "a",\n    "b"\n  ]\n}\n', step: 2, via: "apply_patch" });
    expect(parsePatch("*** Begin Patch\n*** Delete File: agent_output.json\n*** End Patch")).toMatchObject([{ file: "agent_output.json", op: "delete" }]);
  });

  it("copies a file the run wrote; an update of unknown content falls back to a later read-back", () => {
    expect(content(run([sh("cat > /tmp/out.json <<'EOF'\n{}\nEOF\nmv /tmp/out.json agent_output.json")])).content).toBe("{}\n");
    const t = run([
      { name: "apply_patch", args: "*** Begin Patch\n*** Update File: agent_output.json\n@@\n-a\n+b\n*** End Patch" },
      { args: { command: ["jq", ".", "agent_output.json"] }, output: '{"entities": []}\n' },
    ]);
    expect(content(t)).toMatchObject({ content: '{"entities": []}\n', step: 2, via: "read-back" });
  });

  it("ignores failed writes and writes without a recorded result; the last successful write wins", () => {
    const t = run([
      { ...sh("echo '{\"n\": 1}' > agent_output.json") },
      { ...sh("echo '{\"n\": 2}' > agent_output.json"), exit: 1 },
      { ...sh("echo '{\"n\": 3}' > agent_output.json"), noResult: true },
    ]);
    const r = content(t);
    expect(r.content).toBe('{"n": 1}\n');
    expect(r.writes.map((w) => [w.step, w.ok])).toEqual([[0, true], [2, false], [4, false]]);
    expect(content(run([sh("cat agent_output.json"), sh("touch agent_output.json")])).writes).toEqual([]);
  });

  it("parses shell quoting, heredocs and Python literals", () => {
    expect(parseShell(`cat <<-"END" > 'a b.json' 2>&1 && echo "x \\"y\\"" | tee -a log\n\t{}\n\tEND\n`).map((c) => [c.words, c.redirects, c.stdin, c.piped])).toEqual([
      [["cat"], [{ op: ">", target: "a b.json" }], "{}\n", false],
      [["echo", 'x "y"'], [], undefined, false],
      [["tee", "-a", "log"], [], undefined, true],
    ]);
    expect(pythonLiteral("{'a': (1, 2), \"b\": '''x\\ny''', 'c': r'\\d', 'd': 'p' 'q'}")).toEqual({ value: { a: [1, 2], b: "x\ny", c: "\\d", d: "pq" } });
    expect(pythonLiteral("{'a': compute()}")).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The real ITBench rollouts (corpus itbench/): every run scored from the rollout alone
// ---------------------------------------------------------------------------------------------------------------

describe("ITBench corpus rollouts scored from the rollout alone", () => {
  let traces: Trace[] = [];
  const byStamp = (stamp: string) => traces.find((t) => basename(t.source.file).includes(`T${stamp}-`))!;
  beforeAll(async () => {
    traces = (await readAll(corpus("itbench"))).traces;
  });

  it("the Gemini run 14-12-52: the python write at step 131 names flagd-config; it equals the run's own jq read-back", async () => {
    const t = byStamp("14-12-52");
    const rebuilt = reconstructDeliverable(t.steps, "agent_output.json");
    expect([rebuilt.step, rebuilt.via]).toEqual([131, "python"]);
    // earlier attempts failed in the sandbox (a heredoc and two echo redirects given as one argv string)
    expect(rebuilt.writes.map((w) => [w.step, w.via, w.ok])).toEqual([[123, "shell heredoc", false], [127, "shell echo", false], [129, "shell echo", false], [131, "python", true]]);
    const readBack = t.steps[134]!;
    expect(t.steps[133]!.text).toBe('shell({"command":["jq",".","agent_output.json"]})');
    expect(JSON.parse(rebuilt.content!)).toEqual(JSON.parse(readBack.tool!.output!));
    const o = await scoreOutcome(t);
    expect(o).toMatchObject({ success: true, score: 1, metric: "root_cause_recall" });
    expect(o.details).toMatchObject({
      deliverable_source: "reconstructed", deliverable_step: 131, deliverable_via: "python", precision: 0.5, recall: 1,
      predictions: [{ entity: "unknown/Cluster/api-server", hits: [] }, { entity: "otel-demo/ConfigMap/flagd-config", hits: ["flagd-config"] }],
    });
  });

  it("the remediation run 14-55-37 rebuilds byte for byte the agent_remediation.json of its run folder", async () => {
    const t = byStamp("14-55-37");
    const rebuilt = reconstructDeliverable(t.steps, "agent_remediation.json");
    expect(rebuilt.content).toBe(readFileSync(corpus("itbench", "run-scenario-2", "agent_remediation.json"), "utf8"));
    expect([rebuilt.step, rebuilt.via, rebuilt.notes]).toEqual([19, "shell heredoc", []]);
    const o = await scoreOutcome(t);
    expect(o).toMatchObject({ success: true, score: 1, metric: "remediation_root_cause_coverage", details: { deliverable_source: "reconstructed", deliverable_step: 19, found: ["flagd-config"] } });
  });

  it("the custom gpt-oss run 12-15-06: apply_patch add then update, after four truncated attempts; it blames fraud-detection", async () => {
    const t = byStamp("12-15-06");
    const rebuilt = reconstructDeliverable(t.steps, "agent_output.json");
    expect(rebuilt.writes.map((w) => [w.op, w.ok])).toEqual([["write", false], ["write", false], ["write", false], ["write", false], ["write", true], ["update", true]]);
    const v = JSON.parse(rebuilt.content!) as { alerts_explained: unknown[] };
    expect(v.alerts_explained).toHaveLength(8);
    const o = await scoreOutcome(t);
    expect(o).toMatchObject({ success: false, score: 0, details: { deliverable_source: "reconstructed", deliverable_step: rebuilt.step, predictions: [{ entity: "otel-demo/Service/fraud-detection", hits: [] }] } });
  });

  it("runs that never wrote the deliverable score 0 with the reason", async () => {
    const reasons = Object.fromEntries(
      await Promise.all(
        ["11-08-40", "12-28-25", "14-26-37", "13-50-18", "14-18-00"].map(async (stamp) => {
          const o = await scoreOutcome(byStamp(stamp));
          expect(o).toMatchObject({ success: false, score: 0, details: { deliverable_source: "missing" } });
          expect((o.details!.deliverable_problem as string).startsWith("missing: scored as")).toBe(true);
          return [stamp, o.details!.deliverable_missing_reason];
        }),
      ),
    );
    expect(reasons).toEqual({
      "11-08-40": "the model never answered: 7 empty model turns; the harness asked for it again 5 times",
      "12-28-25": "the model never answered: 2 empty model turns",
      "14-26-37": "the model never wrote agent_output.json",
      "13-50-18": "the run never started: no model turn is recorded",
      "14-18-00": "the run never started: no model turn is recorded",
    });
  });

  it("scores every rollout: none unknown, two successes", async () => {
    const outcomes = await Promise.all(traces.map((t) => scoreOutcome(t)));
    expect(outcomes).toHaveLength(28);
    expect(outcomes.filter((o) => o.success === null)).toEqual([]);
    const wins = traces.filter((_, i) => outcomes[i]!.success).map((t) => basename(t.source.file).slice(19, 27));
    expect(wins).toEqual(["14-12-52", "14-55-37"]);
  });
});
