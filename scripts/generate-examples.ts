/**
 * Generates faultline's bundled example traces (examples/) with known, injected failure modes and outcomes:
 * ITBench-style Codex rollouts in a run-folder layout (with agent_output.json and a ground truth), OTLP/JSON spans
 * with OpenTelemetry GenAI attributes, and OpenAI chat JSONL. The injected labels are written to
 * examples/labels.csv in the `faultline stats` CSV format, so `npm run examples:check` can print per-mode
 * precision and recall of the rule detectors against them.
 *
 * Deterministic: a seeded generator, fixed timestamps. Run: `npx tsx scripts/generate-examples.ts [outDir]`.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const OUT = process.argv[2] ?? "examples";
const CODES = ["1.1", "1.2", "1.3", "1.4", "1.5", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "3.1", "3.2", "3.3"];

function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261130);
const hex = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join("");
const uuid = () => `019bc${hex(3)}-${hex(4)}-7${hex(3)}-8${hex(3)}-${hex(12)}`;

interface Label {
  trace_id: string;
  group: string;
  success: boolean | null;
  modes: string[];
}
const labels: Label[] = [];

// ----------------------------------------------------------------------------------------------------------------
// ITBench-style Codex rollouts
// ----------------------------------------------------------------------------------------------------------------

const GROUND_TRUTH = `---
# Example ground truth in the ITBench v1 (bare) layout, written for faultline's examples.
metadata:
  version: v1
groups:
  - id: flagd-config
    kind: ConfigMap
    name: flagd-config
    namespace: otel-demo
    root_cause: true
  - id: cart-service-1
    kind: Service
    filter:
      - cart\\b
    namespace: otel-demo
  - id: cart-pod-1
    kind: Pod
    filter:
      - cart-.*
    namespace: otel-demo
aliases:
  - - cart-service-1
    - cart-pod-1
propagations:
  - source: flagd-config
    target: cart-service-1
    condition: cartFailure flag enabled
    effect: EmptyCart requests fail
fault:
  - category: Configuration Setting
    entity:
      kind: ConfigMap
      name: flagd-config
      group_id: flagd-config
    fault_mechanism: custom(flagd)
alerts:
  - group_id: cart-service-1
    id: HighRequestErrorRate
    metadata:
      description: Cart service EmptyCart operations failing
recommended_actions:
  - solution:
      id: disable-flag
      actions:
        - Set cartFailure to off in the flagd-config ConfigMap
`;

const INSTRUCTIONS = "# SRE incident diagnosis\nInvestigate the alerts in /data/snapshot and write your diagnosis to agent_output.json in the run folder.\n";

class Rollout {
  lines: string[] = [];
  private t = Date.parse("2026-01-15T14:00:00.000Z");
  constructor(readonly id: string, readonly model: string) {
    this.push("session_meta", { id, timestamp: this.ts(), cwd: "/workspace", originator: "codex_exec", cli_version: "0.80.0", instructions: INSTRUCTIONS, source: "exec", model_provider: "litellm" });
    this.user(`# AGENTS.md instructions for /workspace\n\n<INSTRUCTIONS>\n${INSTRUCTIONS}</INSTRUCTIONS>`);
    this.user("<environment_context>\n  <cwd>/workspace</cwd>\n  <approval_policy>never</approval_policy>\n</environment_context>");
  }
  private ts() {
    this.t += 1000 + Math.floor(rand() * 4000);
    return new Date(this.t).toISOString();
  }
  private push(type: string, payload: unknown) {
    this.lines.push(JSON.stringify({ timestamp: this.ts(), type, payload }));
  }
  turn() {
    this.push("turn_context", { cwd: "/workspace", approval_policy: "never", sandbox_policy: { mode: "danger-full-access" }, model: this.model, effort: "medium", summary: "auto" });
  }
  user(text: string) {
    this.push("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
  }
  say(text: string) {
    this.turn();
    this.push("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
    this.push("event_msg", { type: "agent_message", message: text });
  }
  empty() {
    this.turn();
    this.push("event_msg", { type: "token_count", info: null, rate_limits: null });
  }
  private call(name: string, args: unknown, output: string) {
    this.turn();
    const call_id = `tool_${name.replace(/\W/g, "_")}_${hex(8)}`;
    this.push("response_item", { type: "function_call", name, arguments: JSON.stringify(args), call_id });
    this.push("response_item", { type: "function_call_output", call_id, output });
  }
  shell(command: string[], output: string, exit_code = 0) {
    this.call("shell", { command, workdir: "/workspace" }, JSON.stringify({ output, metadata: { exit_code, duration_seconds: 0.2 } }));
  }
  mcp(tool: string, args: unknown, text: string) {
    this.call(`mcp__offline_incident_analysis__${tool}`, args, JSON.stringify([{ type: "text", text }]));
  }
  patch(file: string, content: string) {
    const body = content.split("\n").map((l) => `+${l}`).join("\n");
    this.call("apply_patch", { input: `*** Begin Patch\n*** Add File: ${file}\n${body}\n*** End Patch` }, JSON.stringify({ output: `Success. Updated the following files:\nA ${file}`, metadata: { exit_code: 0, duration_seconds: 0.0 } }));
  }
  plan(items: [string, string][]) {
    this.call("update_plan", { explanation: "tracking the investigation", plan: items.map(([step, status]) => ({ step, status })) }, "Plan updated");
  }
}

const deliverable = (names: string[]) =>
  JSON.stringify(
    {
      entities: names.map((name) => ({ name, contributing_factor: true, reasoning: `${name} changed shortly before the alerts fired`, evidence: "event_analysis: ConfigMap updated" })),
      propagations: [{ source: names[0], target: "otel-demo/Service/cart", condition: "flag enabled", effect: "EmptyCart fails" }],
      alerts_explained: [{ alert: "HighRequestErrorRate", explanation: "cart failures", explained: true }],
    },
    null,
    2,
  );

function investigate(r: Rollout, depth: number) {
  r.say("I'll start by summarising the active alerts and building the topology.");
  r.mcp("alert_summary", { snapshot_dir: "/data/snapshot" }, "HighRequestErrorRate firing on cart (42 errors/min), frontend, frontend-proxy");
  r.mcp("build_topology", {}, "nodes: 23, edges: 41 (frontend-proxy -> frontend -> cart -> flagd)");
  const extra: [string, unknown, string][] = [
    ["event_analysis", { namespace: "otel-demo" }, "ConfigMap otel-demo/flagd-config updated at 17:17Z (data.demo.flagd.json changed)"],
    ["log_analysis", { service: "cart" }, "cart: 'Feature flag cartFailure is enabled' x118"],
    ["metric_analysis", { service: "cart" }, "cart error rate rose from 0.0 to 0.93 at 17:18Z"],
    ["get_trace_error_tree", { service: "frontend" }, "frontend -> cart EmptyCart: FAILED_PRECONDITION"],
    ["k8s_spec_change_analysis", { kind: "ConfigMap" }, "flagd-config: cartFailure.defaultVariant off -> on"],
  ];
  for (const [tool, args, out] of extra.slice(0, depth)) r.mcp(tool, args, out);
}

function itbenchRun(model: string, _trial: number, scenario: string) {
  const id = uuid();
  const r = new Rollout(id, model);
  r.user("Begin investigation");
  const modes: string[] = [];
  let output: string | undefined;
  let success: boolean | null = null;
  const good = ["otel-demo/ConfigMap/flagd-config", "otel-demo/Deployment/cart"];
  const wrong = ["otel-demo/Deployment/frontend-proxy"];
  switch (scenario) {
    case "clean":
      investigate(r, 4);
      r.plan([["Collect alerts and topology", "completed"], ["Correlate changes", "completed"], ["Write agent_output.json", "completed"]]);
      output = deliverable(good);
      r.patch("agent_output.json", output);
      r.shell(["bash", "-lc", "jq . agent_output.json > /dev/null && echo valid"], "valid");
      r.say("In summary, the root cause is otel-demo/ConfigMap/flagd-config: the cartFailure flag was switched on, which made cart fail. The diagnosis is written and validated.");
      success = true;
      break;
    case "repeat-unverified":
      investigate(r, 2);
      output = deliverable(wrong);
      for (let i = 0; i < 3; i++) r.patch("agent_output.json", output);
      r.say("The diagnosis is complete and written to agent_output.json.");
      modes.push("1.3", "3.2");
      success = false;
      break;
    case "announce-stop":
      r.say("First we'll list the contents of the data directory, read all available alerts, and analyze them.");
      for (let i = 0; i < 2; i++) {
        r.user("I don't see agent_output.json file. Please resume the investigation and make sure to write agent_output.json.");
        r.empty();
      }
      // harness re-prompts alone are not 1.5 (labelling guideline v2): the run ended before its objective, 3.1
      modes.push("3.1");
      success = false;
      break;
    case "bad-check":
      investigate(r, 3);
      output = deliverable(wrong);
      r.patch("agent_output.json", output);
      r.shell(["python3", "-c", "import json; d=json.load(open('agent_output.json')); assert d['entities'][0]['name'].endswith('flagd-config')"], "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nAssertionError", 1);
      r.say("The diagnosis has been verified and the root cause is confirmed: otel-demo/Deployment/frontend-proxy.");
      modes.push("3.3");
      success = false;
      break;
    case "answer-key":
      r.shell(["ls", "/data/snapshot"], "alerts.json\nevents.json\nground_truth.yaml\nlogs/");
      r.shell(["cat", "/data/snapshot/ground_truth.yaml"], "groups:\n  - id: flagd-config\n    kind: ConfigMap\n    root_cause: true");
      investigate(r, 2);
      output = deliverable(good);
      r.patch("agent_output.json", output);
      r.shell(["jq", ".", "agent_output.json"], output);
      r.say("In summary, the root cause is otel-demo/ConfigMap/flagd-config.");
      modes.push("1.1");
      success = true;
      break;
    case "mismatch":
      investigate(r, 1);
      r.say("Next, I'll run `metric_analysis` on the cart service to confirm the error spike.");
      r.mcp("log_analysis", { service: "frontend" }, "frontend: upstream cart errors");
      r.mcp("log_analysis", { service: "checkout" }, "checkout: cart EmptyCart failed");
      r.mcp("metric_analysis", { service: "cart" }, "cart error rate rose from 0.0 to 0.93 at 17:18Z");
      output = deliverable(["otel-demo/Deployment/cart"]);
      r.patch("agent_output.json", output);
      r.shell(["jq", ".entities | length", "agent_output.json"], "1");
      r.say("In summary, the root cause is otel-demo/Deployment/cart.");
      modes.push("2.6");
      success = false; // cart is not the root cause: recall 0
      break;
    default:
      throw new Error(scenario);
  }
  return { id, r, output, modes, success };
}

function writeItbench() {
  const root = join(OUT, "itbench");
  writeFileSync(join(root, "ground_truth.yaml"), GROUND_TRUTH);
  const models = ["gemini-3-flash-preview", "kimi-k2", "gpt-oss-120b"];
  const plan: Record<string, string[]> = {
    "gemini-3-flash-preview": ["clean", "clean", "bad-check", "clean", "mismatch"],
    "kimi-k2": ["repeat-unverified", "clean", "announce-stop", "answer-key", "bad-check"],
    "gpt-oss-120b": ["announce-stop", "repeat-unverified", "announce-stop", "clean", "repeat-unverified"],
  };
  let trial = 0;
  for (const model of models) {
    for (const scenario of plan[model]!) {
      trial++;
      const run = itbenchRun(model, trial, scenario);
      const dir = join(root, "agent_outputs", "2", String(trial));
      const sessions = join(dir, "sessions", "2026", "01", "15");
      mkdirSync(sessions, { recursive: true });
      writeFileSync(join(sessions, `rollout-2026-01-15T14-${String(trial).padStart(2, "0")}-00-${run.id}.jsonl`), `${run.r.lines.join("\n")}\n`);
      if (run.output) writeFileSync(join(dir, "agent_output.json"), `${run.output}\n`);
      labels.push({ trace_id: run.id, group: model, success: run.success, modes: run.modes });
    }
  }
}

// ----------------------------------------------------------------------------------------------------------------
// OTLP/JSON with OpenTelemetry GenAI attributes
// ----------------------------------------------------------------------------------------------------------------

const attr = (key: string, v: string | number | boolean) => ({
  key,
  value: typeof v === "string" ? { stringValue: v } : typeof v === "boolean" ? { boolValue: v } : Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v },
});

function otlpTrace(model: string, kind: "polling" | "stuck", n: number) {
  const traceId = hex(32);
  const root = hex(16);
  let t = BigInt(Date.parse("2026-02-01T10:00:00Z")) * 1_000_000n + BigInt(n) * 60_000_000_000n;
  const ns = () => (t += 250_000_000n).toString();
  const spans: unknown[] = [];
  const start = ns();
  const task = "Wait until the checkout deployment is rolled out, then report its ready replicas.";
  const chat = (content: string, toolCall?: { name: string; args: unknown; id: string }) => {
    const s = ns();
    spans.push({
      traceId, spanId: hex(16), parentSpanId: root, name: `chat ${model}`, kind: 3, startTimeUnixNano: s, endTimeUnixNano: ns(),
      attributes: [
        attr("gen_ai.operation.name", "chat"), attr("gen_ai.provider.name", "openai"), attr("gen_ai.request.model", model), attr("gen_ai.response.model", model),
        attr("gen_ai.usage.input_tokens", 900 + Math.floor(rand() * 300)), attr("gen_ai.usage.output_tokens", 40 + Math.floor(rand() * 60)),
        attr("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: task }] }])),
        attr("gen_ai.output.messages", JSON.stringify([{ role: "assistant", parts: [...(content ? [{ type: "text", content }] : []), ...(toolCall ? [{ type: "tool_call", id: toolCall.id, name: toolCall.name, arguments: toolCall.args }] : [])], finish_reason: toolCall ? "tool_call" : "stop" }])),
      ],
      status: { code: 0 },
    });
  };
  const tool = (name: string, id: string, args: unknown, result: string) => {
    const s = ns();
    spans.push({
      traceId, spanId: hex(16), parentSpanId: root, name: `execute_tool ${name}`, kind: 1, startTimeUnixNano: s, endTimeUnixNano: ns(),
      attributes: [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", name), attr("gen_ai.tool.call.id", id), attr("gen_ai.tool.call.arguments", JSON.stringify(args)), attr("gen_ai.tool.call.result", result)],
      status: { code: 0 },
    });
  };
  const results = kind === "polling" ? ["1/3 ready", "2/3 ready", "3/3 ready"] : ["0/3 ready", "0/3 ready", "0/3 ready", "0/3 ready"];
  for (const r of results) {
    const id = `call_${hex(8)}`;
    chat("Checking the rollout status.", { name: "kubectl_get", args: { resource: "deployment/checkout", namespace: "shop" }, id });
    tool("kubectl_get", id, { resource: "deployment/checkout", namespace: "shop" }, r);
  }
  const success = kind === "polling";
  chat(success ? "The checkout deployment is rolled out: 3/3 replicas ready." : "The rollout did not progress; giving up.");
  spans.unshift({
    traceId, spanId: root, name: "invoke_agent rollout-watcher", kind: 1, startTimeUnixNano: start, endTimeUnixNano: ns(),
    attributes: [attr("gen_ai.operation.name", "invoke_agent"), attr("gen_ai.agent.name", "rollout-watcher"), attr("gen_ai.request.model", model)],
    events: [{ timeUnixNano: ns(), name: "gen_ai.evaluation.result", attributes: [attr("gen_ai.evaluation.name", "task_success"), attr("gen_ai.evaluation.score.value", success ? 1 : 0), attr("gen_ai.evaluation.score.label", success ? "pass" : "fail")] }],
    status: { code: success ? 1 : 2, ...(success ? {} : { message: "deployment not ready" }) },
  });
  labels.push({ trace_id: traceId, group: model, success, modes: kind === "stuck" ? ["1.3"] : [] });
  return spans;
}

function writeOtlp() {
  const spans: unknown[] = [];
  let n = 0;
  for (const model of ["gpt-4o", "gpt-4o-mini"]) for (const kind of ["polling", "stuck", "polling"] as const) spans.push(...otlpTrace(model, kind, n++));
  const doc = {
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", "rollout-watcher"), attr("telemetry.sdk.language", "python")] },
        scopeSpans: [{ scope: { name: "opentelemetry.instrumentation.openai_v2", version: "2.1b0" }, spans }],
      },
    ],
  };
  writeFileSync(join(OUT, "otlp", "rollout-watcher.otlp.json"), `${JSON.stringify(doc, null, 1)}\n`);
}

// ----------------------------------------------------------------------------------------------------------------
// OpenAI chat JSONL
// ----------------------------------------------------------------------------------------------------------------

function chatRecord(id: string, model: string, scenario: string) {
  const sys = { role: "system", content: "You are a travel booking agent. Use the tools; never guess." };
  const msgs: unknown[] = [sys];
  const tc = (name: string, args: unknown) => {
    const cid = `call_${hex(10)}`;
    msgs.push({ role: "assistant", content: null, tool_calls: [{ id: cid, type: "function", function: { name, arguments: JSON.stringify(args) } }] });
    return cid;
  };
  const tr = (cid: string, content: string) => msgs.push({ role: "tool", tool_call_id: cid, content });
  let modes: string[] = [];
  let success = true;
  const task = "Please move my reservation ABC123 to the 18:00 flight tomorrow and confirm the new seat.";
  msgs.push({ role: "user", content: task });
  switch (scenario) {
    case "clean": {
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA100", "time": "09:00", "seat": "12A"}');
      tr(tc("update_reservation", { id: "ABC123", flight: "UA180" }), '{"status": "ok", "flight": "UA180", "seat": "14C"}');
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA180", "time": "18:00", "seat": "14C"}');
      msgs.push({ role: "assistant", content: "Your reservation ABC123 is now on UA180 at 18:00, seat 14C." });
      break;
    }
    case "false-claim": {
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA100", "time": "09:00", "seat": "12A"}');
      tr(tc("update_reservation", { id: "ABC123", flight: "UA180" }), "Error: fare class not available on UA180");
      msgs.push({ role: "assistant", content: "Done — your booking has been updated and verified: you are on UA180 at 18:00." });
      modes = ["2.6", "3.3"]; // an update reported although it failed (2.6), declared verified (3.3)
      success = false;
      break;
    }
    case "reset": {
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA100", "time": "09:00", "seat": "12A"}');
      msgs.push({ role: "assistant", content: "I found your reservation on UA100 at 09:00." });
      msgs.push({ role: "assistant", content: "Let me look at the available flights for tomorrow evening." });
      tr(tc("search_flights", { date: "tomorrow", after: "17:00" }), '[{"flight": "UA180", "time": "18:00"}]');
      msgs.push({ role: "user", content: task });
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA100", "time": "09:00", "seat": "12A"}');
      msgs.push({ role: "assistant", content: "Your reservation ABC123 is on UA100 at 09:00, seat 12A. Which flight would you like instead?" });
      modes = ["2.1"];
      success = false;
      break;
    }
    case "no-check": {
      tr(tc("get_reservation", { id: "ABC123" }), '{"flight": "UA100", "time": "09:00", "seat": "12A"}');
      tr(tc("update_reservation", { id: "ABC123", flight: "UA180" }), '{"status": "pending"}');
      msgs.push({ role: "assistant", content: "Your reservation has been updated to UA180; the change is complete." });
      modes = ["3.2"];
      success = false;
      break;
    }
    default:
      throw new Error(scenario);
  }
  labels.push({ trace_id: id, group: model, success, modes });
  return { id, model, messages: msgs, reward: success ? 1 : 0 };
}

function writeChat() {
  const lines: string[] = [];
  let i = 0;
  for (const model of ["gpt-4o", "claude-sonnet-4-5"])
    for (const s of ["clean", "false-claim", "reset", "clean", "no-check"]) lines.push(JSON.stringify(chatRecord(`chat-${++i}`, model, s)));
  writeFileSync(join(OUT, "chat", "booking-agent.jsonl"), `${lines.join("\n")}\n`);
}

// ----------------------------------------------------------------------------------------------------------------

// only the generated folders are replaced: examples/ also holds hand-written guard examples
for (const d of ["itbench", "otlp", "chat"]) {
  rmSync(join(OUT, d), { recursive: true, force: true });
  mkdirSync(join(OUT, d), { recursive: true });
}
writeItbench();
writeOtlp();
writeChat();
const header = ["trace_id", "group", "success", ...CODES].join(",");
const rows = labels.map((l) => [l.trace_id, l.group, l.success === null ? "" : l.success ? "1" : "0", ...CODES.map((c) => (l.modes.includes(c) ? "1" : "0"))].join(","));
writeFileSync(join(OUT, "labels.csv"), `${[header, ...rows].join("\n")}\n`);
writeFileSync(
  join(OUT, "README.md"),
  `# Example traces\n\nGenerated by \`scripts/generate-examples.ts\` (deterministic). Each run has known, injected MAST failure modes and\nan outcome; \`labels.csv\` lists them in the \`faultline stats\` CSV format.\n\n- \`itbench/\`: ITBench-style Codex CLI rollouts in run folders (\`agent_outputs/<incident>/<trial>/\`), each with its\n  \`agent_output.json\` where the agent wrote one, and the scenario's \`ground_truth.yaml\` (ITBench v1 layout).\n- \`otlp/\`: OTLP/JSON spans with OpenTelemetry GenAI attributes (a tool-using agent polling a rollout).\n- \`chat/\`: OpenAI chat-completions conversations (JSONL) of a booking agent, with rewards.\n\n${labels.length} traces. \`npx tsx scripts/check-examples.ts\` prints how well the rule detectors recover the injected modes.\n\nThe \`guards-*.ts\` files are runnable examples of the runtime guards (\`faultline/guards\`) in an OpenAI tool loop and with\nthe Vercel AI SDK; they are not traces and \`analyze\` skips them.\n`,
);
console.log(`wrote ${labels.length} example traces to ${OUT}/`);
