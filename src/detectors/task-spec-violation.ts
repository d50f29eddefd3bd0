import type { Finding, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { Detector } from "./types.js";
import { commandOf, finding, quote } from "./util.js";

/**
 * FM-1.1 Disobey task specification, for contracts that can be checked without a model.
 * Signals: (a) reading the benchmark's answer key (ITBench `ground_truth.yaml`) — a forbidden resource; (b) an ITBench
 * diagnosis deliverable whose entity names break the required `namespace/Kind/name` form (e.g.
 * `unknown/Cluster/api-server`).
 * Guards against: a directory listing that merely shows the answer-key file (flagged only when it is read), and
 * names in reasoning text rather than in the written deliverable.
 */
const GT_READ_RE = /\b(cat|less|more|head|tail|grep|jq|yq|python[0-9.]*|sed|awk|open)\b[^|;&]*\b(ground_?truth|groundtruth)[\w.-]*\.(ya?ml|json)/i;
const K8S_KINDS = new Set(
  "Pod Service Deployment ReplicaSet StatefulSet DaemonSet Job CronJob ConfigMap Secret Ingress NetworkPolicy PersistentVolumeClaim PersistentVolume Node Namespace ServiceAccount Role RoleBinding ClusterRole ClusterRoleBinding HorizontalPodAutoscaler Endpoints EndpointSlice PodDisruptionBudget ResourceQuota LimitRange StorageClass CustomResourceDefinition VirtualService DestinationRule Gateway".split(" ").map((k) => k.toLowerCase()),
);
const BAD_NAMESPACES = new Set(["unknown", "n/a", "none", "cluster", "*", ""]);

function readsAnswerKey(trace: Trace): Finding[] {
  const hit = trace.steps.find((s) => s.kind === "tool_call" && GT_READ_RE.test(commandOf(s) ?? JSON.stringify(s.tool?.args ?? "")));
  return hit ? [finding("task-spec-violation", "1.1", [hit], quote(hit, /ground_?truth|groundtruth/i), "the agent read the benchmark's ground-truth file, a forbidden resource", 0.85)] : [];
}

function badDeliverableNames(trace: Trace): Finding[] {
  const writes = trace.steps.filter((s) => s.kind === "tool_call" && /agent_output\.json/.test(stepContent(s)));
  for (const w of writes.reverse()) {
    const content = stepContent(w);
    const names = [...content.matchAll(/\\?"name\\?"\s*:\s*\\?"([^"\\]+)\\?"/g)].map((m) => m[1]!);
    const bad = names.find((n) => {
      const parts = n.split("/");
      if (parts.length !== 3) return true;
      return BAD_NAMESPACES.has(parts[0]!.toLowerCase()) || !K8S_KINDS.has(parts[1]!.toLowerCase());
    });
    if (bad) return [finding("task-spec-violation", "1.1", [w], bad, `the deliverable names an entity "${bad}" that breaks the required namespace/Kind/name form`, 0.75)];
  }
  return [];
}

export const taskSpecViolation: Detector = {
  id: "task-spec-violation",
  mode: "1.1",
  description: "Reading the benchmark's answer key; deliverable entity names that break the required form.",
  detect: (trace) => [...readsAnswerKey(trace), ...badDeliverableNames(trace)],
};
