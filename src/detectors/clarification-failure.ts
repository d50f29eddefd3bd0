import type { Finding, Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { argsObject } from "../trace/actions.js";
import type { Detector } from "./types.js";
import { finding, quote } from "./util.js";

/**
 * FM-2.2 Fail to ask for clarification.
 * Signals: an agent says it lacks information the task needs (it cannot see, access or obtain it) and in the same
 * turn proceeds on an assumption ("we assume…", "hypothetical…", "let's use an example") instead of asking the user
 * or another agent for it.
 * Guards against: assumptions stated as a question or a request for confirmation, the task's own hypotheticals
 * (instruction steps are not the agent speaking), and assumptions about things the agent then checks (a lookup or a
 * tool call follows in the same turn's plan is not an assumption that replaces information).
 */
const LACK_RE = /\b(?:(?:can ?not|can't|could ?n[o']t|unable to|am not able to|don't have (?:access|the ability)|do not have (?:access|the ability)) (?:to )?(?:[\w-]+ ){0,3}?(?:see|view|access|interpret|read|open|listen|play|retrieve|obtain|browse)|(?:no|without) (?:access to|direct access|the ability to))\b/i;
const ASSUME_RE = /\b(?:(?:we|I|let'?s|let us)(?:'ll| will)? assume|assuming (?:that|the)|hypothetical(?:ly)?|for (?:the sake of|illustration|demonstration)|(?:let'?s|we can|I'll) (?:use|take|create) (?:an? )?(?:example|sample|estimate)|based on (?:an? )?(?:example|typical|general))\b/i;

/** The payment methods a user has, as a lookup returned them: id → the words a user would use for it. */
function paymentMethods(trace: Trace, before: number): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of trace.steps.slice(0, before)) {
    if (r.kind !== "tool_result" || !stepContent(r).includes('"payment_methods"')) continue;
    let value: unknown;
    try {
      value = JSON.parse(stepContent(r));
    } catch {
      continue;
    }
    const methods = (value as { payment_methods?: unknown })?.payment_methods;
    const list = Array.isArray(methods) ? methods : methods && typeof methods === "object" ? Object.entries(methods).map(([id, m]) => ({ id, ...(m as object) })) : [];
    for (const m of list as Record<string, unknown>[]) {
      const id = String(m.id ?? m.payment_method_id ?? "");
      if (!id) continue;
      const source = String(m.source ?? id.replace(/_\d+$/, "")).replace(/_/g, " ");
      out.set(id, [id, source, ...(source === "paypal" ? ["pay pal"] : []), String(m.brand ?? ""), String(m.last_four ?? "")].filter((w) => w.length >= 4 || /^\d{4}$/.test(w)));
    }
  }
  return out;
}

const ORIGINAL_METHOD_RE = /\b(?:original|same|usual|default|existing|current) (?:\w+ ){0,2}(?:payment|card|method)|\bwhatever (?:payment|card|method)|\b(?:any|either) (?:payment|card|method)/i;

/**
 * The user has several payment methods and never said which to use, and the agent charged or refunded one of its own
 * choosing: it proceeded on an assumption where it should have asked.
 */
function paymentChosenUnasked(trace: Trace): Finding[] {
  for (const call of trace.steps) {
    if (call.kind !== "tool_call" || call.role !== "assistant") continue;
    const args = argsObject(call.tool?.args);
    if (!args) continue;
    const listed = Array.isArray(args.payment_methods) ? (args.payment_methods as Record<string, unknown>[]).map((p) => p?.payment_id) : [];
    const chosen = [args.payment_id, args.payment_method_id, ...listed].filter((x): x is string => typeof x === "string" && x.length > 0);
    if (!chosen.length) continue;
    const methods = paymentMethods(trace, call.index);
    if (methods.size < 2) continue;
    const userSaid = trace.steps.slice(0, call.index).filter((s: Step) => s.role === "user" && s.kind === "message").map((s) => (s.text ?? "").toLowerCase()).join("\n");
    if (ORIGINAL_METHOD_RE.test(userSaid)) continue;
    const unasked = chosen.find((id) => !(methods.get(id) ?? [id]).some((w) => userSaid.includes(w.toLowerCase())));
    if (!unasked) continue;
    return [finding("clarification-failure", "2.2", [call], quote(call, new RegExp(unasked)), `the user has ${methods.size} payment methods and never named one; the agent chose ${unasked} without asking`, 0.6)];
  }
  return [];
}

export const clarificationFailure: Detector = {
  id: "clarification-failure",
  mode: "2.2",
  description: "An agent that lacks information the task needs proceeds on an assumption instead of asking for it; a payment method the user never named, chosen for them.",
  detect(trace: Trace) {
    const payment = paymentChosenUnasked(trace);
    if (payment.length) return payment;
    const firstAgent = trace.steps.find((s) => s.role === "assistant")?.index ?? 0;
    for (const s of trace.steps) {
      if (s.role !== "assistant" || s.index === firstAgent || (s.kind !== "message" && s.kind !== "reasoning") || !s.text) continue;
      const lack = LACK_RE.exec(s.text);
      if (!lack) continue;
      const after = s.text.slice(Math.max(0, lack.index - 200));
      const assume = ASSUME_RE.exec(after);
      if (!assume) continue;
      // an assumption put to someone as a question is a request for clarification
      const sentenceEnd = after.indexOf("?", assume.index);
      if (sentenceEnd >= 0 && sentenceEnd - assume.index < 160 && !after.slice(assume.index, sentenceEnd).includes(".")) continue;
      return [finding("clarification-failure", "2.2", [s], quote(s, ASSUME_RE), "the agent lacked information the task needed and proceeded on an assumption instead of asking for it", 0.65)];
    }
    return [];
  },
};
