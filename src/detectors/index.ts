import type { Finding, Trace } from "../trace/index.js";
import { quoteInSteps } from "../trace/index.js";
import type { Detector } from "./types.js";
import { stepRepetition } from "./step-repetition.js";
import { terminationUnaware } from "./termination-unaware.js";
import { prematureTermination } from "./premature-termination.js";
import { noVerification } from "./no-verification.js";
import { incorrectVerification } from "./incorrect-verification.js";
import { conversationReset } from "./conversation-reset.js";
import { historyLoss } from "./history-loss.js";
import { reasoningActionMismatch } from "./reasoning-action-mismatch.js";
import { taskSpecViolation } from "./task-spec-violation.js";
import { clarificationFailure } from "./clarification-failure.js";
import { derailment } from "./derailment.js";
import { informationWithholding } from "./information-withholding.js";
import { ignoredInput } from "./ignored-input.js";
import { computeSignals, type Signals } from "./signals.js";
import { detectionContext, type DetectionContext } from "./context.js";

export type { Detector } from "./types.js";
export { detectionContext, failed, type DetectionContext } from "./context.js";
export { decisiveStep, type DecisiveResult } from "./decisive.js";
export { runEnd, type RunEnd, type EndKind } from "./run-end.js";
export { extractContract, type TaskContract, type Requirement, type ExpectedAction } from "./contract.js";
export { computeSignals, type Signals } from "./signals.js";

/** Bumped whenever a detector's behaviour changes, so stored results say which rules produced them. */
export const RULES_VERSION = "0.4.2";
export const RULES_ANNOTATOR = `rules@${RULES_VERSION}`;

export const DETECTORS: readonly Detector[] = [
  taskSpecViolation,
  stepRepetition,
  historyLoss,
  terminationUnaware,
  conversationReset,
  clarificationFailure,
  derailment,
  informationWithholding,
  ignoredInput,
  reasoningActionMismatch,
  prematureTermination,
  noVerification,
  incorrectVerification,
];

export interface RuleDiagnosis {
  findings: Finding[];
  signals: Signals;
  /** Modes examined on this trace, with the detectors that examined each (a mode absent here is not measured). */
  measuredBy: Record<string, string[]>;
  /** Findings a detector produced whose quote was not in the cited steps: dropped, and counted here. */
  rejected: number;
  /** Detectors that threw, with the message: the trace is still diagnosed by the others. */
  failures: { detector: string; message: string }[];
}

/**
 * Runs every rule detector on a trace. A finding is kept only if its evidence quote is really in the steps it
 * cites (a claim must show its evidence); a detector that throws is reported, never silently skipped, and the modes
 * of the detectors that ran are returned as measured.
 */
export function runDetectors(trace: Trace, detectors: readonly Detector[] = DETECTORS, ctx: DetectionContext = detectionContext(trace)): RuleDiagnosis {
  const findings: Finding[] = [];
  const failures: RuleDiagnosis["failures"] = [];
  const measuredBy: Record<string, string[]> = {};
  let rejected = 0;
  for (const d of detectors) {
    let out: Finding[];
    try {
      out = d.detect(trace, ctx);
    } catch (e) {
      failures.push({ detector: d.id, message: (e as Error).message });
      continue;
    }
    (measuredBy[d.mode] ??= []).push(`rules/${d.id}`);
    for (const f of out) {
      const cited = f.steps.map((i) => trace.steps[i]).filter((s) => s !== undefined);
      if (f.evidence && cited.length === f.steps.length && quoteInSteps(f.evidence, cited)) findings.push(f);
      else rejected++;
    }
  }
  return { findings, signals: computeSignals(trace), measuredBy, rejected, failures };
}
