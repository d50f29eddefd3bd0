import { arr, bool, isObj, num, str } from "./values.js";

/**
 * SWE-bench evaluation results in the shapes agent frameworks ship beside their trajectories. Used by the
 * mini-SWE-agent and OpenHands adapters (and anything else evaluated with the SWE-bench harness).
 */

export type SwebenchStatus = "resolved" | "unresolved" | "empty_patch" | "error";

export interface SwebenchVerdict {
  resolved: boolean;
  status: SwebenchStatus;
  /** Test counts and patch flags when the report has them. */
  details?: Record<string, unknown>;
}

/** The harness's per-instance report: `{patch_is_None, patch_exists, patch_successfully_applied, resolved, tests_status}`. */
export function isInstanceReport(v: unknown): v is Record<string, unknown> {
  return isObj(v) && typeof v.resolved === "boolean" && ("tests_status" in v || "patch_successfully_applied" in v || "patch_is_None" in v);
}

/** The run-level report of `run_evaluation` (`resolved_ids`, `unresolved_ids`, …). */
const isRunReport = (v: unknown): v is Record<string, unknown> =>
  isObj(v) && Array.isArray(v.resolved_ids) && (Array.isArray(v.unresolved_ids) || Array.isArray(v.completed_ids));

/** A SWE-bench `report.json`: per instance, keyed by instance id, or run-level. */
export function isSwebenchReport(v: unknown): boolean {
  if (isInstanceReport(v) || isRunReport(v)) return true;
  if (!isObj(v)) return false;
  const values = Object.values(v);
  return values.length > 0 && values.slice(0, 5).every(isInstanceReport);
}

function testCounts(status: unknown): Record<string, { success: number; failure: number }> | undefined {
  if (!isObj(status)) return undefined;
  const out: Record<string, { success: number; failure: number }> = {};
  for (const [k, v] of Object.entries(status)) if (isObj(v)) out[k] = { success: arr(v.success).length, failure: arr(v.failure).length };
  return out;
}

/** The verdict for one instance from a parsed `report.json`, or undefined when the report does not cover it. */
export function verdictFromReport(doc: unknown, instanceId: string): SwebenchVerdict | undefined {
  const one = isInstanceReport(doc) ? doc : isObj(doc) && isInstanceReport(doc[instanceId]) ? (doc[instanceId] as Record<string, unknown>) : undefined;
  if (one) {
    const resolved = one.resolved === true;
    const empty = one.patch_is_None === true || one.patch_exists === false;
    return {
      resolved,
      status: resolved ? "resolved" : empty ? "empty_patch" : "unresolved",
      details: {
        patchExists: bool(one.patch_exists),
        patchApplied: bool(one.patch_successfully_applied),
        tests: testCounts(one.tests_status),
      },
    };
  }
  if (isRunReport(doc)) {
    const has = (k: string) => arr(doc[k]).includes(instanceId);
    if (has("resolved_ids")) return { resolved: true, status: "resolved" };
    if (has("empty_patch_ids")) return { resolved: false, status: "empty_patch" };
    if (has("error_ids")) return { resolved: false, status: "error" };
    if (has("unresolved_ids")) return { resolved: false, status: "unresolved" };
  }
  return undefined;
}

/** `results_summary.json`: `{total, passed, failed, pass_rate, instances:[{instance_id, resolved, patch_applied}]}`. */
export function isResultsSummary(v: unknown): v is Record<string, unknown> {
  if (!isObj(v) || !Array.isArray(v.instances) || num(v.total) === undefined) return false;
  const first = v.instances[0];
  return isObj(first) && typeof first.instance_id === "string" && typeof first.resolved === "boolean";
}

export function verdictFromResultsSummary(doc: unknown, instanceId: string): SwebenchVerdict | undefined {
  if (!isResultsSummary(doc)) return undefined;
  const row = arr(doc.instances).find((r) => isObj(r) && r.instance_id === instanceId);
  if (!isObj(row) || typeof row.resolved !== "boolean") return undefined;
  return { resolved: row.resolved, status: row.resolved ? "resolved" : "unresolved", details: { patchApplied: bool(row.patch_applied) } };
}

/** OpenHands' `output.swebench_eval.md`: `# SWE-bench Report`, then `## Resolved Instances` etc. with `- [id](log)` items. */
export function isEvalMarkdown(text: string): boolean {
  return /^# SWE-bench Report\s*$/m.test(text) && /^## (Resolved|Unresolved|Empty Patch|Error) Instances\s*$/m.test(text);
}

const SECTION_STATUS: Record<string, SwebenchStatus> = {
  resolved: "resolved",
  unresolved: "unresolved",
  "empty patch": "empty_patch",
  error: "error",
};

/** Instance id → status, from the markdown report. */
export function parseEvalMarkdown(text: string): Map<string, SwebenchStatus> {
  const out = new Map<string, SwebenchStatus>();
  let status: SwebenchStatus | undefined;
  for (const line of text.split("\n")) {
    const heading = line.match(/^##\s+(.+?)\s+Instances\s*$/i);
    if (heading) {
      status = SECTION_STATUS[heading[1]!.toLowerCase()];
      continue;
    }
    if (line.startsWith("#")) {
      status = undefined;
      continue;
    }
    const item = line.match(/^\s*[-*]\s+(?:\[([^\]]+)\]\([^)]*\)|(\S+))\s*$/);
    if (status && item) out.set((item[1] ?? item[2])!, status);
  }
  return out;
}

export function verdictFromEvalMarkdown(statuses: Map<string, SwebenchStatus>, instanceId: string): SwebenchVerdict | undefined {
  const status = statuses.get(instanceId);
  return status ? { resolved: status === "resolved", status } : undefined;
}

/** An OpenHands per-instance evaluation log (`output.swebench_eval.logs/instance_<id>.log`). */
export function isEvalInstanceLog(text: string): boolean {
  return /- INFO - Starting evaluation for instance \S+/.test(text) || /^Result for \S+: resolved: (True|False)\s*$/m.test(text);
}

export function verdictFromEvalLog(text: string, instanceId: string): SwebenchVerdict | undefined {
  const m = text.match(/^Result for (\S+): resolved: (True|False)\s*$/m);
  if (!m || m[1] !== instanceId) return undefined;
  const resolved = m[2] === "True";
  return { resolved, status: resolved ? "resolved" : "unresolved" };
}

/** `git diff` text of a submission; empty or missing means the agent produced nothing. */
export const hasPatch = (v: unknown): boolean => (str(v) ?? "").trim() !== "";
