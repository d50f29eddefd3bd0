import type { Finding, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import { HYPOTHETICAL_RE } from "../trace/claims.js";
import { isShellTool } from "../trace/actions.js";
import { argsObject } from "../trace/actions.js";
import type { Detector } from "./types.js";
import { dollarAmounts } from "./text-signals.js";
import { finding, isFailedResult, quote, resultOf } from "./util.js";

/**
 * FM-2.5 Ignored other agent's input (single-agent runs: the environment's and the tools' input too).
 * Signals: (a) a tool refuses a call and states the value it needs ("total price is 1002, but paid 957"), and the
 * agent's next attempt of that call still does not use it; (b) feedback given to the team names a failure (e.g.
 * "proceeded with hypothetical calculations instead of …") and the team does the same thing again.
 * Guards against: a corrected retry that uses the stated value, errors that state no value, and feedback that is
 * followed.
 */
const STATED_RE = /\b(?:total(?: price)? is|should be|must be|amount (?:is|of))\s*\$?\s?(\d[\d,]*(?:\.\d+)?)/i;

function statedValueIgnored(trace: Trace): Finding[] {
  for (const call of trace.steps) {
    // a domain API's refusal (not a shell or interpreter error, whose numbers are about code)
    if (call.kind !== "tool_call" || call.role !== "assistant" || isShellTool(call.tool?.name ?? "")) continue;
    const r = resultOf(trace, call);
    if (!r || !isFailedResult(r)) continue;
    const m = STATED_RE.exec(stepContent(r));
    if (!m) continue;
    const want = Number(m[1]!.replace(/,/g, ""));
    const retry = trace.steps.find((s) => s.index > r.index && s.kind === "tool_call" && s.role === "assistant" && s.tool?.name === call.tool?.name);
    if (!retry) continue;
    const args = JSON.stringify(retry.tool?.args ?? "");
    const numbers = [...args.matchAll(/\d+(?:\.\d+)?/g)].map((x) => Number(x[0]));
    // a total paid in parts (250 + 55 for 305) follows the stated value too
    const paid = [...args.matchAll(/"(?:amount|paid|total)"\s*:\s*(\d+(?:\.\d+)?)/g)].reduce((a, x) => a + Number(x[1]), 0);
    if (numbers.includes(want) || Math.abs(paid - want) < 0.01 || dollarAmounts(retry.text ?? "").includes(want)) continue;
    return [finding("ignored-input", "2.5", [r, retry], quote(r, STATED_RE), `the tool stated ${m[1]} but the agent's next ${call.tool?.name} ignored it`, 0.7)];
  }
  return [];
}

const FEEDBACK_RE = /\b(?:previous(?:ly)?|last (?:attempt|time|round)|the team)\b[^.\n]{0,80}\b(?:hypothetical|assum\w+|made[- ]up|without (?:actual|real)|instead of (?:getting|using|retrieving))/i;

function feedbackRepeated(trace: Trace): Finding[] {
  const fb = trace.steps.find((s) => (s.role === "assistant" || s.role === "user") && FEEDBACK_RE.test(s.text ?? ""));
  if (!fb) return [];
  const again = trace.steps.find((s) => s.index > fb.index && s.role === "assistant" && s.agent !== fb.agent && HYPOTHETICAL_RE.test(s.text ?? ""))
    ?? trace.steps.find((s) => s.index > fb.index && s.role === "assistant" && HYPOTHETICAL_RE.test((s.text ?? "").replace(fb.text ?? "", "")) && s !== fb);
  if (!again) return [];
  return [finding("ignored-input", "2.5", [fb, again], quote(again, HYPOTHETICAL_RE), "feedback named the use of hypothetical data as the failure, and the team used hypothetical data again", 0.65)];
}

const SCROLLED_RE = /^\s*I scrolled (?:down|up)\b/i;
// a new search or page was asked for; searching or navigating within the page at hand can be done by scrolling
const ASKED_ACTION_RE = /\b(?:search (?:for|the web|online|google|bing)|perform a (?:web |google |bing )?search|visit|go to|open (?:the|a|another)\b|navigate to (?:https?:|www\.|[\w-]+\.(?:com|org|gov|edu|net)\b)|type|enter|click)\b/i;
const WITHIN_PAGE_RE = /\b(?:scroll\w*|continue|brows\w+|(?:this|the current|the same) (?:page|article|site|document)|(?:in|on|within) the (?:page|article|archive|document))\b/i;

/**
 * In an orchestrated team, the orchestrator tells a browsing agent to search, open or click something, and the agent
 * answers by scrolling the page it was already on (Magentic-One's WebSurfer: "I scrolled down one page in the
 * browser.") — the instruction was not carried out.
 */
function instructionNotFollowed(trace: Trace): Finding[] {
  const steps = trace.steps;
  for (const reply of steps) {
    if (reply.role !== "assistant" || !SCROLLED_RE.test(reply.text ?? "")) continue;
    // the instruction this reply answers: the last hand-off before it, which must address this agent
    const order = [...steps.slice(0, reply.index)].reverse().find((s) => s.kind === "handoff" && s.agent !== reply.agent);
    if (!order || (argsObject(order.tool?.args)?.to ?? reply.agent) !== reply.agent) continue;
    const asked = order ? ASKED_ACTION_RE.exec(order.text ?? "") : null;
    if (!asked || WITHIN_PAGE_RE.test(order.text ?? "")) continue;
    // the reply is the failure (its agent owns it); the instruction is named in the rationale
    return [finding("ignored-input", "2.5", [reply], quote(reply, SCROLLED_RE), `${order.agent} asked ${reply.agent} (step ${order.index}) to ${asked[0].toLowerCase()}, and ${reply.agent} scrolled instead`, 0.65)];
  }
  return [];
}

export const ignoredInput: Detector = {
  id: "ignored-input",
  mode: "2.5",
  description: "A value a tool stated when refusing a call is not used on the retry; feedback that named a failure is not taken up.",
  detect: (trace) => [...statedValueIgnored(trace), ...feedbackRepeated(trace), ...instructionNotFollowed(trace)],
};
