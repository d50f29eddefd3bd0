import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import type { Sample } from "../types.js";
import {
  aliasSet,
  canonicalIncidentId,
  describeItbenchFile,
  groundTruthInTree,
  loadDeliverable,
  loadGroundTruth,
  parseDeliverable,
  parseGroundTruth,
  parseJsonDeliverable,
  parseRemediation,
  readInstructions,
  rootCauseCandidates,
  rootCauseGroups,
  runDirOf,
  runFromPath,
  scenarioOfGroundTruth,
  scenarioOfRun,
} from "./itbench-files.js";

const gt = (name: string) => corpus("itbench", "ground-truth", name);

describe("ground truth", () => {
  it("reads the bare v1 file of scenario 2: root cause otel-demo/ConfigMap/flagd-config", async () => {
    const r = await loadGroundTruth(gt("scenario_2_groundtruth_v1.yaml"));
    expect(r.error).toBeUndefined();
    const g = r.value!;
    expect([g.version, g.layout]).toEqual(["v1", "bare"]);
    expect(rootCauseGroups(g)).toEqual([{ id: "flagd-config", kind: "ConfigMap", namespace: "otel-demo", name: "flagd-config", filter: [], rootCause: true }]);
    expect(g.groups.map((x) => x.id)).toEqual(["flagd-config", "cart-service-1", "frontend-service-1", "frontend-proxy-service-1", "checkout-service"]);
    expect(g.groups[1]!.filter).toEqual(["cart\\b"]);
    expect(g.propagations).toHaveLength(3);
    expect(g.propagations[0]).toMatchObject({ source: "flagd-config", target: "cart-service-1" });
    expect(g.faults.map((f) => f.category)).toEqual(["Resource Unavailable", "Resource Unavailable", "Configuration Setting"]);
    expect(g.faults[2]!.entity).toEqual({ kind: "ConfigMap", name: "flagd-config", groupId: undefined });
    expect(g.faults[2]!.changed?.element).toBe("data.demo\\.flagd\\.json");
    expect(g.alerts.map((a) => a.groupId)).toEqual(["cart-service-1", "frontend-service-1", "frontend-proxy-service-1", "checkout-service"]);
    expect(g.recommendedActions.map((a) => a.id)).toEqual(["Disable cartFailure flag", "Restart cart service"]);
    expect(g.aliases).toEqual([]);
  });

  it("reads the wrapped v1 file of scenario 1 with camelCase recommendedActions and aliases", async () => {
    const g = (await loadGroundTruth(gt("scenario_1_groundtruth_v1.yaml"))).value!;
    expect([g.version, g.layout, g.name]).toEqual(["v1", "wrapped", "scenario-1"]);
    const [root] = rootCauseGroups(g);
    expect(root).toMatchObject({ id: "load-generator-pod-1", kind: "Pod", filter: ["load-generator-.*"] });
    expect(aliasSet(g, "load-generator-pod-1").sort()).toEqual(["frontend-proxy-pod-1", "frontend-proxy-service-1", "load-generator-pod-1", "load-generator-service-1"]);
    expect(aliasSet(g, "accounting-service-1")).toEqual(["accounting-service-1"]);
    expect(g.recommendedActions).toEqual([
      { id: "deem_if_traffic_is_legit", actions: ["deem if traffic is legit"] },
      { id: "set_up_autoscaler", actions: ["set up autoscaler"] },
    ]);
    expect(g.faults[0]!.entity).toEqual({ kind: "Pod", name: "load-generator-pod-1", groupId: "load-generator-pod-1" });
  });

  it("reads scenario 15 (bare v1, five alias sets, root cause flagd-config-1)", async () => {
    const g = (await loadGroundTruth(gt("scenario_15_groundtruth_v1.yaml"))).value!;
    expect(rootCauseGroups(g).map((x) => x.id)).toEqual(["flagd-config-1"]);
    expect(g.aliases).toHaveLength(5);
    expect(g.groups.find((x) => x.id === "getads-endpoint-1")).toMatchObject({ kind: "ServiceOperation", filter: ["ad-.*_AdService_GetAds"] });
  });

  it("reads the slim v2 file as object references without groups", async () => {
    const g = (await loadGroundTruth(gt("scenario_2_groundtruth.yaml"))).value!;
    expect([g.version, g.layout, g.name]).toEqual(["v2", "wrapped", "scenario-2"]);
    expect(g.groups).toEqual([]);
    expect(g.entities).toEqual([{ apiVersion: "v1", kind: "ConfigMap", name: "flagd-config", namespace: "otel-demo" }]);
    expect(g.solutions).toHaveLength(1);
  });

  it("refuses a scenario spec and broken YAML with a reason", async () => {
    expect((await loadGroundTruth(gt("scenario_2_scenario.yaml"))).error).toBe("kind Scenario, not GroundTruth");
    expect(parseGroundTruth("groups: [unclosed").error).toMatch(/not valid YAML/);
    expect(parseGroundTruth("alerts: []\n").error).toMatch(/no `groups` list/);
  });
});

describe("deliverables", () => {
  it("reads the Zero agent_output.json of the scenario-2 run in order", async () => {
    const r = await loadDeliverable(corpus("itbench", "run-scenario-2", "agent_output.json"));
    expect(r.repairs).toEqual([]);
    const d = r.value!;
    expect(d.shape).toBe("zero");
    expect(d.entities).toHaveLength(6);
    expect(rootCauseCandidates(d).map((e) => e.name)).toEqual(["otel-demo/ConfigMap/flagd-config", "otel-demo/Deployment/flagd"]);
    expect(d.propagations[0]).toMatchObject({ source: "otel-demo/ConfigMap/flagd-config", target: "otel-demo/Deployment/cart", condition: "cartFailure flag enabled" });
    expect(d.alertsExplained.map((a) => a.alert)).toEqual(["RequestErrorRate", "Watchdog"]);
  });

  it("reads the evaluation copies with hashed ids, names and an incident_summary", async () => {
    const d = (await loadDeliverable(corpus("itbench", "evaluations", "agent_output_incident1_trial1.json"))).value!;
    expect(d.entities[0]).toMatchObject({ id: "9443e43ade4e8512", name: "flagd-config ConfigMap", contributingFactor: true, position: 0 });
    expect(d.propagations[0]).toMatchObject({ source: "9443e43ade4e8512", sourceName: "flagd-config ConfigMap", targetName: "flagd Service" });
    expect(Object.keys(d.incidentSummary ?? {}).sort()).toEqual(["contributing_factors", "end_time", "impact", "root_causes", "severity", "start_time", "title"]);
  });

  it("reads the CrewAI merged output: topology hashes with root_cause", async () => {
    const d = (await loadDeliverable(corpus("itbench", "crewai-lumyn", "agent_output.json"))).value!;
    expect(d.shape).toBe("crewai");
    expect(d.incidentId).toBe("inc-None");
    expect(d.alertStartTime).toBe("2025-03-04T17:13:30.798443");
    expect(rootCauseCandidates(d).map((e) => e.id)).toEqual(["65e01b4db8514c92", "fb457a6ff852d84d"]);
  });

  it("reads the remediation plan", () => {
    const r = parseRemediation(readFileSync(corpus("itbench", "run-scenario-2", "agent_remediation.json"), "utf8"));
    expect(r.value!.plan).toHaveLength(3);
    expect(r.value!.plan[0]).toMatchObject({ action: "Disable cartFailure in flagd-config ConfigMap", priority: "high" });
  });

  it("repairs fenced, string-wrapped and comma-broken deliverables and says so", () => {
    const fenced = parseDeliverable('Here is the diagnosis:\n```json\n{"entities": [{"name": "otel-demo/Service/cart", "contributing_factor": true,},],}\n```\n');
    expect(fenced.value!.entities[0]!.name).toBe("otel-demo/Service/cart");
    expect(fenced.repairs).toEqual(["removed markdown code fences", "removed 3 trailing comma(s)"]);
    const asString = parseJsonDeliverable(JSON.stringify('{"entities": []}'));
    expect(asString.value).toEqual({ entities: [] });
    expect(asString.repairs).toEqual(["the JSON document was a string holding JSON"]);
    const missingCommas = parseJsonDeliverable('{\n "entities": []\n "propagations": []\n}');
    expect(missingCommas.value).toEqual({ entities: [], propagations: [] });
    expect(missingCommas.repairs).toContain("added missing commas between values");
    expect(parseDeliverable("").error).toBe("the file is empty");
    expect(parseDeliverable("the agent gave up").error).toMatch(/not valid JSON/);
    expect(parseDeliverable('{"resource": []}').error).toMatch(/no `entities` list/);
  });
});

describe("run layout", () => {
  it("finds incident and trial the way the official loader canonicalises them", () => {
    expect(["Scenario-2", "scenario_15", "incident-3", "7", "foo"].map(canonicalIncidentId)).toEqual(["2", "15", "3", "7", "foo"]);
    expect(runFromPath("/Users/noahz/Documents/ITBench-SRE-Agent/agent_outputs/2/1")).toEqual({ runDir: "/Users/noahz/Documents/ITBench-SRE-Agent/agent_outputs/2/1", incident: "2", trial: "1" });
    expect(runFromPath("/data/rollouts/x.jsonl")).toBeUndefined();
    expect(runDirOf("/o/agent_outputs/2/1/sessions/2026/01/15/rollout-a.jsonl")).toBe("/o/agent_outputs/2/1");
    expect(runDirOf("/o/agent_outputs/2/1/traces/stdout.log")).toBe("/o/agent_outputs/2/1");
  });

  it("reads the deliverable name and snapshot folder from the real AGENTS.md", () => {
    const r = readInstructions(readFileSync(corpus("itbench", "run-scenario-2", "AGENTS.md"), "utf8"));
    expect(r.deliverableName).toBe("agent_output.json");
    expect(r.runKind).toBe("diagnosis");
    expect(r.snapshotDir).toBe("/Users/noahz/Documents/ITBench-SRE-Agent/ITBench-Lite/snapshots/sre/v0.2-B96DF826-4BB2-4B62-97AB-6D84254C53D7/Scenario-2");
    expect(readInstructions("**Task**: Generate Remediation Plan\n**Write your remediation plan to: agent_remediation.json**")).toMatchObject({ deliverableName: "agent_remediation.json", runKind: "remediation" });
  });
});

describe("scenario ids and ground truth in the input tree", () => {
  it("reads a run's scenario from its run folder and its snapshot folder, and refuses a disagreement", () => {
    const snapshot = "/Users/noahz/Documents/ITBench-SRE-Agent/ITBench-Lite/snapshots/sre/v0.2-B96DF826-4BB2-4B62-97AB-6D84254C53D7/Scenario-2";
    const runDir = "/Users/noahz/Documents/ITBench-SRE-Agent/agent_outputs/2/1";
    expect(scenarioOfRun("2", runDir, snapshot)).toEqual({ id: "2", from: ["run folder agent_outputs/2/1", "snapshot folder Scenario-2"] });
    expect(scenarioOfRun(undefined, undefined, `${snapshot}/`)).toEqual({ id: "2", from: ["snapshot folder Scenario-2"] });
    const conflict = scenarioOfRun("3", "/x/agent_outputs/3/1", snapshot);
    expect(conflict.id).toBeUndefined();
    expect(conflict.conflict).toBe("run folder agent_outputs/3/1 says scenario 3, snapshot folder Scenario-2 says scenario 2");
    expect(scenarioOfRun(undefined, undefined, "/data/snapshots/latest")).toEqual({ id: undefined, from: [] });
  });

  it("names a ground truth's scenario by metadata.name, else its file name, else a scenario folder", () => {
    expect(scenarioOfGroundTruth("/g/scenario_1_groundtruth_v1.yaml", { name: "scenario-1" })).toEqual({ id: "1", from: "metadata.name scenario-1" });
    expect(scenarioOfGroundTruth("/g/scenario_2_groundtruth_v1.yaml", {})).toEqual({ id: "2", from: "file name" });
    expect(scenarioOfGroundTruth("/snapshots/sre/v0.2/Scenario-15/ground_truth.yaml", {})).toEqual({ id: "15", from: "folder Scenario-15" });
    // a bare number is a trial as often as a scenario: not taken
    expect(scenarioOfGroundTruth("/o/agent_outputs/2/1/ground_truth.yaml", {})).toBeUndefined();
  });

  it("finds the scenario's v1 file anywhere under the input (corpus ground-truth folder), preferring it over v2", async () => {
    const root = corpus("itbench");
    const found = await groundTruthInTree([root], "2");
    expect(found).toMatchObject({ path: join(root, "ground-truth", "scenario_2_groundtruth_v1.yaml"), version: "v1" });
    expect(found!.others.map((o) => [o.path, o.version])).toEqual([[join(root, "ground-truth", "scenario_2_groundtruth.yaml"), "v2"]]);
    expect(found!.reason).toBe("found in the input tree for scenario 2 (file name); v1 preferred over scenario_2_groundtruth.yaml (v2)");
    expect((await groundTruthInTree([root], "1"))?.path).toBe(join(root, "ground-truth", "scenario_1_groundtruth_v1.yaml"));
    expect(await groundTruthInTree([root], "7")).toBeUndefined();
    expect(await groundTruthInTree([corpus("itbench", "rollouts")], "2")).toBeUndefined();
  });

  it("is deterministic with several v1 files of one scenario: the first by path, the others named", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-gt-tree-"));
    for (const sub of ["b", "a"]) {
      mkdirSync(join(dir, sub, "Scenario-2"), { recursive: true });
      // copies, not symlinks: the walk reads each real file once, so two links to one file are one file
      copyFileSync(gt("scenario_2_groundtruth_v1.yaml"), join(dir, sub, "Scenario-2", "ground_truth.yaml"));
    }
    const found = await groundTruthInTree([dir], "2");
    expect(found?.path).toBe(join(dir, "a", "Scenario-2", "ground_truth.yaml"));
    expect(found?.reason).toBe(`found in the input tree for scenario 2 (folder Scenario-2); first by path of 2 v1 files (also ${join(dir, "b", "Scenario-2", "ground_truth.yaml")})`);
  });
});

describe("supporting-file recogniser", () => {
  const sample = (name: string, kind: Sample["kind"], content: string, doc?: unknown): Sample => ({
    path: `/x/${name}`,
    name,
    ext: name.slice(name.lastIndexOf(".")),
    kind,
    size: content.length,
    head: content,
    records: doc === undefined ? [] : [doc],
  });
  it("checks keys, not folder or file names", () => {
    expect(describeItbenchFile(sample("agent_output.json", "json", "{}", { entities: [{ name: "a/B/c", contributing_factor: true }] }))).toMatch(/diagnosis deliverable/);
    expect(describeItbenchFile(sample("agent_output.json", "json", "{}", { entities: [{ label: "PERSON" }] }))).toBeUndefined();
    expect(describeItbenchFile(sample("app.json", "json", "{}", { nodes: [1, 2], edges: [] }))).toBeUndefined();
    expect(describeItbenchFile(sample("values.yaml", "text", "replicaCount: 1\ngroups:\n  - a\n"))).toBeUndefined();
    expect(describeItbenchFile(sample("config.toml", "text", '[tool.poetry]\nname = "x"\n'))).toBeUndefined();
    expect(describeItbenchFile(sample("run_time.txt", "text", "about an hour"))).toBeUndefined();
    expect(describeItbenchFile(sample("results.json", "json", "{}", { raw_results: [{ x: 1 }], statistics: {} }))).toBeUndefined();
  });
});
