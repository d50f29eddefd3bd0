import type { Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { canonicalArgs, finding, hasTag, isMutating, quote } from "./util.js";

/**
 * FM-1.4 Loss of conversation history.
 * Signals: after a context compaction or truncation marker, the agent re-runs discovery it had already done before
 * the marker; an agent says it has lost or cannot see the earlier context.
 * Guards against: repeated calls without a compaction in between (that is 1.3 step repetition), and verification
 * re-reads near the end of a run.
 */
const LOST_RE = /\b(I (don't|do not|can't|cannot) (see|recall|remember|find) (the |any )?(previous|earlier|prior) (context|conversation|messages|results)|lost (the |my )?(context|history)|context (was|has been) (truncated|reset|lost))\b/i;

export const historyLoss: Detector = {
  id: "history-loss",
  mode: "1.4",
  description: "Discovery re-run after a context compaction, or an agent saying it lost the earlier context.",
  detect(trace: Trace) {
    const out = [];
    const compaction = trace.steps.find((s) => hasTag(s, "compaction") || (s.kind === "event" && /compact|truncat/i.test(s.text ?? "")));
    if (compaction) {
      const before = new Map<string, number>();
      for (const s of trace.steps.slice(0, compaction.index))
        if (s.kind === "tool_call" && !isMutating(s)) before.set(`${s.tool?.name}\u0000${canonicalArgs(s.tool?.args)}`, s.index);
      const redo = trace.steps.slice(compaction.index + 1).filter((s) => s.kind === "tool_call" && before.has(`${s.tool?.name}\u0000${canonicalArgs(s.tool?.args)}`));
      if (redo.length >= 2)
        out.push(finding("history-loss", "1.4", [compaction, ...redo.slice(0, 5)], quote(redo[0]!), `after the context was compacted the agent re-ran ${redo.length} discovery call(s) it had already made`, 0.7));
    }
    const lost = trace.steps.find((s) => s.role === "assistant" && LOST_RE.test(s.text ?? ""));
    if (lost) out.push(finding("history-loss", "1.4", [lost], quote(lost, LOST_RE), "an agent says it has lost the earlier context", 0.6));
    return out;
  },
};
