import type { Finding, Step, Trace } from "../trace/index.js";
import { HYPOTHETICAL_RE, INTENT_RE, UNOBTAINED_RE } from "../trace/claims.js";
import { argsObject, isShellTool } from "../trace/actions.js";
import type { Detector } from "./types.js";
import { imaginedObservation, NO_ANSWER_RE, ownWords, PRESENT_RE, presentsUnretrieved } from "./text-signals.js";
import { instructionSteps } from "./contract.js";
import { finalAnswerStep, TRANSFER_RE } from "./run-end.js";
import { finding, isFailedResult, isMutating, quote, resultOf } from "./util.js";

/**
 * FM-2.6 Reasoning-action mismatch.
 * Signals: (a) an agent names the tool it will use next ("Next I'll run `log_analysis`") and then calls a different
 * tool, never calling the named one in the following calls; (b) an agent claims to have run tests or changed files
 * when the trace has no such call before the claim.
 * Guards against: traces without tool steps (conversational systems whose actions are messages: the claim cannot be
 * checked there), tool names mentioned in passing rather than as the next action, and plans for later steps.
 */
const NEXT_RE = INTENT_RE;
const RAN_RE = /\bI (have |'ve )?(ran|run|executed) (the |all )?(tests?|test suite|script|command)/i;
const CHANGED_RE = /\bI (have |'ve )(updated|modified|edited|changed|fixed|patched|written|created) (the |a |an )?(file|code|function|config|configuration|[\w./-]+\.\w{1,5})\b/i;

function namedToolNotCalled(trace: Trace, toolNames: Set<string>): Finding[] {
  const out: Finding[] = [];
  const steps = trace.steps;
  for (const s of steps) {
    if (s.role !== "assistant" || (s.kind !== "message" && s.kind !== "reasoning") || !s.text || !NEXT_RE.test(s.text)) continue;
    const sentence = s.text.slice(s.text.search(NEXT_RE)).split(/[.\n]/)[0] ?? "";
    // a backticked name of a tool this trace uses or declares (code identifiers in backticks are not tools)
    const named = [...sentence.matchAll(/`([\w.-]+)`/g)]
      .map((m) => m[1]!)
      .filter((n) => toolNames.has(n) || [...toolNames].some((t) => t.endsWith(`__${n}`)));
    if (named.length !== 1) continue;
    const want = named[0]!;
    const nextCalls = steps.filter((x) => x.index > s.index && x.kind === "tool_call").slice(0, 2);
    if (nextCalls.length < 1) continue;
    const matches = (x: Step) => x.tool?.name === want || x.tool?.name?.endsWith(`__${want}`) || JSON.stringify(x.tool?.args ?? "").includes(want);
    if (nextCalls.some(matches)) continue;
    out.push(finding("reasoning-action-mismatch", "2.6", [s, nextCalls[0]!], quote(s, new RegExp(`\`${want.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\``)), `the agent said it would use ${want} but called ${nextCalls[0]!.tool?.name} instead`, 0.65));
    if (out.length >= 3) break;
  }
  return out;
}

function claimsWithoutCalls(trace: Trace): Finding[] {
  const out: Finding[] = [];
  for (const s of trace.steps) {
    if (s.role !== "assistant" || s.kind !== "message" || !s.text) continue;
    const before = trace.steps.slice(0, s.index).filter((x) => x.kind === "tool_call");
    if (RAN_RE.test(s.text) && before.length === 0)
      out.push(finding("reasoning-action-mismatch", "2.6", [s], quote(s, RAN_RE), "the agent claims to have run something but made no tool call before the claim", 0.7));
    else if (CHANGED_RE.test(s.text) && !before.some(isMutating))
      out.push(finding("reasoning-action-mismatch", "2.6", [s], quote(s, CHANGED_RE), "the agent claims a change but no write or edit happened before the claim", 0.65));
    if (out.length) break;
  }
  return out;
}

/** The model wrote the environment's answer itself (a shell prompt, a test summary) and went on as if it had run. */
function imaginedResults(trace: Trace): Finding[] {
  const s = trace.steps.find((x) => imaginedObservation(x));
  if (!s) return [];
  const m = imaginedObservation(s)!;
  return [finding("reasoning-action-mismatch", "2.6", [s], m[0].trim(), "the agent wrote the output of commands it had not run and acted as if they had happened", 0.8)];
}

/**
 * An agent announces a lookup and, in the same turn, presents its results although no tool ran: it said it would
 * retrieve, and did not (multi-agent systems whose tools run in a separate executor turn).
 */
function presentedWithoutLookup(trace: Trace): Finding[] {
  const s = trace.steps.find((x) => presentsUnretrieved(x));
  return s ? [finding("reasoning-action-mismatch", "2.6", [s], quote(s, PRESENT_RE), "the agent announced a lookup and presented its results in the same turn without running any tool", 0.65)] : [];
}


const RETRIEVED_RE = /\b(?:figures|data|numbers|values|information|results|statistics|details) (?:(?:were|was|have been|has been) )?(?:retrieved|obtained|extracted|fetched|pulled|downloaded) (?:directly )?from\b/i;
/** An executor's note that there was nothing to run, not an observation. */
const NOTHING_RUN_RE = /\bno code (?:from the last \d+ messages? )?(?:for me )?to execute\b/i;

/**
 * An agent presents data as retrieved from a source ("the population figures retrieved from data.census.gov") although
 * nothing was retrieved: no tool ran and no executor returned any output before it. It says it looked, and did not.
 */
function retrievalClaimedWithoutAny(trace: Trace): Finding[] {
  const instructions = new Set(instructionSteps(trace).map((x) => x.index));
  for (const s of trace.steps) {
    if (s.role !== "assistant" || s.kind !== "message") continue;
    const m = RETRIEVED_RE.exec(ownWords(trace, s, instructions));
    if (!m) continue;
    const observed = trace.steps.slice(0, s.index).some((x) => x.kind === "tool_call" || (x.role === "tool" && (x.text ?? x.tool?.output ?? "").trim() !== "" && !NOTHING_RUN_RE.test(x.text ?? x.tool?.output ?? "")));
    if (observed) return [];
    return [finding("reasoning-action-mismatch", "2.6", [s], quote(s, RETRIEVED_RE), "the agent presented data as retrieved from a source although nothing had been retrieved or run", 0.7)];
  }
  return [];
}

/** The final answer is given right after the agents concluded that the information for it was not obtained. */
function answerAgainstConclusion(trace: Trace): Finding[] {
  const final = finalAnswerStep(trace);
  // "FINAL ANSWER: Unable to determine" agrees with the conclusion
  if (!final || NO_ANSWER_RE.test((final.text ?? "").slice((final.text ?? "").search(/FINAL ANSWER\s*:/i) + 1 || 0))) return [];
  // (a ledger's "request not satisfied yet" is progress tracking, not a conclusion that the information is missing)
  const before = trace.steps.slice(Math.max(0, final.index - 3), final.index + 1).filter((s) => s.role === "assistant" && UNOBTAINED_RE.test(s.text ?? ""));
  const admitted = before[before.length - 1];
  if (!admitted) return [];
  return [finding("reasoning-action-mismatch", "2.6", admitted === final ? [final] : [admitted, final], quote(admitted, UNOBTAINED_RE), "the agents concluded the information was not obtained, then gave a definite final answer anyway", 0.65)];
}

const AS_OBTAINED_RE = /\b(?:upon (?:inspection|review|analysis|examination)|(?:is|are) identified as|identified as follows|here (?:is|are) the (?:notes|data|results?|values|figures|details)|(?:I|we) (?:have )?(?:identified|extracted|transcribed|read off)|the (?:notes|values|figures) (?:are|were))\b/i;

/** An agent says it cannot see or obtain something and, in the same turn, presents it as if it had. */
function admittedThenPresented(trace: Trace): Finding[] {
  for (const s of trace.steps) {
    if (s.role !== "assistant" || (s.kind !== "message" && s.kind !== "reasoning") || !s.text) continue;
    const gap = UNOBTAINED_RE.exec(s.text) ?? HYPOTHETICAL_RE.exec(s.text);
    if (!gap) continue;
    const shown = AS_OBTAINED_RE.exec(s.text.slice(gap.index + gap[0].length));
    if (!shown) continue;
    return [finding("reasoning-action-mismatch", "2.6", [s], quote(s, AS_OBTAINED_RE), "the agent said it could not obtain the information, then presented it as the result of obtaining it", 0.7)];
  }
  return [];
}

const PARAMS_RE = /\b(?:need to|must|should|have to|will|I'll)\s+(?:provide|supply|include|specify|pass|set|add)\s+(?:the\s+)?((?:`\w+`(?:\s*(?:,|and)\s*)?)+)/i;

/** The agent names the arguments its next call needs, then makes the call without them. */
function saidArgsThenOmitted(trace: Trace): Finding[] {
  for (const s of trace.steps) {
    if (s.role !== "assistant" || (s.kind !== "message" && s.kind !== "reasoning") || !s.text) continue;
    const m = PARAMS_RE.exec(s.text);
    if (!m) continue;
    const names = [...m[1]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!);
    const next = trace.steps.find((x) => x.index > s.index && x.kind === "tool_call");
    if (!next || trace.steps.some((x) => x.index > s.index && x.index < next.index && x.role === "user")) continue;
    // arguments named before a shell or interpreter call are the code's ("pass `cls` in the recursive call")
    if (next.tool && isShellTool(next.tool.name)) continue;
    const args = argsObject(next.tool?.args);
    if (!args) continue;
    const missing = names.filter((n) => !(n in args));
    if (!missing.length) continue;
    return [finding("reasoning-action-mismatch", "2.6", [s, next], quote(s, PARAMS_RE), `the agent said the call needs ${names.join(", ")}, then called ${next.tool?.name} without ${missing.join(", ")}`, 0.75)];
  }
  return [];
}

const MANUAL_RE = /^#{1,2} .*\b(?:manual|readme|user guide|documentation)\b/im;
const GENERIC_HEADING_RE = /^(?:introduction|overview|installation|install|requirements?|dependencies|setup|getting started|usage|how to (?:use|play|run)|running(?: the \w+)?|run|controls|features|gameplay|conclusion|license|troubleshooting|support|contact|faq|summary|notes?|credits|contributing|about|quick start|configuration|examples?)$/i;
const STOP = new Set(["with", "from", "that", "this", "your", "game", "mode", "modes", "feature", "features", "option", "options", "support", "user", "users", "the", "and", "for"]);

/**
 * The software's own manual presents features that no code written in the run implements: a "### Story Mode"
 * section when no code block ever mentions a story. The system documents what it says it built, not what it built.
 */
function documentedButNotBuilt(trace: Trace): Finding[] {
  const code = trace.steps
    .filter((s) => s.role === "assistant")
    .flatMap((s) => [...(s.text ?? "").matchAll(/```[\w+-]*\n([\s\S]*?)```/g)].map((m) => m[1]!))
    .join("\n")
    .toLowerCase();
  if (code.length < 500) return [];
  const manual = [...trace.steps].reverse().find((s) => s.role === "assistant" && MANUAL_RE.test(s.text ?? ""));
  if (!manual) return [];
  const start = (manual.text ?? "").search(MANUAL_RE);
  for (const m of (manual.text ?? "").slice(start).matchAll(/^#{2,4} +(.+?)\s*$/gm)) {
    const heading = m[1]!.replace(/[*`_]/g, "").trim();
    if (GENERIC_HEADING_RE.test(heading)) continue;
    const words = (heading.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => !STOP.has(w));
    if (!words.length) continue;
    // a feature is built when its words show up in the code (as identifiers, strings or comments, by stem)
    if (words.some((w) => code.includes(w.slice(0, Math.max(4, w.length - 2))))) continue;
    return [finding("reasoning-action-mismatch", "2.6", [manual], m[0].trim(), `the manual presents "${heading}", which no code written in the run implements`, 0.6)];
  }
  return [];
}

/**
 * What a report says was done, and the calls that can have done it: "has been cancelled" needs a cancel call.
 * Stems over tool names, so every tool-using domain (bookings, orders, tickets, accounts) reads the same way.
 */
const DONE_ACTIONS: { verb: RegExp; tool: RegExp }[] = [
  { verb: /cancel+ed/, tool: /cancel|void|delete/ },
  { verb: /booked|reserved/, tool: /book|reserv|create|order/ },
  { verb: /refunded/, tool: /refund|cancel|return|exchange|modify|update/ },
  { verb: /exchanged/, tool: /exchange|modify|update/ },
  { verb: /returned/, tool: /return/ },
  { verb: /upgraded|downgraded/, tool: /upgrade|downgrade|update|modify|change/ },
  { verb: /updated|modified|changed/, tool: /update|modify|change|edit|set|exchange|upgrade/ },
  { verb: /transferr(?:ed|ing)|transfer/, tool: /transfer|handoff|escalat/ },
];
const REPORTED_DONE_RE = /\b(?:(?:has|have) been (?:successfully )?|(?:I|we) (?:have|'ve) (?:now |already )?(?:successfully )?|(?:is|are) now (?:successfully )?|(?:you are|you're) (?:now )?being |(?:I|we) (?:have|'ve) (?:already )?initiated the )(cancel+ed|booked|reserved|refunded|exchanged|returned|upgraded|downgraded|updated|modified|changed|transferred|transfer)\b/i;
// states found in a lookup, and reports about later or conditional actions, are not claims of this run's action
const NOT_A_CLAIM_RE = /\b(?:already|previously|will|would|once|after|if|when|before|should|can|could|must|may|might|not|n't|never|none|no)\b|\?/i;

/**
 * An agent tells the user an action was done — "your reservation has been cancelled", "I've updated the address" —
 * although no call that could have done it ran before the report, or every such call failed. The report claims an
 * action that did not happen (FM-2.6: "claims an edit that was not made").
 */
function reportedActionNotPerformed(trace: Trace): Finding[] {
  const calls = trace.steps.filter((s) => s.kind === "tool_call" && s.role === "assistant" && s.tool);
  if (!calls.length) return [];
  for (const s of trace.steps) {
    if (s.role !== "assistant" || s.kind !== "message" || !s.text) continue;
    for (const sentence of s.text.split(/(?<=[.!])\s+|\n+/)) {
      const m = REPORTED_DONE_RE.exec(sentence);
      if (!m || NOT_A_CLAIM_RE.test(sentence.slice(0, m.index))) continue;
      const action = DONE_ACTIONS.find((a) => a.verb.test(m[1]!.toLowerCase()));
      if (!action) continue;
      // the call may come in the same assistant turn as the report (text first, then the call)
      const turnEnd = trace.steps.find((x) => x.index > s.index && x.role !== "assistant")?.index ?? trace.steps.length;
      const able = calls.filter((c) => c.index < turnEnd && (isMutating(c) || TRANSFER_RE.test(c.tool!.name)) && action.tool.test(c.tool!.name.toLowerCase()));
      const done = able.filter((c) => !isFailedResult(resultOf(trace, c)));
      if (done.length) continue;
      const why = able.length
        ? `the agent reported "${m[0]}" although every ${able.map((c) => c.tool!.name).join("/")} call failed`
        : `the agent reported "${m[0]}" although no call that could have done it ran`;
      return [finding("reasoning-action-mismatch", "2.6", able.length ? [able[able.length - 1]!, s] : [s], quote(s, REPORTED_DONE_RE), why, 0.7)];
    }
  }
  return [];
}

export const reasoningActionMismatch: Detector = {
  id: "reasoning-action-mismatch",
  mode: "2.6",
  description: "A named next tool that is not the one called; claimed runs or changes with no matching call; imagined command output; results presented without the announced lookup; a final answer against the agents' own conclusion.",
  detect(trace: Trace) {
    const declared = Array.isArray(trace.metadata.tools) ? (trace.metadata.tools as unknown[]).filter((x): x is string => typeof x === "string") : [];
    const toolNames = new Set([...trace.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool?.name ?? ""), ...declared]);
    const textual = [...imaginedResults(trace), ...presentedWithoutLookup(trace), ...retrievalClaimedWithoutAny(trace), ...answerAgainstConclusion(trace), ...admittedThenPresented(trace), ...saidArgsThenOmitted(trace), ...documentedButNotBuilt(trace)];
    if (toolNames.size === 0) return textual;
    return [...textual, ...namedToolNotCalled(trace, toolNames), ...claimsWithoutCalls(trace), ...reportedActionNotPerformed(trace)];
  },
};
