import type { Finding, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { DetectionContext } from "./context.js";
import type { Detector } from "./types.js";
import { TRANSFER_RE } from "./run-end.js";
import { finding, quote } from "./util.js";

/**
 * FM-2.4 Information withholding.
 * Signals: the agent hands the conversation to a human with a summary of what it found, without having told the user
 * any of it: after its last lookup, no message to the user precedes the transfer (the findings went only to the
 * human agent, and the user could not decide on them).
 * Guards against: transfers the user asked for after the agent had explained the situation (a message to the user
 * between the lookup and the transfer), transfers the task's expected actions call for, transfers with no summary,
 * runs with no lookup at all, and expected facts too short to trace (a "10" occurs in any result).
 */
/**
 * A fact the dataset expects the agent to tell the user (tau `outputs`, tau2 `communicate_info`) that a tool result
 * gave the agent, and that none of its messages passes on.
 */
function expectedOutputWithheld(trace: Trace, ctx: DetectionContext): Finding[] {
  const said = trace.steps.filter((s) => s.role === "assistant" && s.kind === "message").map((s) => norm(s.text ?? "")).join("\n");
  for (const out of ctx.contract.expectedOutputs) {
    const want = norm(out);
    // a short value ("10") occurs in any result by chance: only distinctive facts are traced
    if (want.length < 4 || said.includes(want)) continue;
    const seen = trace.steps.find((s) => s.kind === "tool_result" && norm(stepContent(s)).includes(want));
    if (!seen) continue;
    return [finding("information-withholding", "2.4", [seen], quote(seen), `the tool result gave the agent "${out}", which the user needed, and no message of the agent passed it on`, 0.65, ["steps", "expected"])];
  }
  return [];
}

const TRANSFER_ANNOUNCEMENT_RE = /\btransferr(?:ed|ing)\b[^.!?]*\b(?:human|agent|representative|specialist)\b/i;

/** Numbers compared without thousands separators or trailing zeros; text compared case-insensitively. */
const norm = (s: string) => s.toLowerCase().replace(/(\d),(\d{3})/g, "$1$2").replace(/(\d+)\.0+\b/g, "$1");

export const informationWithholding: Detector = {
  id: "information-withholding",
  mode: "2.4",
  description: "Findings passed to a human agent in a transfer summary but never told to the user; an expected fact a tool gave the agent that it never passed on.",
  detect(trace: Trace, ctx: DetectionContext) {
    const withheld = expectedOutputWithheld(trace, ctx);
    if (withheld.length) return withheld;
    const transfer = trace.steps.find((s) => s.kind === "tool_call" && s.role === "assistant" && TRANSFER_RE.test(s.tool?.name ?? ""));
    if (!transfer) return [];
    // a transfer the task calls for hands the case over as it should: the human agent is who needs the findings
    if (ctx.contract.expectedActions.some((a) => TRANSFER_RE.test(a.name))) return [];
    const summary = JSON.stringify(transfer.tool?.args ?? "");
    if (summary.split(/\s+/).length < 12) return [];
    const lookups = trace.steps.filter((s) => s.index < transfer.index && s.kind === "tool_call" && s.role === "assistant" && !TRANSFER_RE.test(s.tool?.name ?? ""));
    const lastLookup = lookups[lookups.length - 1];
    if (!lastLookup) return [];
    // "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT" announces the hand-off; it tells the user nothing they found
    const informative = (text: string) => text.trim().length > 40 && !(TRANSFER_ANNOUNCEMENT_RE.test(text) && text.trim().length < 120);
    const told = trace.steps.some((s) => s.index > lastLookup.index && s.index < transfer.index && s.role === "assistant" && s.kind === "message" && informative(s.text ?? ""));
    if (told) return [];
    return [finding("information-withholding", "2.4", [transfer], quote(transfer), "the agent put what it found into the transfer summary for a human but never told the user", 0.6)];
  },
};
