import type { Step, Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, isFailedResult, isMutating, isVerification, quote, resultOf } from "./util.js";

/**
 * FM-3.2 No or incomplete verification.
 * Signals: the agent changed something (a patch, an edit, a written deliverable, a cluster mutation) and then
 * declared the result or submitted it with no check after the last change — no test run, no re-read, no schema or
 * status query.
 * Guards against: runs with no changes at all (nothing to verify in this sense), runs whose last change failed
 * (that is an error, not an unverified result), and checks that happen after the final claim but before the end.
 */
const CLAIM_RE = /\b(done|complete|completed|finished|fixed|resolved|submitted|written|created|updated|implemented|root cause|final answer|the answer is|TERMINATE)\b/i;
const SUBMIT_RE = /^(submit|finish|final_answer|task_complete|attempt_completion)$/i;

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
    if (changeResult && isFailedResult(changeResult)) return [];
    const after = steps.slice(lastChange.index + 1);
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
