import type { Finding, Trace } from "../trace/index.js";
import type { DetectionContext } from "./context.js";

/**
 * A rule detector: a pure function of a trace and its context (task, contract, scored outcome) that claims one MAST
 * mode, only with a verbatim quote from the steps it cites. Each detector documents the signals it uses and the
 * false-positive patterns it guards against; each finding says in `basis` whether it used more than the steps.
 */
export interface Detector {
  /** e.g. `step-repetition`; findings carry `rules/<id>`. */
  id: string;
  /** The mode this detector examines: a trace it ran on has this mode measured (0 or 1, never null). */
  mode: string;
  description: string;
  detect(trace: Trace, ctx: DetectionContext): Finding[];
}
