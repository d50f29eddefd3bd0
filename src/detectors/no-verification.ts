import type { Step, Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, isFailedResult, isMutating, isVerification, quote, resultOf } from "./util.js";

/**
 * FM-3.2 No or incomplete verification.
 * Signals: the agent changed something (a patch, an edit, a written deliverable, a cluster mutation) and then
 * declared the result or submitted it with no check after the last change — no test run, no re-read, no schema or
 * status query.
 * Guards against: runs with no changes at all (nothing to verify in this sense), runs whose last change failed
 * (that is an error, not an unverified result), changes whose result returns the new state (the system's answer is
 * the check), and long stretches of work after the change (not a clean "change, then claim").
 */
const CLAIM_RE = /\b(done|complete|completed|finished|fixed|resolved|submitted|written|created|updated|implemented|root cause|final answer|the answer is|TERMINATE)\b/i;
const SUBMIT_RE = /^(submit|finish|final_answer|task_complete|attempt_completion)$/i;

/**
 * A change whose result returns the resulting state (a JSON object with several fields, as domain APIs such as
 * tau-bench's `update_reservation_flights` do) is its own check: the agent reports what the system said.
 */
function selfVerifying(result: Step | undefined): boolean {
  const out = (result?.tool?.output ?? result?.text ?? "").trim();
  if (!out.startsWith("{")) return false;
  try {
    const v = JSON.parse(out) as unknown;
    return typeof v === "object" && v !== null && Object.keys(v).length >= 3;
  } catch {
    return false;
  }
}

export const noVerification: Detector = {
  id: "no-verification",
  mode: "3.2",
  description: "A final claim or submission after the last change with no verification in between.",
  detect(trace: Trace) {
    const steps = trace.steps;
    let lastChange: Step | undefined;
    for (const s of steps) if (s.kind === "tool_call" && isMutating(s)) lastChange = s;
    if (!lastChange) return [];
    const changeResult = resultOf(trace, lastChange);
    if (changeResult && (isFailedResult(changeResult) || selfVerifying(changeResult))) return [];
    const after = steps.slice(lastChange.index + 1);
    // a user reporting back on the change (tau2's user runs the check on their own device) is external feedback
    if (after.some((s) => s.role === "user" && s.kind === "message" && (s.text ?? "").trim())) return [];
    const checks = after.filter((s) => s.kind === "tool_call" && isVerification(s) && !isMutating(s));
    if (checks.length) return [];
    const claim =
      [...after].reverse().find((s) => s.kind === "tool_call" && SUBMIT_RE.test(s.tool?.name ?? "")) ??
      [...after].reverse().find((s) => s.role === "assistant" && s.kind === "message" && CLAIM_RE.test(s.text ?? ""));
    if (!claim) return [];
    const tail = after.filter((s) => s.kind === "tool_call");
    if (tail.length > 3) return []; // lots of activity after the change: not a clean "change then claim"
    return [
      finding("no-verification", "3.2", [lastChange, claim], quote(claim, CLAIM_RE), `the last change (${lastChange.tool?.name}) was followed by a final claim with no check in between`, 0.65),
    ];
  },
};
