import type { Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { Detector } from "./types.js";
import { changedFile, isCleanupCall, isCompletionCall, isProseFile } from "../trace/actions.js";
import { finding, isFailedResult, isMutating, isVerification, quote, resultOf, returnsStateResult } from "./util.js";

/**
 * FM-3.2 No or incomplete verification.
 * Signals: the agent changed something (a patch, an edit, a written deliverable, a cluster mutation) and then
 * declared the result or submitted it with no check after the last change — no test run, no re-read, no schema or
 * status query.
 * Guards against: runs with no changes at all (nothing to verify in this sense), refused changes (the last change
 * that took effect is the one to check), changes whose result returns the new state (the system's answer is the
 * check), running or reading the changed file, a user reporting back on the change, scratch-file cleanup, prose
 * edits confirmed by the editor (unless the claim is a checkable "all references removed"), and long stretches of
 * work after the change (not a clean "change, then claim").
 */
const COMPLETENESS_RE = /\b(all|every|each|no longer|none of|removed|replaced)\b/i;
const CLAIM_RE = /\b(done|complete|completed|finished|fixed|resolved|submitted|written|created|updated|implemented|root cause|final answer|the answer is|TERMINATE)\b/i;

/** The file a change writes, when its arguments name one (shared with the verification guard: src/trace/actions.ts). */
const changedPath = (s: Step): string | undefined => (s.tool ? changedFile(s.tool) : undefined);

export const noVerification: Detector = {
  id: "no-verification",
  mode: "3.2",
  description: "A final claim or submission after the last change with no verification in between.",
  detect(trace: Trace) {
    const steps = trace.steps;
    let lastChange: Step | undefined;
    // removing scratch files (SWE-agent deletes its reproduce script before submitting) is cleanup, not the change to check
    const cleanup = (s: Step) => s.tool !== undefined && isCleanupCall(s.tool);
    // the last change that took effect: a refused edit changed nothing, the one before it is what needs checking
    for (const s of steps) if (s.kind === "tool_call" && isMutating(s) && !cleanup(s) && !isFailedResult(resultOf(trace, s))) lastChange = s;
    if (!lastChange) return [];
    const changeResult = resultOf(trace, lastChange);
    if (changeResult && returnsStateResult(changeResult)) return [];
    const after = steps.slice(lastChange.index + 1);
    // a user reporting back on the change (tau2's user runs the check on their own device) is external feedback
    if (after.some((s) => s.role === "user" && s.kind === "message" && (s.text ?? "").trim())) return [];
    // running or reading the changed file is a check too (python tests/x.py after editing it)
    const target = changedPath(lastChange);
    const checks = after.filter((s) => s.kind === "tool_call" && !isMutating(s) && (isVerification(s) || (target !== undefined && stepContent(s).includes(target))));
    if (checks.length) return [];
    const claim =
      [...after].reverse().find((s) => s.kind === "tool_call" && s.tool !== undefined && isCompletionCall(s.tool)) ??
      [...after].reverse().find((s) => s.role === "assistant" && s.kind === "message" && CLAIM_RE.test(s.text ?? ""));
    if (!claim) return [];
    // an edit of prose (notes, plans, docs) confirmed by the editor needs no further check — unless the claim is a
    // checkable completeness claim ("removed all references", "no longer mentions")
    if (isProseFile(target) && !COMPLETENESS_RE.test(claim.text ?? "")) return [];
    const tail = after.filter((s) => s.kind === "tool_call");
    if (tail.length > 3) return []; // lots of activity after the change: not a clean "change then claim"
    return [
      finding("no-verification", "3.2", [lastChange, claim], quote(claim, CLAIM_RE), `the last change (${lastChange.tool?.name}) was followed by a final claim with no check in between`, 0.65),
    ];
  },
};
