import type { Finding, Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { Detector } from "./types.js";
import { argsObject, changedFile, commandText, isCleanupCall, isCompletionCall, isProseFile } from "../trace/actions.js";
import { failed, type DetectionContext } from "./context.js";
import { finalAnswerStep, finalStretch, runEnd } from "./run-end.js";
import { FINAL_ANSWER_RE, VERIFY_INTENT_RE } from "../trace/claims.js";
import { commandOf, finding, isFailedResult, isMutating, isVerification, quote, resultOf, returnsStateResult } from "./util.js";

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

/** The full path a change writes (changedFile keeps only the base name), so test folders can be told apart. */
function changedFullPath(s: Step): string | undefined {
  const o = argsObject(s.tool?.args);
  const p = o?.path ?? o?.file_path ?? o?.filename ?? o?.file;
  return typeof p === "string" && p ? p : changedPath(s);
}

/** A run of the project's own test suite (not a script the agent wrote to reproduce the issue). */
const SUITE_RE = /\b(?:pytest|py\.test|tox|nox|unittest|runtests\.py|manage\.py test|jest|vitest|mocha|(?:npm|yarn|pnpm) (?:run )?test|(?:go|cargo|make|mvn|gradle|ctest) test|ponyc[^\n]*test|make check)\b/i;
const SCRATCH_RE = /\b(?:repro\w*|reproduce\w*|test_(?:fix|issue|bug|repro|my|edge)\w*|verify\w*|check_\w*|debug\w*|scratch\w*)\.py\b/i;
const isCodeFile = (f: string | undefined) => f !== undefined && /\.(?:py|js|ts|go|rs|java|c|cc|cpp|h|rb|php|pony|scala|kt)$/i.test(f) && !/(?:^|\/)tests?\/|test_|_test\./i.test(f);

/**
 * Code was changed and the work submitted, but the project's own tests never ran after the change: the only check,
 * if any, was the agent's own reproduction script (a repro-only check where tests exist is incomplete).
 */
function suiteNeverRun(trace: Trace, ctx: DetectionContext): Finding[] {
  // a run that passed its benchmark's tests was checked where it mattered; a run the agent gave up on is 3.1's
  if (ctx.outcome.success === true) return [];
  const steps = trace.steps;
  if (steps.some((s) => /task_completed["']?\s*[:=]\s*["']?false/i.test(stepContent(s)))) return [];
  // attempted changes count too: an agent that submits after refused edits believes it changed the code
  const changes = steps.filter((s) => s.kind === "tool_call" && s.role === "assistant" && isMutating(s) && isCodeFile(changedFullPath(s)) && !SCRATCH_RE.test(changedFullPath(s) ?? ""));
  const last = changes[changes.length - 1];
  if (!last) return [];
  const done = [...steps].reverse().find((s) => s.index > last.index && ((s.kind === "tool_call" && s.tool !== undefined && isCompletionCall(s.tool)) || (s.kind === "termination" && s.role === "assistant")));
  if (!done) return [];
  const ranSuite = steps.some((s) => s.index > last.index && s.kind === "tool_call" && SUITE_RE.test(commandOf(s) ?? stepContent(s)));
  if (ranSuite) return [];
  const repro = steps.filter((s) => s.index > last.index && s.kind === "tool_call" && s.tool !== undefined && SCRATCH_RE.test(commandText(s.tool) ?? ""));
  const why = repro.length ? "after the last code change only the agent's own reproduction script ran; the project's tests never did" : "the code was changed and submitted without running any test";
  return [finding("no-verification", "3.2", [last, done], quote(done), why, repro.length ? 0.6 : 0.7)];
}


/**
 * A failed run that delivered its final answer with no check of it at all: no agent verified, double-checked or
 * cross-checked anything in the final stretch (a check that happened and was wrong is 3.3's).
 */
function answerNeverChecked(trace: Trace, ctx: DetectionContext): Finding[] {
  if (!failed(ctx)) return [];
  const final = finalAnswerStep(trace);
  if (!final) return [];
  // an answer forced out by a cap or a fault was not checked, whatever was tried before
  const forced = ["cap", "infra"].includes(runEnd(trace).kind);
  const stretch = finalStretch(trace, final.index, 0.3);
  if (!forced && stretch.some((s) => VERIFY_INTENT_RE.test(s.text ?? "") || (s.kind === "tool_call" && isVerification(s)))) return [];
  return [finding("no-verification", "3.2", [final], quote(final, FINAL_ANSWER_RE), forced ? "the failed run's final answer was forced out by a cap or a fault, unchecked" : "the failed run's final answer was given without any check of it", 0.6, ["steps", "outcome"])];
}

const CODE_BLOCK_RE = /```[\w+-]*\n([\s\S]*?)```/g;
const TEST_EVIDENCE_RE = /\b(?:\d+ (?:passed|failed|tests?)|Ran \d+ tests?|pytest|unittest|assert(?:ion)?\w*|test_\w+\s*\(|expected (?:output|result)|FAILED|OK \()/;
const SMOKE_RE = /\b(?:run|ran|runs|executed) successfully(?: without errors)?\b|\bwithout (?:any )?errors\b|\bTest Pass/i;

/**
 * A message-based system (ChatDev, MetaGPT…) wrote software and never tested it: no step ran any test, and the only
 * execution, if any, reported that the program starts without errors (a smoke run checks nothing the task asked).
 */
function codeNeverTested(trace: Trace): Finding[] {
  // systems that act through tools are judged on their tool calls (suiteNeverRun and the rule below)
  if (trace.steps.some((s) => s.kind === "tool_call")) return [];
  const coding = trace.steps.filter((s) => s.role === "assistant" && [...(s.text ?? "").matchAll(CODE_BLOCK_RE)].some((m) => m[1]!.split("\n").length >= 10));
  const last = coding[coding.length - 1];
  if (coding.length < 2 || !last) return [];
  const runs = trace.steps.filter((s) => s.role === "tool" || s.tags?.includes("test-report"));
  // any execution that reports more than "it starts" (test output, or a program's own results) is a check
  if (runs.some((s) => (TEST_EVIDENCE_RE.test(stepContent(s)) || s.role === "tool") && !SMOKE_RE.test(stepContent(s)))) return [];
  const smoke = runs.find((s) => SMOKE_RE.test(stepContent(s)));
  const cited = smoke ?? last;
  return [finding("no-verification", "3.2", smoke ? [last, smoke] : [last], quote(cited, smoke ? SMOKE_RE : undefined), smoke ? "the software was only checked for starting without errors; nothing the task asked for was tested" : "the software was written and reviewed but never run or tested", 0.65)];
}

const RETRIEVAL_RE = /(?:search|visit|browse|fetch|open_?url|read_?(?:page|url|file)|get_?(?:page|url|webpage)|retriev|lookup|query|scrape|wiki)/i;

/**
 * A question answered from a single lookup that nothing cross-checked: the run made exactly one information-gathering
 * call (one search, one page) and then gave its final answer (a final_answer/submit call, or "FINAL ANSWER").
 */
function singleUncheckedSource(trace: Trace, ctx: DetectionContext): Finding[] {
  if (ctx.contract.expectedActions.length) return [];
  const calls = trace.steps.filter((s) => s.kind === "tool_call" && s.role === "assistant" && s.tool !== undefined);
  const done = calls.find((s) => isCompletionCall(s.tool!)) ?? finalAnswerStep(trace);
  if (!done) return [];
  const lookups = calls.filter((s) => s.index < done.index && !isCompletionCall(s.tool!) && RETRIEVAL_RE.test(s.tool!.name));
  const others = calls.filter((s) => s.index < done.index && !isCompletionCall(s.tool!) && !RETRIEVAL_RE.test(s.tool!.name));
  if (lookups.length !== 1 || others.length > 0) return [];
  const cite = lookups[0]!;
  return [finding("no-verification", "3.2", [cite, done], quote(cite), `the final answer rests on one ${cite.tool!.name} call that nothing cross-checked`, 0.55)];
}

export const noVerification: Detector = {
  id: "no-verification",
  mode: "3.2",
  description: "A claim or submission after the last change with no check; code submitted with only a reproduction script (or nothing) run; a failed run's final answer given with no check at all.",
  detect(trace: Trace, ctx: DetectionContext) {
    const extra = [...suiteNeverRun(trace, ctx), ...answerNeverChecked(trace, ctx), ...codeNeverTested(trace), ...singleUncheckedSource(trace, ctx)];
    if (extra.length) return extra.slice(0, 1);
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
