import type { Outcome, Task, Trace } from "../trace/index.js";
import { extractContract, type TaskContract } from "./contract.js";

/**
 * What a detector may know about a run besides its steps: the task (statement, expected answer or actions), the
 * scored outcome, and the run's contract (explicit, checkable requirements). A finding that uses any of these says
 * so in its `basis`, so that statistics relating modes to failure can leave out what was found *because* the run
 * failed.
 */
export interface DetectionContext {
  task: Task | undefined;
  /** The scored outcome; `success: null` when unknown. */
  outcome: Outcome;
  contract: TaskContract;
}

const UNKNOWN: Outcome = { success: null, score: null, metric: null };

/** The context of a trace: its task, its contract, and the outcome when one was scored. */
export function detectionContext(trace: Trace, outcome: Outcome = UNKNOWN): DetectionContext {
  return { task: trace.task, outcome, contract: extractContract(trace) };
}

/** The run failed, by the scored outcome (a partial ITBench score below the success rule is not a failure). */
export const failed = (ctx: DetectionContext): boolean => ctx.outcome.success === false;
