import type { Outcome, Trace } from "../trace/index.js";
import { loadDeliverable, loadGroundTruth } from "../formats/index.js";
import { DEFAULT_ITBENCH_RULE, scoreRootCause, verdict, type ItbenchSuccessRule } from "./itbench.js";

export interface OutcomeOptions {
  itbenchRule?: ItbenchSuccessRule;
}

/**
 * Scores a trace's outcome. ITBench runs with a ground truth are scored on root-cause recall (a missing deliverable
 * scores 0); other datasets carry their own verdict (reward, resolved, correct). No outcome is ever invented: when
 * nothing says how the run went, success is null.
 */
export async function scoreOutcome(trace: Trace, opts: OutcomeOptions = {}): Promise<Outcome> {
  const o = trace.outcome ?? {};
  if (o.groundTruth) {
    const gt = await loadGroundTruth(o.groundTruth);
    if (!gt.value) return { success: null, score: null, metric: null, rule: "itbench root-cause recall", details: { error: `ground truth unreadable: ${gt.error}` } };
    if (gt.value.version !== "v1")
      return { success: null, score: null, metric: null, rule: "itbench root-cause recall", details: { error: "ground truth v2 has no groups; root-cause scoring needs a v1 file" } };
    const d = o.deliverable ? await loadDeliverable(o.deliverable) : undefined;
    const s = scoreRootCause(d?.value, gt.value);
    const rule = opts.itbenchRule ?? DEFAULT_ITBENCH_RULE;
    return {
      success: verdict(s.recall, rule),
      score: s.recall,
      metric: "root_cause_recall",
      rule: `itbench root-cause recall: success at >= ${rule.success}, failure at <= ${rule.failure}`,
      details: {
        precision: s.precision, recall: s.recall, f1: s.f1, at_k: s.atK, predictions: s.predictions, dropped: s.dropped,
        ground_truth_root_causes: s.groundTruthRootCauses, found: s.found,
        deliverable: o.deliverable ?? null,
        deliverable_problem: !o.deliverable ? "missing: scored as recall 0" : d?.error ?? null,
        deliverable_repairs: d?.repairs ?? [],
      },
    };
  }
  if (o.success !== undefined) {
    const metric = o.metric ?? (o.reward !== undefined ? "reward" : "success");
    return { success: o.success, score: o.score ?? o.reward ?? (o.success ? 1 : 0), metric, rule: o.reward !== undefined ? "reward == 1" : "dataset verdict" };
  }
  if (o.reward !== undefined) return { success: o.reward === 1, score: o.reward, metric: o.metric ?? "reward", rule: "reward == 1" };
  if (o.score !== undefined) return { success: null, score: o.score, metric: o.metric ?? "score", rule: "score only: no success rule" };
  return { success: null, score: null, metric: null };
}
