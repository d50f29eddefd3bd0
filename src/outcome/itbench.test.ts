import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../testing/corpus.js";
import { loadDeliverable, loadGroundTruth, parseDeliverable, type ItbenchGroundTruth } from "../formats/index.js";
import { scoreRootCause, verdict } from "./itbench.js";
import { scoreOutcome } from "./outcome.js";
import { buildTrace } from "../trace/index.js";

const gt = async (n: number): Promise<ItbenchGroundTruth> => (await loadGroundTruth(corpus("itbench", "ground-truth", `scenario_${n}_groundtruth_v1.yaml`))).value!;
const deliverable = (names: string[]) =>
  parseDeliverable(JSON.stringify({ entities: names.map((name) => ({ name, contributing_factor: true })) })).value!;

describe("ITBench root-cause scoring (hand-checked on the corpus ground truths)", () => {
  it("scenario 2: the run's agent_output.json names flagd-config first and Deployment/flagd second", async () => {
    const d = (await loadDeliverable(corpus("itbench", "run-scenario-2", "agent_output.json"))).value!;
    const s = scoreRootCause(d, await gt(2));
    // by hand: 2 candidates (contributing_factor true); flagd-config matches the only root-cause group; flagd does not
    expect(s.groundTruthRootCauses).toEqual(["flagd-config"]);
    expect(s.predictions.map((p) => [p.entity, p.hits])).toEqual([["otel-demo/ConfigMap/flagd-config", ["flagd-config"]], ["otel-demo/Deployment/flagd", []]]);
    expect([s.precision, s.recall]).toEqual([0.5, 1]);
    expect(s.f1).toBeCloseTo(2 / 3, 10);
    expect(s.atK[0]).toEqual({ k: 1, precision: 1, recall: 1, f1: 1 });
    expect(verdict(s.recall)).toBe(true);
  });

  it("scenario 1: an alias of the root cause counts (frontend-proxy Service for the load-generator Pod)", async () => {
    const s = scoreRootCause(deliverable(["otel-demo/Service/frontend-proxy", "otel-demo/Deployment/flagd"]), await gt(1));
    expect(s.predictions[0]!.hits).toEqual(["load-generator-pod-1"]);
    expect([s.precision, s.recall]).toEqual([0.5, 1]);
  });

  it("drops infrastructure namespaces and malformed names before scoring", async () => {
    const s = scoreRootCause(deliverable(["kube-system/Service/kubernetes", "flagd-config ConfigMap", "otel-demo/ConfigMap/flagd-config"]), await gt(2));
    expect(s.dropped.map((d) => d.why)).toEqual(["infrastructure namespace kube-system", "not a namespace/Kind/name entity"]);
    expect([s.precision, s.recall]).toEqual([1, 1]);
  });

  it("agrees with the official judge's recall on every scored run in evaluation_results.json (workload kind matching)", async () => {
    const results = JSON.parse(readFileSync(corpus("itbench", "evaluations", "evaluation_results.json"), "utf8")).raw_results as {
      incident_id: string; trial_id: string; scores: { root_cause_entity: { predicted_entities: { entity: string }[]; calculation_recall: number } };
    }[];
    expect(results).toHaveLength(6);
    for (const r of results) {
      const rc = r.scores.root_cause_entity;
      const ours = scoreRootCause(deliverable(rc.predicted_entities.map((p) => p.entity)), await gt(Number(r.incident_id)), "workload");
      expect(ours.recall, `incident ${r.incident_id} trial ${r.trial_id}`).toBe(rc.calculation_recall);
    }
    // the strict rule of itbench.md §4.2 differs exactly where the judge matched a Deployment to a Pod group
    const trial3 = results.find((r) => r.incident_id === "1" && r.trial_id === "3")!;
    const strict = scoreRootCause(deliverable(trial3.scores.root_cause_entity.predicted_entities.map((p) => p.entity)), await gt(1), "strict");
    expect(strict.recall).toBe(0);
  });

  it("a missing deliverable scores recall 0 and fails; a partial recall is neither success nor failure", async () => {
    const t = buildTrace({ id: "r", source: { file: "x", format: "codex-rollout", index: 0 }, outcome: { groundTruth: corpus("itbench", "ground-truth", "scenario_2_groundtruth_v1.yaml") } }, []);
    const o = await scoreOutcome(t);
    expect(o).toMatchObject({ success: false, score: 0, metric: "root_cause_recall", details: { deliverable_problem: "missing: scored as recall 0" } });
    expect(verdict(0.5)).toBeNull();
    expect(verdict(0.5, { success: 0.5, failure: 0 })).toBe(true);
  });

  it("dataset outcomes pass through and nothing is invented", async () => {
    const mk = (outcome: object | undefined) => buildTrace({ id: "d", source: { file: "x", format: "y", index: 0 }, ...(outcome ? { outcome } : {}) }, []);
    expect(await scoreOutcome(mk({ reward: 0.0 }))).toMatchObject({ success: false, score: 0, metric: "reward" });
    expect(await scoreOutcome(mk({ success: true, reward: 1 }))).toMatchObject({ success: true, score: 1 });
    expect(await scoreOutcome(mk(undefined))).toEqual({ success: null, score: null, metric: null });
  });
});
