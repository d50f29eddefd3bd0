import type { Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, quote } from "./util.js";

/**
 * FM-2.2 Fail to ask for clarification.
 * Signals: an agent says it lacks information the task needs (it cannot see, access or obtain it) and in the same
 * turn proceeds on an assumption ("we assume…", "hypothetical…", "let's use an example") instead of asking the user
 * or another agent for it.
 * Guards against: assumptions stated as a question or a request for confirmation, the task's own hypotheticals
 * (instruction steps are not the agent speaking), and assumptions about things the agent then checks (a lookup or a
 * tool call follows in the same turn's plan is not an assumption that replaces information).
 */
const LACK_RE = /\b(?:(?:can ?not|can't|could ?n[o']t|unable to|am not able to|don't have (?:access|the ability)|do not have (?:access|the ability)) (?:to )?(?:[\w-]+ ){0,3}?(?:see|view|access|interpret|read|open|listen|play|retrieve|obtain|browse)|(?:no|without) (?:access to|direct access|the ability to))\b/i;
const ASSUME_RE = /\b(?:(?:we|I|let'?s|let us)(?:'ll| will)? assume|assuming (?:that|the)|hypothetical(?:ly)?|for (?:the sake of|illustration|demonstration)|(?:let'?s|we can|I'll) (?:use|take|create) (?:an? )?(?:example|sample|estimate)|based on (?:an? )?(?:example|typical|general))\b/i;

export const clarificationFailure: Detector = {
  id: "clarification-failure",
  mode: "2.2",
  description: "An agent that lacks information the task needs proceeds on an assumption instead of asking for it.",
  detect(trace: Trace) {
    const firstAgent = trace.steps.find((s) => s.role === "assistant")?.index ?? 0;
    for (const s of trace.steps) {
      if (s.role !== "assistant" || s.index === firstAgent || (s.kind !== "message" && s.kind !== "reasoning") || !s.text) continue;
      const lack = LACK_RE.exec(s.text);
      if (!lack) continue;
      const after = s.text.slice(Math.max(0, lack.index - 200));
      const assume = ASSUME_RE.exec(after);
      if (!assume) continue;
      // an assumption put to someone as a question is a request for clarification
      const sentenceEnd = after.indexOf("?", assume.index);
      if (sentenceEnd >= 0 && sentenceEnd - assume.index < 160 && !after.slice(assume.index, sentenceEnd).includes(".")) continue;
      return [finding("clarification-failure", "2.2", [s], quote(s, ASSUME_RE), "the agent lacked information the task needed and proceeded on an assumption instead of asking for it", 0.65)];
    }
    return [];
  },
};
