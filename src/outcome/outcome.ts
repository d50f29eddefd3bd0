import { readFile } from "node:fs/promises";
import type { Outcome, OutcomeInput, Trace } from "../trace/index.js";
import { loadGroundTruth, parseDeliverable, parseRemediation } from "../formats/index.js";
import { DEFAULT_ITBENCH_RULE, scoreRemediation, scoreRootCause, verdict, type ItbenchSuccessRule } from "./itbench.js";
import { reconstructDeliverable, type ReconstructedDeliverable } from "./reconstruct.js";

export interface OutcomeOptions {
  itbenchRule?: ItbenchSuccessRule;
}

/**
 * Scores a trace's outcome. ITBench runs with a ground truth are scored on root-cause recall (remediation runs on
 * whether their plan names the root cause); the deliverable is the file beside the run, else the one the run's own
 * write actions rebuild (`deliverable_source: "reconstructed"`), else missing and scored 0. Other datasets carry their
 * own verdict (reward, resolved, correct). No outcome is ever invented: when nothing says how the run went, success
 * is null.
 */
export async function scoreOutcome(trace: Trace, opts: OutcomeOptions = {}): Promise<Outcome> {
  const o = trace.outcome ?? {};
  if (o.groundTruth) return scoreItbench(trace, o as OutcomeInput & { groundTruth: string }, opts);
  if (o.success !== undefined) {
    const metric = o.metric ?? (o.reward !== undefined ? "reward" : "success");
    return { success: o.success, score: o.score ?? o.reward ?? (o.success ? 1 : 0), metric, rule: o.reward !== undefined ? "reward == 1" : "dataset verdict" };
  }
  if (o.reward !== undefined) return { success: o.reward === 1, score: o.reward, metric: o.metric ?? "reward", rule: "reward == 1" };
  if (o.score !== undefined) return { success: null, score: o.score, metric: o.metric ?? "score", rule: "score only: no success rule" };
  return { success: null, score: null, metric: null };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const MISSING = "missing: scored as recall 0";

interface DeliverableText {
  source: "file" | "reconstructed" | "missing";
  text?: string;
  /** Why the text could not be had (an unreadable file, a write whose content could not be rebuilt). */
  error?: string;
  rebuilt?: ReconstructedDeliverable;
}

/** The deliverable's text: the file beside the run, else rebuilt from the run's successful write actions. */
async function deliverableText(trace: Trace, path: string | undefined, name: string): Promise<DeliverableText> {
  if (path) {
    try {
      return { source: "file", text: await readFile(path, "utf8") };
    } catch (e) {
      return { source: "file", error: `cannot read ${path}: ${(e as Error).message}` };
    }
  }
  const rebuilt = reconstructDeliverable(trace.steps, name);
  if (rebuilt.content !== undefined) return { source: "reconstructed", text: rebuilt.content, rebuilt };
  if (rebuilt.problem) return { source: "reconstructed", error: rebuilt.problem, rebuilt };
  return { source: "missing", rebuilt };
}

/** Why a run has no deliverable: it never started, its model never answered, every write failed, or it never wrote one. */
function missingReason(trace: Trace, name: string, rebuilt: ReconstructedDeliverable | undefined): string {
  const model = trace.steps.filter((s) => s.role === "assistant");
  const empty = model.filter((s) => s.tags?.includes("empty")).length;
  const retries = trace.steps.filter((s) => s.tags?.includes("harness-retry")).length;
  const asked = retries ? `; the harness asked for it again ${retries} time${retries === 1 ? "" : "s"}` : "";
  if (model.length === 0) return "the run never started: no model turn is recorded";
  if (empty === model.length) return `the model never answered: ${empty} empty model turn${empty === 1 ? "" : "s"}${asked}`;
  const tries = rebuilt?.writes ?? [];
  if (tries.length) return `every write of ${name} failed (${tries.length} attempt${tries.length === 1 ? "" : "s"}, steps ${[...new Set(tries.map((w) => w.step))].join(", ")})${asked}`;
  return `the model never wrote ${name}${asked}`;
}

async function scoreItbench(trace: Trace, o: OutcomeInput & { groundTruth: string }, opts: OutcomeOptions): Promise<Outcome> {
  const itb = isObj(trace.metadata.itbench) ? trace.metadata.itbench : {};
  const remediation = itb.runKind === "remediation";
  const baseRule = remediation ? "itbench remediation: the plan names the ground-truth root cause (deterministic proxy)" : "itbench root-cause recall";
  const gt = await loadGroundTruth(o.groundTruth);
  if (!gt.value) return { success: null, score: null, metric: null, rule: baseRule, details: { error: `ground truth unreadable: ${gt.error}`, ground_truth: o.groundTruth } };
  if (gt.value.version !== "v1")
    return { success: null, score: null, metric: null, rule: baseRule, details: { error: "ground truth v2 has no groups; root-cause scoring needs a v1 file", ground_truth: o.groundTruth, ground_truth_version: gt.value.version } };

  const name = typeof itb.deliverableName === "string" ? itb.deliverableName : remediation ? "agent_remediation.json" : "agent_output.json";
  const found = await deliverableText(trace, o.deliverable, name);
  const retries = trace.steps.filter((s) => s.tags?.includes("harness-retry")).length;
  const where: Record<string, unknown> = {
    ground_truth: o.groundTruth,
    ground_truth_from: typeof itb.groundTruthFrom === "string" ? itb.groundTruthFrom : null,
    deliverable: o.deliverable ?? null,
    deliverable_name: name,
    deliverable_source: found.source,
    ...(found.source === "reconstructed" ? { deliverable_step: found.rebuilt?.step ?? null, deliverable_via: found.rebuilt?.via ?? null } : {}),
    ...(found.rebuilt?.writes.length ? { deliverable_writes: found.rebuilt.writes } : {}),
    harness_retries: retries,
  };
  if (found.error && found.source === "reconstructed") {
    // the run wrote its deliverable, but what it wrote cannot be known from the trace: no verdict
    return { success: null, score: null, metric: null, rule: baseRule, details: { ...where, deliverable_problem: found.error } };
  }
  const missing = found.source === "missing" ? { deliverable_problem: MISSING, deliverable_missing_reason: missingReason(trace, name, found.rebuilt) } : undefined;
  const rule = opts.itbenchRule ?? DEFAULT_ITBENCH_RULE;
  const thresholds = `success at >= ${rule.success}, failure at <= ${rule.failure}`;
  const notes = found.rebuilt?.notes ?? [];

  if (remediation) {
    const p = found.text !== undefined ? parseRemediation(found.text) : undefined;
    const s = scoreRemediation(p?.value, gt.value);
    return {
      success: verdict(s.coverage, rule),
      score: s.coverage,
      metric: "remediation_root_cause_coverage",
      rule: `${baseRule}: ${thresholds}`,
      details: {
        coverage: s.coverage, ground_truth_root_causes: s.groundTruthRootCauses, found: s.found, mentions: s.mentions,
        actions: p?.value?.plan.length ?? 0,
        ...where,
        deliverable_problem: missing?.deliverable_problem.replace("recall", "coverage") ?? found.error ?? p?.error ?? null,
        ...(missing ? { deliverable_missing_reason: missing.deliverable_missing_reason } : {}),
        deliverable_repairs: [...notes, ...(p?.repairs ?? [])],
      },
    };
  }
  const d = found.text !== undefined ? parseDeliverable(found.text) : undefined;
  const s = scoreRootCause(d?.value, gt.value);
  return {
    success: verdict(s.recall, rule),
    score: s.recall,
    metric: "root_cause_recall",
    rule: `${baseRule}: ${thresholds}`,
    details: {
      precision: s.precision, recall: s.recall, f1: s.f1, at_k: s.atK, predictions: s.predictions, dropped: s.dropped,
      ground_truth_root_causes: s.groundTruthRootCauses, found: s.found,
      ...where,
      deliverable_problem: missing?.deliverable_problem ?? found.error ?? d?.error ?? null,
      ...(missing ? { deliverable_missing_reason: missing.deliverable_missing_reason } : {}),
      deliverable_repairs: [...notes, ...(d?.repairs ?? [])],
    },
  };
}
