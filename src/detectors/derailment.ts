import type { Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, quote } from "./util.js";

/**
 * FM-2.3 Task derailment.
 * Signals: the system's own progress tracking says the work has drifted from the objective — an orchestrator ledger
 * or a reviewer calling the recent work irrelevant, unrelated or off-task — at least twice.
 * Guards against: a single remark (a search result that turned out irrelevant and was dropped), remarks about pages
 * or data being irrelevant while the team stays on its objective are counted only when repeated, and the task's own
 * wording.
 */
const DRIFT_RE = /\b(?:(?:is|are|was|were|been|seems?|appears? to be) (?:irrelevant|unrelated|off[- ]topic|off[- ]track|a distraction)|(?:drift(?:ed|ing)?|deviat(?:ed|ing)|strayed|distracted) (?:away )?from (?:the )?(?:task|objective|goal|request|original)|not (?:related|relevant) to (?:the )?(?:task|request|objective|question|original))\b/i;

export const derailment: Detector = {
  id: "derailment",
  mode: "2.3",
  description: "The system's own progress tracking says, more than once, that the work has drifted from the objective.",
  detect(trace: Trace) {
    const firstAgent = trace.steps.find((s) => s.role === "assistant")?.index ?? 0;
    const flagged = trace.steps.filter((s) => s.role === "assistant" && s.index > firstAgent && DRIFT_RE.test(s.text ?? ""));
    if (flagged.length < 2) return [];
    return [finding("derailment", "2.3", flagged.slice(0, 6), quote(flagged[0]!, DRIFT_RE), `the system itself said ${flagged.length} times that the work had drifted from the objective`, 0.6)];
  },
};
