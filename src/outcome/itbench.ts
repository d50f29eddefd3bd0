import type { DeliverableEntity, GroundTruthGroup, ItbenchDeliverable, ItbenchGroundTruth } from "../formats/index.js";
import { aliasSet, rootCauseGroups } from "../formats/index.js";

/**
 * Deterministic ITBench root-cause entity scoring (itbench.md §4.2): the agent's `contributing_factor` entities, in
 * order, against the ground truth's root-cause groups expanded to their alias sets.
 */

/** Namespaces of infrastructure and observability components: predictions there are dropped before scoring. */
export const IGNORED_NAMESPACES = new Set([
  "kube-system", "data-recorders", "clickhouse", "clickhouse-operator", "prometheus",
  "opentelemetry-operator", "opentelemetry-collectors", "metrics-server", "opensearch",
]);

export interface EntityMatch {
  entity: string;
  /** Ground-truth root-cause group ids this prediction counts for (via aliases). */
  hits: string[];
}

export interface RootCauseScore {
  precision: number;
  recall: number;
  f1: number;
  /** Scores on the first k predictions, k = 1…5. */
  atK: { k: number; precision: number; recall: number; f1: number }[];
  predictions: EntityMatch[];
  /** Predictions dropped before scoring (infrastructure namespaces, malformed names). */
  dropped: { entity: string; why: string }[];
  groundTruthRootCauses: string[];
  /** Root-cause group ids found at least once. */
  found: string[];
}

export function parseEntityName(name: string): { namespace: string; kind: string; name: string } | undefined {
  const parts = name.trim().split("/");
  if (parts.length !== 3 || parts.some((p) => !p)) return undefined;
  return { namespace: parts[0]!, kind: parts[1]!, name: parts[2]! };
}

function safeRegex(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern);
  } catch {
    return undefined;
  }
}

/**
 * How kinds must agree. `strict` (the deterministic rule of itbench.md §4.2): equal, case-insensitively. `workload`:
 * a Deployment, ReplicaSet, StatefulSet, DaemonSet or Pod of the same name counts as the same workload — what the
 * official LLM judge accepts in practice (it matched `otel-demo/Deployment/load-generator` to a Pod group).
 */
export type KindMatching = "strict" | "workload";
const WORKLOAD_KINDS = new Set(["deployment", "replicaset", "statefulset", "daemonset", "pod"]);

function kindsAgree(predicted: string, group: string, mode: KindMatching): boolean {
  const a = predicted.toLowerCase();
  const b = group.toLowerCase();
  return a === b || (mode === "workload" && WORKLOAD_KINDS.has(a) && WORKLOAD_KINDS.has(b));
}

/** A prediction matches a group when the kind agrees, the namespace agrees where given, and the name matches. */
export function matchesGroup(e: { namespace: string; kind: string; name: string }, g: GroundTruthGroup, kinds: KindMatching = "strict"): boolean {
  if (!g.kind || !kindsAgree(e.kind, g.kind, kinds)) return false;
  if (g.namespace && g.namespace !== e.namespace) return false;
  if (g.name !== undefined && g.name === e.name) return true;
  // a controller's pods are named `<controller>-<hash>…`: under workload matching, a Deployment "x" meets a Pod filter "x-.*"
  const names = kinds === "workload" && e.kind.toLowerCase() !== "pod" && g.kind.toLowerCase() === "pod" ? [e.name, `${e.name}-`] : [e.name];
  return g.filter.some((f) => names.some((n) => safeRegex(f)?.test(n) ?? false));
}

function f1(p: number, r: number): number {
  return p > 0 && r > 0 ? (2 * p * r) / (p + r) : 0;
}

export function scoreRootCause(deliverable: ItbenchDeliverable | undefined, gt: ItbenchGroundTruth, kinds: KindMatching = "strict"): RootCauseScore {
  const roots = rootCauseGroups(gt);
  const rootIds = roots.map((g) => g.id);
  // each group id → the root causes it counts for
  const countsFor = new Map<string, Set<string>>();
  for (const r of roots) for (const id of aliasSet(gt, r.id)) countsFor.set(id, (countsFor.get(id) ?? new Set()).add(r.id));
  const groupsById = new Map(gt.groups.map((g) => [g.id, g]));

  const dropped: RootCauseScore["dropped"] = [];
  const predictions: EntityMatch[] = [];
  const candidates: DeliverableEntity[] = (deliverable?.entities ?? []).filter((e) => e.contributingFactor === true);
  for (const c of candidates) {
    const label = c.name ?? c.id ?? "";
    const parsed = c.name ? parseEntityName(c.name) : undefined;
    if (!parsed) {
      dropped.push({ entity: label, why: "not a namespace/Kind/name entity" });
      continue;
    }
    if (IGNORED_NAMESPACES.has(parsed.namespace)) {
      dropped.push({ entity: label, why: `infrastructure namespace ${parsed.namespace}` });
      continue;
    }
    const hits = new Set<string>();
    for (const [groupId, roots] of countsFor) {
      const g = groupsById.get(groupId);
      if (g && matchesGroup(parsed, g, kinds)) for (const r of roots) hits.add(r);
    }
    predictions.push({ entity: label, hits: [...hits].sort() });
  }

  const score = (preds: EntityMatch[]) => {
    const precision = preds.length ? preds.filter((p) => p.hits.length > 0).length / preds.length : 0;
    const found = new Set(preds.flatMap((p) => p.hits));
    const recall = rootIds.length ? found.size / rootIds.length : 0;
    return { precision, recall, f1: f1(precision, recall), found };
  };
  const all = score(predictions);
  return {
    precision: all.precision,
    recall: all.recall,
    f1: all.f1,
    atK: [1, 2, 3, 4, 5].map((k) => {
      const s = score(predictions.slice(0, k));
      return { k, precision: s.precision, recall: s.recall, f1: s.f1 };
    }),
    predictions,
    dropped,
    groundTruthRootCauses: rootIds,
    found: [...all.found].sort(),
  };
}

/** The success rule: configurable thresholds on root-cause recall. */
export interface ItbenchSuccessRule {
  /** Recall at or above which the run is a success (default 1: every root-cause group found). */
  success: number;
  /** Recall at or below which the run is a failure (default 0: none found). Between the two: partial (unknown). */
  failure: number;
}
export const DEFAULT_ITBENCH_RULE: ItbenchSuccessRule = { success: 1, failure: 0 };

export function verdict(recall: number, rule: ItbenchSuccessRule = DEFAULT_ITBENCH_RULE): boolean | null {
  if (recall >= rule.success) return true;
  if (recall <= rule.failure) return false;
  return null;
}

/**
 * A remediation plan (`agent_remediation.json`) against the ground truth: which root-cause groups the plan names.
 * There is no official deterministic remediation metric (the judge is an LLM), so this is a proxy: a plan addresses
 * a root cause when its text names the root-cause group itself — a `namespace/Kind/name` entity that matches the
 * group, or a resource name equal to the group's `name`, matched by one of its `filter` regexes, or equal to a
 * filter's plain stem (`load-generator-.*` → `load-generator`). Aliases are not expanded: acting on an impacted
 * service is not remediating the cause.
 */
export interface RemediationScore {
  /** Share of the ground truth's root-cause groups the plan names (0 without a plan). */
  coverage: number;
  groundTruthRootCauses: string[];
  found: string[];
  /** The plan's words that named each root cause found. */
  mentions: { group: string; text: string }[];
}

function stringLeaves(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringLeaves(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) stringLeaves(x, out);
  return out;
}

function filterStem(f: string): string | undefined {
  const stem = f.replace(/^\^/, "").replace(/\\b/g, "").replace(/\$$/, "").replace(/[-_.]?\.\*$/, "");
  return /^[a-z0-9][a-z0-9.-]*$/i.test(stem) ? stem.toLowerCase() : undefined;
}

function namesGroup(word: string, g: GroundTruthGroup): boolean {
  const parts = word.split("/");
  if (parts.length === 3) {
    const e = parseEntityName(word);
    return e !== undefined && matchesGroup(e, g);
  }
  const name = parts[parts.length - 1]!.toLowerCase();
  if (!name) return false;
  if (g.name !== undefined && g.name.toLowerCase() === name) return true;
  return g.filter.some((f) => (safeRegex(f)?.test(name) ?? false) || filterStem(f) === name);
}

export function scoreRemediation(plan: { raw: Record<string, unknown> } | undefined, gt: ItbenchGroundTruth): RemediationScore {
  const roots = rootCauseGroups(gt);
  const text = stringLeaves(plan?.raw ?? {}).join("\n");
  const words = [...new Set((text.match(/[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)*/g) ?? []).map((w) => w.replace(/[._-]+$/, "")))];
  const mentions: RemediationScore["mentions"] = [];
  for (const g of roots) {
    const w = words.find((x) => namesGroup(x, g));
    if (w) mentions.push({ group: g.id, text: w });
  }
  return {
    coverage: roots.length ? mentions.length / roots.length : 0,
    groundTruthRootCauses: roots.map((g) => g.id),
    found: mentions.map((m) => m.group),
    mentions,
  };
}
