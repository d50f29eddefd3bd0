import type { Finding, Trace } from "../trace/index.js";

/**
 * A rule detector: a pure function of a trace that claims one MAST mode, only with a verbatim quote from the steps it
 * cites. Each detector documents the signals it uses and the false-positive patterns it guards against.
 */
export interface Detector {
  /** e.g. `step-repetition`; findings carry `rules/<id>`. */
  id: string;
  mode: string;
  description: string;
  detect(trace: Trace): Finding[];
}
