import { compact, type StepDraft } from "../../trace/index.js";

/**
 * A harness cap that ended the run (a step, turn, iteration or cost limit), stated as an explicit final step so that
 * analysis can tell "the harness cut the run" from "the agent stopped" (MAST FM-1.5, not FM-3.1). See
 * docs/CONTRIBUTING-ADAPTERS.md, "Canonical mapping rules".
 */
export const STEP_LIMIT_TAG = "step-limit";

/**
 * The `termination` step an adapter appends when the source shows the run ended on a cap. `text` is the cap in the
 * source's own words where it has them (an error message, an exit status), else a plain statement of the evidence.
 */
export function stepLimitStep(harness: string, text: string, ref?: StepDraft["ref"], time?: string): StepDraft {
  return compact({ agent: harness, role: "system" as const, kind: "termination" as const, text, time, tags: [STEP_LIMIT_TAG], ref });
}
