import type { Finding, Step, Trace } from "../trace/index.js";
import { instructionSteps } from "./contract.js";
import { stepContent } from "../trace/index.js";
import { HYPOTHETICAL_RE, UNOBTAINED_RE, VERIFIED_CLAIM_RE, VERIFY_INTENT_RE } from "../trace/claims.js";
import { isShellTool } from "../trace/actions.js";
import { finalAnswerStep, finalStretch, runEnd } from "./run-end.js";
import type { Detector } from "./types.js";
import { failed, type DetectionContext } from "./context.js";
import { imaginedTestPass, ownWords, reachable, resultAmounts, transactionAmounts } from "./text-signals.js";
import { finding, isFailedResult, isVerification, quote, resultOf } from "./util.js";

/**
 * FM-3.3 Incorrect verification.
 * Signals: a check ran and failed (non-zero exit, error flag, failing tests, "not found"), and the agent then claims
 * success ("verified", "tests pass", "fixed") without a later check that passed.
 * Guards against: a failure followed by a fix and a passing re-check; claims that precede the failed check; plans,
 * requests and questions ("once confirmed, I will…"); failure reports that mention verifying; a claim about a
 * different domain action than the one that failed ("cancelled" after a failed booking); a known exit code of 0.
 * Only the check right before the claim counts.
 */
const SUCCESS_CLAIM_RE = /\b(verified|has been (updated|changed|completed|booked|cancelled|canceled)|confirmed|all tests pass(ed)?|tests? (now )?pass(es|ed|ing)?|works (correctly|as expected|now)|is (now )?(fixed|resolved|working)|has been (fixed|resolved|verified)|successfully (fixed|resolved|verified|validated)|validation (passed|succeeded))\b/i;
const FAIL_TEXT_RE = /\b(FAILED|FAILURES?|AssertionError|Traceback \(most recent call last\)|No such file or directory|command not found|Error:|[1-9]\d* failed)\b/;

/** A tool result that contradicts a success claim: any failed result, or a check whose output reports failures. */
function failedCheck(trace: Trace, s: Step): boolean {
  if (s.kind !== "tool_result") return false;
  if (isFailedResult(s)) return true;
  if (s.tool?.exitCode !== undefined) return false; // a known exit code of 0 outranks scary-looking output text
  const call = s.tool?.callIndex !== undefined ? trace.steps[s.tool.callIndex] : undefined;
  return (call === undefined || isVerification(call)) && FAIL_TEXT_RE.test(stepContent(s));
}

/** The sentence around a match. */
function sentenceAt(text: string, index: number): string {
  const start = Math.max(text.lastIndexOf(".", index - 1), text.lastIndexOf("\n", index - 1), text.lastIndexOf("!", index - 1), text.lastIndexOf("?", index - 1)) + 1;
  const ends = [".", "\n", "!", "?"].map((c) => text.indexOf(c, index)).filter((i) => i >= 0);
  return text.slice(start, ends.length ? Math.min(...ends) + 1 : text.length).trim();
}

/**
 * A success claim, not a plan ("once confirmed, I will…"), a request ("please confirm"), a question, or a failure
 * report that merely mentions verifying ("we verified that the script ran; despite that, File not found").
 */
function successClaim(text: string): RegExpExecArray | undefined {
  const re = new RegExp(SUCCESS_CLAIM_RE.source, "gi");
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const sentence = sentenceAt(text, m.index);
    if (/^\W*(once|if|after|until|when|to|please|before|so that|in order to)\b/i.test(sentence) || /\b(once|if|until|after) (it|this|that|the|we|you|they)\b[^.]*$/i.test(sentence.slice(0, sentence.toLowerCase().indexOf(m[0].toLowerCase()))) || /\?\s*$/.test(sentence)) continue;
    if (/\b(despite|still (an issue|fail|not)|not (yet )?(verified|confirmed)|unable|could not|couldn't|cannot)\b/i.test(sentence)) continue;
    // confirming a problem ("confirmed the error was a ValueError") is a diagnosis, not a success claim
    if (/\b(confirm\w*|verif\w*)\b[^.]{0,40}\b(error|exception|issue|bug|failure|problem|crash)\b/i.test(sentence)) continue;
    // a message that goes on to report the failure ("… 3. Despite creating the file: File not found") is not a claim
    if (/\bdespite\b[^.]{0,120}\b(error|not found|fail\w*|missing)\b/i.test(text)) continue;
    return m;
  }
  return undefined;
}

const DOMAIN_VERB = /^(book|cancel|update|modify|exchange|return|create|delete|send|transfer|add|remove|set)_/i;

/**
 * A report on a consequential action (a booking, cancellation, refund) whose amounts the action's own result
 * contradicts: the agent read the result as confirming what it expected without checking the figures.
 */
function reportContradictsResult(trace: Trace): Finding[] {
  for (const call of trace.steps) {
    if (call.kind !== "tool_call" || call.role !== "assistant" || !DOMAIN_VERB.test(call.tool?.name ?? "")) continue;
    const result = resultOf(trace, call);
    if (!result || isFailedResult(result)) continue;
    const { transactions, money } = resultAmounts(stepContent(result));
    if (transactions.length === 0) continue;
    // the agent's next words to the user
    const report = trace.steps.find((s) => s.index > result.index && s.role === "assistant" && s.kind === "message" && (s.text ?? "").trim() !== "");
    if (!report || trace.steps.some((s) => s.index > result.index && s.index < report.index && s.kind === "tool_call")) continue;
    // money the agent says moved must follow from what the result moved (a payment, a sum of payments); a total or a
    // price it states may also come from the result's prices — or from an earlier lookup (other reservations)
    const { moved, totals } = transactionAmounts(report.text!);
    if (moved.length === 0 && totals.length === 0) continue;
    const cents = (x: number) => Math.round(x * 100);
    const fromMoves = reachable(transactions);
    const fromPrices = reachable([...transactions, ...money]);
    const seenBefore = new Set(trace.steps.filter((s) => s.index < call.index && s.kind === "tool_result").flatMap((s) => resultAmounts(stepContent(s)).money).map(cents));
    if (moved.some((x) => fromMoves.has(cents(x))) || totals.some((x) => fromPrices.has(cents(x)) || seenBefore.has(cents(x)))) continue;
    const stated = [...moved, ...totals];
    return [finding("incorrect-verification", "3.3", [result, report], quote(report, /\$\s?\d/), `the agent reported amounts (${stated.map((x) => `$${x}`).join(", ")}) that the ${call.tool!.name} result does not show (it moved ${transactions.join(", ")})`, 0.7)];
  }
  return [];
}

/** A test run that passed only in the model's own text, claimed as a check. */
function imaginedPass(trace: Trace): Finding[] {
  const s = trace.steps.find((x) => imaginedTestPass(x));
  if (!s) return [];
  const m = imaginedTestPass(s)!;
  return [finding("incorrect-verification", "3.3", [s], m[0].trim(), "the passing test output was written by the model itself, not produced by a test run", 0.8)];
}

/**
 * In a failed run, an agent declares the result verified while the information behind it was never obtained: a
 * failed tool call, or an admission of missing or hypothetical data, stands right before the verification claim.
 */
function verifiedOnMissingData(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!failed(ctx)) return [];
  const instructions = new Set(instructionSteps(trace).map((x) => x.index));
  const words = (s: Step) => ownWords(trace, s, instructions);
  for (const claim of trace.steps) {
    if (claim.role !== "assistant" || (claim.kind !== "message" && claim.kind !== "reasoning")) continue;
    const text = words(claim);
    const m = VERIFIED_CLAIM_RE.exec(text);
    if (!m || negated(text, m.index)) continue;
    // confirming a problem ("the traceback confirms that the error…") is a diagnosis, not a verification claim
    if (/\b(?:error|exception|traceback|bug|issue|fails?|failure|crash|problem)\b/i.test(sentenceAt(text, m.index))) continue;
    // a ledger or report that admits the gap anywhere in the same turn
    const window = trace.steps.slice(Math.max(0, claim.index - 4), claim.index);
    const gap =
      (UNOBTAINED_RE.test(text) || HYPOTHETICAL_RE.test(text) ? claim : undefined) ??
      [...window].reverse().find((s) => (s.kind === "tool_result" && isFailedResult(s) && !isShellTool(s.tool?.name ?? "")) || UNOBTAINED_RE.test(words(s)) || HYPOTHETICAL_RE.test(words(s)));
    if (!gap) continue;
    return [finding("incorrect-verification", "3.3", gap === claim ? [claim] : [gap, claim], quote(claim, new RegExp(m[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))), "the failed run's result was declared verified although the information it rests on was never obtained", 0.6, ["steps", "outcome"])];
  }
  return [];
}

/** A negation just before a claim ("none of them has been confirmed", "not verified"). */
function negated(text: string, at: number): boolean {
  return /\b(?:not|never|no|none(?: of \w+)?|nothing|neither|nor|cannot|can't|couldn't|hasn't|haven't|isn't|wasn't|weren't|without)\b[^.!?\n]{0,24}$/i.test(text.slice(Math.max(0, at - 40), at));
}

const VERIFIER_RE = /verif|critic|review|check|judge|orchestrator|manager/i;
const SATISFIED_RE = /"is_request_satisfied"\s*:\s*\{[^}]*?"answer"\s*:\s*true/;

/**
 * In a failed run, the agent whose job is to check (a verifier, critic, reviewer, or an orchestrator's "request
 * satisfied" ledger) declared the result correct near the end: the check existed and was wrong.
 */
function verifierApprovedFailure(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!failed(ctx)) return [];
  const agents = new Set(trace.steps.filter((s) => s.role === "assistant").map((s) => s.agent));
  if (agents.size < 2) return [];
  const late = finalStretch(trace);
  const prose = (t: string) => t.replace(/```[\s\S]*?(?:```|$)/g, " ");
  const approves = (t: string) => {
    if (SATISFIED_RE.test(t)) return true;
    // a ledger that says the request is not satisfied approves nothing, whatever its reasons mention
    if (/"is_request_satisfied"\s*:\s*\{[^{}]*?"answer"\s*:\s*false/.test(t)) return false;
    const m = VERIFIED_CLAIM_RE.exec(prose(t));
    return m !== null && !negated(prose(t), m.index);
  };
  const claim = [...late].reverse().find((s) => VERIFIER_RE.test(s.agent) && approves(s.text!));
  if (!claim) return [];
  const re = SATISFIED_RE.test(claim.text!) ? /is_request_satisfied/ : VERIFIED_CLAIM_RE;
  return [finding("incorrect-verification", "3.3", [claim], quote(claim, re), `${claim.agent} approved a result that the run's outcome shows was wrong`, 0.55, ["steps", "outcome"])];
}

/**
 * A failed run whose agents set out to verify before giving their final answer (not one forced out by a cap or a
 * fault): a verification step existed, and the wrong answer passed it.
 */
function checkedButWrong(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!failed(ctx) || ["cap", "infra"].includes(runEnd(trace).kind)) return [];
  const final = finalAnswerStep(trace);
  if (!final) return [];
  // ("confirm" is left out: confirming with the user is asking, not checking)
  const check = finalStretch(trace, final.index, 0.3).find((s) => s.kind !== "tool_call" && VERIFY_INTENT_RE.test((s.text ?? "").replace(/\bconfirm\w*/gi, "")));
  if (!check) return [];
  return [finding("incorrect-verification", "3.3", [check], quote(check, VERIFY_INTENT_RE), "the agents verified before answering, and the failed run's wrong answer passed their check", 0.55, ["steps", "outcome"])];
}

export const incorrectVerification: Detector = {
  id: "incorrect-verification",
  mode: "3.3",
  description: "A success claim after a failed check; a report whose amounts the action's result contradicts; a test pass the model wrote itself; a failed run declared verified on data never obtained.",
  detect(trace: Trace, ctx: DetectionContext) {
    const extra = [...reportContradictsResult(trace), ...imaginedPass(trace), ...verifiedOnMissingData(trace, ctx), ...verifierApprovedFailure(trace, ctx), ...checkedButWrong(trace, ctx)];
    if (extra.length) return extra.slice(0, 1);
    const claims = trace.steps.filter((s) => s.role === "assistant" && (s.kind === "message" || s.kind === "reasoning") && successClaim(s.text ?? ""));
    for (const claim of claims) {
      const before = trace.steps.slice(0, claim.index).filter((s) => s.kind === "tool_result");
      const lastCheck = before[before.length - 1];
      // a check killed by a timeout said nothing about the result (an infrastructure fault, not a failed check)
      if (!lastCheck || !failedCheck(trace, lastCheck) || lastCheck.tags?.includes("timeout")) continue;
      // a domain action that failed is contradicted only by a claim about that action ("booked" after book_* failed)
      const call = lastCheck.tool?.callIndex !== undefined ? trace.steps[lastCheck.tool.callIndex] : undefined;
      const verb = DOMAIN_VERB.exec(call?.tool?.name ?? "")?.[1]?.toLowerCase();
      const m = successClaim(claim.text ?? "")!;
      if (verb && !new RegExp(`\\b${verb.slice(0, 4)}`, "i").test(sentenceAt(claim.text ?? "", m.index))) continue;
      // a claim that cites another check ("verified by verify_fix.py") than the script that failed is about that one
      const cited = /[\w./-]+\.(?:py|sh|js|ts)\b/.exec((claim.text ?? "").slice(m.index, m.index + 120))?.[0];
      const ran = call ? stepContent(call) : "";
      if (cited && ran && !ran.includes(cited)) continue;
      return [finding("incorrect-verification", "3.3", [lastCheck, claim], quote(claim, new RegExp(m[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i")), "the agent claims success right after a check that failed", 0.75)];
    }
    return [];
  },
};
