import type { Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, isFailedResult, isVerification, quote } from "./util.js";

/**
 * FM-3.3 Incorrect verification.
 * Signals: a check ran and failed (non-zero exit, error flag, failing tests, "not found"), and the agent then claims
 * success ("verified", "tests pass", "fixed") without a later check that passed.
 * Guards against: a failure followed by a fix and a passing re-check; claims that precede the failed check;
 * failures in unrelated exploration that the claim does not rest on (only checks within the last stretch count).
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

export const incorrectVerification: Detector = {
  id: "incorrect-verification",
  mode: "3.3",
  description: "A success claim after a failed check, with no passing check in between.",
  detect(trace: Trace) {
    const claims = trace.steps.filter((s) => s.role === "assistant" && (s.kind === "message" || s.kind === "reasoning") && SUCCESS_CLAIM_RE.test(s.text ?? ""));
    for (const claim of claims) {
      const before = trace.steps.slice(0, claim.index).filter((s) => s.kind === "tool_result");
      const lastChecks = before.slice(-3);
      const failed = lastChecks.filter((s) => failedCheck(trace, s));
      const lastCheck = lastChecks[lastChecks.length - 1];
      if (!failed.length || !lastCheck || !failedCheck(trace, lastCheck)) continue;
      return [finding("incorrect-verification", "3.3", [lastCheck, claim], quote(claim, SUCCESS_CLAIM_RE), "the agent claims success right after a check that failed", 0.75)];
    }
    return [];
  },
};
