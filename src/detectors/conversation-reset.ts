import type { Trace } from "../trace/index.js";
import { normalizeWhitespace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { finding, hasTag, quote } from "./util.js";

/**
 * FM-2.1 Conversation reset.
 * Signals: the original task statement is posted again mid-run by a user or system turn that is not a harness retry;
 * an agent announces it is starting over.
 * Guards against: harness re-prompts (tagged and counted under 1.5), planned re-planning that only quotes the task
 * inside a longer agent message, phase-based frameworks (ChatDev, MetaGPT) that re-send the task by design,
 * "from scratch" about a file or in quoted search results, and the first occurrence of the task itself.
 */
// first person only: "let's start over", "I will restart the task" — not "rewrite the file from scratch" or search results
const RESTART_RE = /\b(let'?s|let us|I('ll| will| am going to)|we('ll| will| need to)) (start (over|again)|restart (the )?(task|conversation|whole process|from the beginning)|begin again)\b/i;
/** Phase-based frameworks re-send the task prompt at every phase by design: a repeat there is not a reset. */
const PHASED = new Set(["chatdev", "metagpt"]);

export const conversationReset: Detector = {
  id: "conversation-reset",
  mode: "2.1",
  description: "The task statement re-posted mid-run, or an agent starting over.",
  detect(trace: Trace) {
    const firstTask = trace.steps.find((s) => s.role === "user" && !hasTag(s, "injected-context") && (s.text ?? "").trim().length >= 40);
    const out = [];
    if (firstTask && !PHASED.has((trace.framework ?? "").toLowerCase())) {
      const task = normalizeWhitespace(firstTask.text!);
      const agentBefore = (i: number) => trace.steps.slice(firstTask.index + 1, i).filter((s) => s.role === "assistant").length;
      const again = trace.steps.find(
        (s) => s.index > firstTask.index && (s.role === "user" || s.role === "system") && !hasTag(s, "harness-retry") && normalizeWhitespace(s.text ?? "") === task && agentBefore(s.index) >= 3,
      );
      if (again) out.push(finding("conversation-reset", "2.1", [firstTask, again], quote(again), "the original task was posted again mid-run, restarting the conversation", 0.7));
    }
    const restart = trace.steps.find((s) => s.role === "assistant" && RESTART_RE.test(s.text ?? ""));
    if (restart) out.push(finding("conversation-reset", "2.1", [restart], quote(restart, RESTART_RE), "an agent announced it was starting over", 0.6));
    return out;
  },
};
