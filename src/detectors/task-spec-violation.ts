import type { Finding, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { HYPOTHETICAL_RE } from "../trace/claims.js";
import type { Detector } from "./types.js";
import { failed, type DetectionContext } from "./context.js";
import { runEnd, TRANSFER_RE } from "./run-end.js";
import { imaginedObservation, ownWords, PRESENT_RE, presentsUnretrieved } from "./text-signals.js";
import { argsObject } from "../trace/actions.js";
import { canonicalArgs, commandOf, finding, isFailedResult, quote, resultOf } from "./util.js";

/**
 * FM-1.1 Disobey task specification, for contracts that can be checked without a model.
 * Signals: (a) reading the benchmark's answer key (ITBench `ground_truth.yaml`) — a forbidden resource; (b) an ITBench
 * diagnosis deliverable whose entity names break the required `namespace/Kind/name` form (e.g.
 * `unknown/Cluster/api-server`).
 * Guards against: a directory listing that merely shows the answer-key file (flagged only when it is read), and
 * names in reasoning text rather than in the written deliverable.
 */
const GT_READ_RE = /\b(cat|less|more|head|tail|grep|jq|yq|python[0-9.]*|sed|awk|open)\b[^|;&]*\b(ground_?truth|groundtruth)[\w.-]*\.(ya?ml|json)/i;
const K8S_KINDS = new Set(
  "Pod Service Deployment ReplicaSet StatefulSet DaemonSet Job CronJob ConfigMap Secret Ingress NetworkPolicy PersistentVolumeClaim PersistentVolume Node Namespace ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding HorizontalPodAutoscaler Endpoints EndpointSlice PodDisruptionBudget ResourceQuota LimitRange StorageClass CustomResourceDefinition VirtualService DestinationRule Gateway".split(" ").map((k) => k.toLowerCase()),
);
const BAD_NAMESPACES = new Set(["unknown", "n/a", "none", "cluster", "*", ""]);

function readsAnswerKey(trace: Trace): Finding[] {
  const hit = trace.steps.find((s) => s.kind === "tool_call" && GT_READ_RE.test(commandOf(s) ?? JSON.stringify(s.tool?.args ?? "")));
  return hit ? [finding("task-spec-violation", "1.1", [hit], quote(hit, /ground_?truth|groundtruth/i), "the agent read the benchmark's ground-truth file, a forbidden resource", 0.85)] : [];
}

function badDeliverableNames(trace: Trace): Finding[] {
  const writes = trace.steps.filter((s) => s.kind === "tool_call" && /agent_output\.json/.test(stepContent(s)));
  for (const w of writes.reverse()) {
    const content = stepContent(w);
    const names = [...content.matchAll(/\\?"name\\?"\s*:\s*\\?"([^"\\]+)\\?"/g)].map((m) => m[1]!);
    const bad = names.find((n) => {
      const parts = n.split("/");
      if (parts.length !== 3) return true;
      return BAD_NAMESPACES.has(parts[0]!.toLowerCase()) || !K8S_KINDS.has(parts[1]!.toLowerCase());
    });
    if (bad) return [finding("task-spec-violation", "1.1", [w], bad, `the deliverable names an entity "${bad}" that breaks the required namespace/Kind/name form`, 0.75)];
  }
  return [];
}

/** Tool names of consequential, database-writing actions in the tau domains. */
export const CONSEQUENTIAL_RE = /^(?:book|cancel|update|modify|exchange|return|send|transfer_to_(?!human)|toggle|refuel|reset|enable|disable|grant|issue)_?/i;
const AFFIRM_RE = /\b(?:yes|yeah|yep|confirm(?:ed)?|go ahead|proceed|please do|do it|sounds good|that'?s (?:fine|correct|right)|correct|ok(?:ay)?|sure)\b/i;

/** A consequential action taken without the user's explicit confirmation, where the policy requires it. */
function unconfirmedWrite(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!ctx.contract.confirmBeforeWrite) return [];
  for (const call of trace.steps) {
    if (call.kind !== "tool_call" || call.role !== "assistant" || !CONSEQUENTIAL_RE.test(call.tool?.name ?? "")) continue;
    // the explicit yes may come a turn or two before the call (the user then names the card to use)
    const since = [...trace.steps.slice(0, call.index)].reverse().find((s) => s.kind === "tool_call" && s.role === "assistant" && CONSEQUENTIAL_RE.test(s.tool?.name ?? ""))?.index ?? -1;
    const recent = trace.steps.filter((s) => s.index > since && s.index < call.index && s.role === "user" && s.kind === "message").slice(-3);
    if (recent.some((s) => AFFIRM_RE.test(s.text ?? ""))) continue;
    return [finding("task-spec-violation", "1.1", [call], quote(call), `${call.tool!.name} was executed without the user's explicit confirmation, which the policy requires ("${ctx.contract.confirmBeforeWrite.quote.slice(0, 100)}")`, 0.7, ["steps", "task"])];
  }
  return [];
}

/**
 * A failed tau run handed to a human although the dataset's expected actions show the request was within the
 * agent's scope: the policy allows a transfer only when a request cannot be handled.
 */
function needlessTransfer(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!failed(ctx) || !(ctx.task?.benchmark ?? "").startsWith("tau")) return [];
  const end = runEnd(trace);
  if (end.kind !== "transfer" || !end.step) return [];
  const doable = ctx.contract.expectedActions.filter((a) => !TRANSFER_RE.test(a.name) && CONSEQUENTIAL_RE.test(a.name));
  if (!doable.length) return [];
  return [finding("task-spec-violation", "1.1", [end.step], quote(end.step), `the agent transferred to a human although the expected actions (${doable.map((a) => a.name).join(", ")}) were within its scope`, 0.7, ["steps", "expected", "outcome"])];
}

const REQUEST_WORDS: [RegExp, RegExp][] = [
  [/^(?:update|modify)_/i, /\b(?:change|modify|update|switch|move|rebook|upgrade|downgrade|add|remove)\b/i],
  [/^book_/i, /\b(?:book|reserve)\b/i],
  [/^cancel_/i, /\bcancel\b/i],
  [/^exchange_/i, /\b(?:exchange|swap)\b/i],
  [/^return_/i, /\breturn\b/i],
];

/** One of the user's last three turns before `index` asks for the kind of action `tool` performs. */
function userAskedFor(trace: Trace, index: number, tool: string): boolean {
  const words = REQUEST_WORDS.find(([t]) => t.test(tool))?.[1];
  if (!words) return false;
  return trace.steps.filter((s) => s.index < index && s.role === "user" && s.kind === "message").slice(-3).some((s) => words.test(s.text ?? ""));
}

/** `have` contains `want`: equal scalars, objects with every expected key covered, arrays element by element. */
export function covers(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(have[i], w));
  if (want && typeof want === "object") {
    if (!have || typeof have !== "object" || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, v]) => covers((have as Record<string, unknown>)[k], v));
  }
  return canonicalArgs(have) === canonicalArgs(want);
}

/** The string values inside an argument value (nested objects and arrays included). */
function leafStrings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (Array.isArray(v)) return v.flatMap(leafStrings);
  if (v && typeof v === "object") return Object.values(v).flatMap(leafStrings);
  return [];
}

/** Keys whose values differ between two argument objects (top level), for the evidence. */
function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return Object.keys(b).filter((k) => !covers(a[k], b[k]));
}

/**
 * A consequential action that the dataset's expected actions do not contain: a write that should not have happened,
 * or the expected write with other arguments (tau-bench `actions`, tau2 `evaluation_criteria.actions`).
 */
function expectedActionsBroken(trace: Trace, ctx: DetectionContext): Finding[] {
  const expected = ctx.contract.expectedActions;
  if (!expected.length) return [];
  const want = new Set(expected.map((a) => `${a.name}\u0000${canonicalArgs(a.args)}`));
  for (const call of trace.steps) {
    if (call.kind !== "tool_call" || call.role !== "assistant" || !call.tool || !CONSEQUENTIAL_RE.test(call.tool.name) || TRANSFER_RE.test(call.tool.name)) continue;
    if (want.has(`${call.tool.name}\u0000${canonicalArgs(call.tool.args)}`)) continue;
    // the expected action with extra detail (flight objects that also carry origin and destination) is the same action
    if (expected.some((a) => a.name === call.tool!.name && covers(argsObject(call.tool!.args) ?? {}, a.args))) continue;
    // a write the system refused changed nothing
    if (isFailedResult(resultOf(trace, call))) continue;
    const same = expected.filter((a) => a.name === call.tool!.name);
    const args = argsObject(call.tool.args) ?? {};
    // a write the expected actions lack that the user itself asked for (a simulated user off its script) is not the agent's doing
    if (!same.length && userAskedFor(trace, call.index, call.tool.name)) continue;
    // values the user itself asked for (a simulated user departing from its script) are not the agent's doing
    if (same.length) {
      const said = trace.steps.filter((s) => s.index < call.index && s.role === "user").map((s) => (s.text ?? "").toLowerCase()).join("\n");
      const values = differingKeys(args, same[0]!.args).flatMap((k) => leafStrings(args[k]));
      if (values.length && values.every((v) => said.includes(v.toLowerCase()) || said.includes(v.toLowerCase().replace(/_\d+$/, "").replace(/_/g, " ")))) continue;
    }
    const why = same.length
      ? `${call.tool.name} was called with arguments the task does not expect (${differingKeys(args, same[0]!.args).join(", ") || "values"} differ from the expected action)`
      : `${call.tool.name} is a write the task does not call for (expected: ${[...new Set(expected.map((a) => a.name))].join(", ")})`;
    return [finding("task-spec-violation", "1.1", [call], quote(call), why, 0.65, ["steps", "expected"])];
  }
  return [];
}

/** Several commands in one turn where the interface allows one, or guessed results where guessing is forbidden. */
function interfaceContract(trace: Trace, ctx: DetectionContext): Finding[] {
  const c = ctx.contract;
  if (c.noGuessing) {
    const s = trace.steps.find((x) => imaginedObservation(x));
    if (s) return [finding("task-spec-violation", "1.1", [s], imaginedObservation(s)![0].trim(), `the agent wrote results it never ran although the task says "${c.noGuessing.quote.slice(0, 80)}"`, 0.75, ["steps", "task"])];
  }
  if (c.oneCommandPerTurn) {
    // several shell blocks in one turn, written with their imagined output: the harness ran only one of them (a
    // snippet of code quoted while thinking, or one block the harness rejected and the agent redid, is not this)
    const s = trace.steps.find((x) => x.role === "assistant" && (x.kind === "reasoning" || x.kind === "message") && ((x.text ?? "").match(/^```(?:bash|sh|shell)?\s*$/gm)?.length ?? 0) >= 4 && imaginedObservation(x) !== null);
    if (s) {
      const blocks = (s.text ?? "").split(/^```[^\n]*$/m);
      const second = blocks[3]?.trim().split("\n")[0] ?? "";
      if (second) return [finding("task-spec-violation", "1.1", [s], second, `the agent put several commands in one turn although the interface says "${c.oneCommandPerTurn.quote.slice(0, 80)}"`, 0.7, ["steps", "task"])];
    }
  }
  return [];
}

/** The task requires a named source, and the agents used hypothetical data, or data no lookup produced, instead. */
function sourceIgnored(trace: Trace, ctx: DetectionContext): Finding[] {
  const c = ctx.contract.sourceConstraint;
  if (!c) return [];
  const s = trace.steps.find((x) => x.role === "assistant" && x.index > c.step && (HYPOTHETICAL_RE.test(ownWords(trace, x)) || presentsUnretrieved(x) !== null));
  if (!s) return [];
  const hypothetical = HYPOTHETICAL_RE.test(ownWords(trace, s));
  return [finding("task-spec-violation", "1.1", [s], quote(s, hypothetical ? HYPOTHETICAL_RE : PRESENT_RE), `the task requires "${c.quote.slice(0, 100)}", but the agents worked from ${hypothetical ? "hypothetical data" : "data no lookup produced"}`, 0.65, ["steps", "task"])];
}

export const taskSpecViolation: Detector = {
  id: "task-spec-violation",
  mode: "1.1",
  description: "Reading the answer key; malformed deliverable names; unconfirmed consequential actions; needless transfers; writes the expected actions do not contain; several commands or guessed results against the interface; hypothetical data against a required source.",
  detect: (trace, ctx) => [...readsAnswerKey(trace), ...badDeliverableNames(trace), ...unconfirmedWrite(trace, ctx), ...needlessTransfer(trace, ctx), ...expectedActionsBroken(trace, ctx), ...interfaceContract(trace, ctx), ...sourceIgnored(trace, ctx)],
};
