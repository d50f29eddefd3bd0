import type { Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, isFailedResult, isVerification, quote } from "./util.js";

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

export const incorrectVerification: Detector = {
  id: "incorrect-verification",
  mode: "3.3",
  description: "A success claim after a failed check, with no passing check in between.",
  detect(trace: Trace) {
    const claims = trace.steps.filter((s) => s.role === "assistant" && (s.kind === "message" || s.kind === "reasoning") && successClaim(s.text ?? ""));
    for (const claim of claims) {
      const before = trace.steps.slice(0, claim.index).filter((s) => s.kind === "tool_result");
      const lastCheck = before[before.length - 1];
      if (!lastCheck || !failedCheck(trace, lastCheck)) continue;
      // a domain action that failed is contradicted only by a claim about that action ("booked" after book_* failed)
      const call = lastCheck.tool?.callIndex !== undefined ? trace.steps[lastCheck.tool.callIndex] : undefined;
      const verb = DOMAIN_VERB.exec(call?.tool?.name ?? "")?.[1]?.toLowerCase();
      const m = successClaim(claim.text ?? "")!;
      if (verb && !new RegExp(`\\b${verb.slice(0, 4)}`, "i").test(sentenceAt(claim.text ?? "", m.index))) continue;
      return [finding("incorrect-verification", "3.3", [lastCheck, claim], quote(claim, new RegExp(m[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i")), "the agent claims success right after a check that failed", 0.75)];
    }
    return [];
  },
};
