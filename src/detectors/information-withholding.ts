import type { Trace } from "../trace/index.js";
import type { Detector } from "./types.js";
import { TRANSFER_RE } from "./run-end.js";
import { finding, quote } from "./util.js";

/**
 * FM-2.4 Information withholding.
 * Signals: the agent hands the conversation to a human with a summary of what it found, without having told the user
 * any of it: after its last lookup, no message to the user precedes the transfer (the findings went only to the
 * human agent, and the user could not decide on them).
 * Guards against: transfers the user asked for after the agent had explained the situation (a message to the user
 * between the lookup and the transfer), transfers with no summary, and runs with no lookup at all.
 */
export const informationWithholding: Detector = {
  id: "information-withholding",
  mode: "2.4",
  description: "Findings passed to a human agent in a transfer summary but never told to the user.",
  detect(trace: Trace) {
    const transfer = trace.steps.find((s) => s.kind === "tool_call" && s.role === "assistant" && TRANSFER_RE.test(s.tool?.name ?? ""));
    if (!transfer) return [];
    const summary = JSON.stringify(transfer.tool?.args ?? "");
    if (summary.split(/\s+/).length < 12) return [];
    const lookups = trace.steps.filter((s) => s.index < transfer.index && s.kind === "tool_call" && s.role === "assistant" && !TRANSFER_RE.test(s.tool?.name ?? ""));
    const lastLookup = lookups[lookups.length - 1];
    if (!lastLookup) return [];
    const told = trace.steps.some((s) => s.index > lastLookup.index && s.index < transfer.index && s.role === "assistant" && s.kind === "message" && (s.text ?? "").trim().length > 40);
    if (told) return [];
    return [finding("information-withholding", "2.4", [transfer], quote(transfer), "the agent put what it found into the transfer summary for a human but never told the user", 0.6)];
  },
};
