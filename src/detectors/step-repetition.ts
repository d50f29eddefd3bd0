import type { Finding, Step, Trace } from "../trace/index.js";
import { jaccard, normalizeWhitespace, stepContent, wordGrams } from "../trace/index.js";
import type { Detector } from "./types.js";
import { failureSignature } from "../trace/actions.js";
import { canonicalArgs, finding, isFailedResult, isMutating, quote, resultOf, toolCalls } from "./util.js";

/**
 * FM-1.3 Step repetition.
 * Signals: the same tool call (name + normalised arguments) made again with nothing new learned — the same result
 * each time, or the same write/patch re-applied after it already succeeded, or the same failing call retried
 * unchanged; and assistant messages repeated verbatim (or near-verbatim) three or more times.
 * Guards against: polling (a repeated read whose results change is progress), a retry after a failure that then
 * changes something, a re-apply after a revert or another edit in between, edits that differ only in indentation
 * (multi-line arguments keep their whitespace), long code messages that differ by a requested edit, harness
 * messages (not the agent's repetition), short acknowledgements ("OK").
 */
const MAX_CITED = 8;

function repeatedCalls(trace: Trace): Finding[] {
  const groups = new Map<string, Step[]>();
  // the agent's own calls: a simulated user re-running its device check after each fix (tau2 telecom) is re-testing
  for (const c of toolCalls(trace).filter((s) => s.role === "assistant")) {
    const key = `${c.tool!.name}\u0000${canonicalArgs(c.tool!.args ?? c.text ?? "")}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  const out: Finding[] = [];
  for (const calls of groups.values()) {
    if (calls.length < 2) continue;
    const results = calls.map((c) => resultOf(trace, c));
    const outputs = results.map((r) => (r ? normalizeWhitespace(stepContent(r)) : ""));
    const sameResults = outputs.every((o) => o === outputs[0]);
    const name = calls[0]!.tool!.name;
    const cited = calls.slice(0, MAX_CITED);
    const second = calls[1]!;
    if (isMutating(calls[0]!)) {
      // a refused write retried unchanged: the agent learned nothing from the refusal
      if (results.every((r) => r !== undefined && isFailedResult(r)) && sameResults) {
        out.push(finding("step-repetition", "1.3", cited, quote(second), `${name} was retried ${calls.length} times unchanged and refused the same way each time`, 0.8));
        continue;
      }
      // the same write again after an earlier identical write succeeded
      // a repeated write whose results differ changed something different each time (toggles, counters)
      if (!sameResults && results.every((r) => r !== undefined && !isFailedResult(r))) continue;
      const firstOk = results.findIndex((r) => r !== undefined && !isFailedResult(r));
      if (firstOk === -1 || firstOk === calls.length - 1) continue;
      // another change in between (a revert, a different edit) can make re-applying necessary
      const changedBetween = trace.steps.some((s) => s.index > calls[firstOk]!.index && s.index < calls[firstOk + 1]!.index && s.kind === "tool_call" && isMutating(s));
      if (changedBetween) continue;
      out.push(
        finding("step-repetition", "1.3", cited, quote(calls[firstOk + 1]!), `${name} was applied ${calls.length} times with identical arguments although the first application succeeded`, calls.length >= 3 ? 0.9 : 0.8),
      );
      continue;
    }
    if (!sameResults) continue; // polling that sees changing results is progress
    const allFailed = results.every((r) => isFailedResult(r));
    if (calls.length >= 3 || (allFailed && calls.length >= 2 && results.every(Boolean))) {
      out.push(
        finding("step-repetition", "1.3", cited, quote(second), `${name} was called ${calls.length} times with identical arguments and ${allFailed ? "failed the same way each time" : "returned the same result each time"}`, calls.length >= 4 ? 0.85 : 0.75),
      );
      continue;
    }
    // two identical calls back to back with the same output: the second learned nothing
    const between = trace.steps.slice(calls[0]!.index + 1, second.index).filter((s) => s.kind === "tool_call");
    if (between.length === 0 && results.every(Boolean))
      out.push(finding("step-repetition", "1.3", cited, quote(second), `${name} was repeated immediately with identical arguments and an identical result`, 0.6));
  }
  return out;
}

// ASCII word trigrams (the detector's tokenisation since v1); the measure is the shared one (trace/similarity.ts)
const shingles = (s: string) => wordGrams(s.toLowerCase().split(/\W+/).filter(Boolean), 3);
const similar = (a: Set<string>, b: Set<string>, threshold = 0.9) => {
  if (!a.size || !b.size) return false;
  // Jaccard ≤ |small| / |large|: sets of very different sizes cannot reach the threshold (skip the intersection)
  if (Math.min(a.size, b.size) / Math.max(a.size, b.size) < threshold) return false;
  return jaccard(a, b) >= threshold;
};

function repeatedMessages(trace: Trace): Finding[] {
  // (an envelope such as {"type":"function_call","content":""} repeated before every call is format, not a message)
  const msgs = trace.steps.filter(
    (s) => s.role === "assistant" && (s.kind === "message" || s.kind === "handoff" || s.kind === "plan") && (s.text ?? "").trim().length >= 40 && ((s.text ?? "").match(/[A-Za-z]/g)?.length ?? 0) >= 30,
  );
  // shingles are built only when a comparison needs them (a cluster's from its first message's text)
  const clusters: { rep?: Set<string>; text: string; steps: Step[]; agent: string }[] = [];
  for (const m of msgs) {
    const text = normalizeWhitespace(m.text!);
    let sh: Set<string> | undefined;
    // near-duplicates only for prose: a re-sent file that differs by a requested edit is progress
    const code = text.includes("```") || /^\s*(def |class |import |from |<!DOCTYPE|<html|function |const )/m.test(m.text!);
    const near = !code && text.length >= 80;
    // an instruction handed to another agent is repeated in other words more often than a report is
    const hit = clusters.find((c) => c.agent === m.agent && (c.text === text || (near && similar((c.rep ??= shingles(c.text)), (sh ??= shingles(text)), m.kind === "handoff" ? 0.6 : 0.9))));
    if (hit) hit.steps.push(m);
    else clusters.push({ ...(sh ? { rep: sh } : {}), text, steps: [m], agent: m.agent });
  }
  return clusters
    .filter((c) => c.steps.length >= 3)
    .map((c) =>
      finding("step-repetition", "1.3", c.steps.slice(0, MAX_CITED), quote(c.steps[1]!), `${c.agent} sent the same message ${c.steps.length} times`, c.steps.length >= 4 ? 0.85 : 0.75),
    );
}

const LOOP_FLAG_RE = /"is_in_loop"\s*:\s*\{[^{}]*?"answer"\s*:\s*true/;

/** The orchestrator's own progress ledger says the team is in a loop (Magentic-One `is_in_loop: true`). */
function loopFlagged(trace: Trace): Finding[] {
  const flagged = trace.steps.filter((s) => s.role === "assistant" && LOOP_FLAG_RE.test(s.text ?? ""));
  // one flag can be a false alarm the team moves past; a ledger that keeps saying so is a loop
  if (flagged.length < 2) return [];
  return [finding("step-repetition", "1.3", flagged.slice(0, MAX_CITED), quote(flagged[0]!, /"is_in_loop"/), `the orchestrator's ledger reported a loop ${flagged.length} time(s)`, flagged.length >= 2 ? 0.85 : 0.7)];
}

/** The same failure, over and over: three or more tool results failing the same way (whatever the arguments). */
function sameFailure(trace: Trace): Finding[] {
  const bySig = new Map<string, Step[]>();
  // failures of calls made together in one turn are one attempt (a parallel batch, a sibling's error cascading): a
  // turn is what the agent does between two observations, so a new turn starts at an agent step after a result
  let turn = -1;
  let observed = true;
  const seenInTurn = new Set<string>();
  for (const r of trace.steps) {
    if (r.role === "assistant" && observed) {
      turn = r.index;
      seenInTurn.clear();
      observed = false;
    }
    if (r.role !== "assistant") observed = true;
    // a call cancelled because a sibling failed did not fail on its own
    if (r.kind !== "tool_result" || /Sibling tool call errored|cancelled because (?:a|another)|not executed because/i.test(r.tool?.output ?? r.text ?? "")) continue;
    const call = r.tool?.callIndex !== undefined ? trace.steps[r.tool.callIndex] : undefined;
    if (call && call.role !== "assistant") continue;
    const sig = failureSignature({ output: r.tool?.output ?? r.text, exitCode: r.tool?.exitCode, isError: r.tool?.isError });
    if (!sig || seenInTurn.has(`${turn}\u0000${sig}`)) continue;
    seenInTurn.add(`${turn}\u0000${sig}`);
    bySig.set(sig, [...(bySig.get(sig) ?? []), r]);
  }
  const worst = [...bySig.values()].sort((a, b) => b.length - a.length)[0];
  if (!worst || worst.length < 3) return [];
  return [finding("step-repetition", "1.3", worst.slice(0, MAX_CITED), quote(worst[1]!), `the agent hit the same failure ${worst.length} times without changing its approach`, worst.length >= 4 ? 0.8 : 0.7)];
}

export const stepRepetition: Detector = {
  id: "step-repetition",
  mode: "1.3",
  description: "Identical tool calls that learn nothing new, re-applied writes, messages or instructions repeated three or more times, the same failure hit again and again, and a ledger that reports a loop.",
  detect: (trace) => [...repeatedCalls(trace), ...repeatedMessages(trace), ...loopFlagged(trace), ...sameFailure(trace)],
};
