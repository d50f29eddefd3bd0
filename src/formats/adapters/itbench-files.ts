/**
 * ITBench run files: typed loaders for the diagnosis deliverable (`agent_output.json`), the remediation plan
 * (`agent_remediation.json`) and the SRE ground-truth YAML (v1 wrapped / v1 bare / v2), recognisers for every
 * supporting file of an ITBench run, and the lookup of a run's sidecars from one of its trace files.
 *
 * The `parse*` functions are pure (text in, typed value out); `load*` only add the file read. Every leniency the
 * loaders apply is listed in `repairs`, so a scorer can say "this deliverable needed repair".
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { arr, bool, findUp, isObj, str } from "../common/index.js";
import { parseJsonLenient } from "../io/lenient.js";
import { repairJson } from "../../trace/index.js";
import type { ReadContext, Sample } from "../types.js";
import { walkFiles } from "../walk.js";

export interface LoadResult<T> {
  value?: T;
  /** Leniencies applied to read the file (empty when it was clean). */
  repairs: string[];
  /** Why nothing could be read; `value` is then undefined. */
  error?: string;
}

/**
 * Parses JSON the way LLM-written deliverables need (src/trace/json.ts: fences, a document stored as a string, text
 * around the object, trailing and missing commas), with the trace reader's own leniency (bare NaN, overflowing
 * numbers, deep values) on each attempt. Each fix is named in `repairs`.
 */
export function parseJsonDeliverable(text: string): LoadResult<unknown> {
  if (text.replace(/^\uFEFF/, "").trim() === "") return { repairs: [], error: "the file is empty" };
  const r = repairJson(text, parseJsonLenient);
  return r.ok ? { value: r.value, repairs: r.repairs } : { repairs: r.repairs, error: r.error };
}

// ---------------------------------------------------------------------------------------------------------------
// Diagnosis deliverable (agent_output.json)
// ---------------------------------------------------------------------------------------------------------------

export interface DeliverableEntity {
  /** `namespace/Kind/name` for Zero; free text or absent in older variants. */
  name?: string;
  /** Topology-node hash (CrewAI, evaluation samples). */
  id?: string;
  /** The agent's root-cause candidates (`contributing_factor`, CrewAI `root_cause`). */
  contributingFactor?: boolean;
  reasoning?: string;
  evidence?: string;
  /** Position in the file: @k metrics take the first k candidates. */
  position: number;
}

export interface DeliverablePropagation {
  source?: string;
  target?: string;
  /** Name variants (`source_name` / `target_name`) some agents add next to ids. */
  sourceName?: string;
  targetName?: string;
  condition?: string;
  effect?: string;
}

export interface AlertExplained {
  alert?: string;
  explanation?: string;
  explained?: boolean;
}

export interface ItbenchDeliverable {
  /** `zero`: Codex-era entities with names; `crewai`: paper-era `{id: "inc-…", entities[]{id, root_cause}}`. */
  shape: "zero" | "crewai";
  entities: DeliverableEntity[];
  propagations: DeliverablePropagation[];
  alertsExplained: AlertExplained[];
  incidentSummary?: Record<string, unknown>;
  /** CrewAI merged output only. */
  incidentId?: string;
  alertStartTime?: string;
  diagEndTime?: string;
  remediation?: unknown;
  raw: Record<string, unknown>;
}

/** True when a parsed JSON value has the deliverable's shape (used by the recogniser too). */
export function isDeliverableShape(v: unknown): boolean {
  if (!isObj(v) || !Array.isArray(v.entities)) return false;
  const first = v.entities.find(isObj);
  if (!first) return Array.isArray(v.propagations) || Array.isArray(v.alerts_explained);
  return "contributing_factor" in first || "root_cause" in first || ("name" in first && ("reasoning" in first || "evidence" in first));
}

export function parseDeliverable(text: string): LoadResult<ItbenchDeliverable> {
  const json = parseJsonDeliverable(text);
  if (json.value === undefined) return { repairs: json.repairs, error: json.error };
  let v = json.value;
  // some agents wrap the deliverable: {"diagnosis": {...}} or [{...}]
  if (Array.isArray(v) && v.length === 1 && isDeliverableShape(v[0])) {
    json.repairs.push("unwrapped a one-element array");
    v = v[0];
  }
  if (isObj(v) && !isDeliverableShape(v)) {
    const inner = Object.values(v).find(isDeliverableShape);
    if (inner) {
      json.repairs.push("unwrapped the deliverable from an enclosing object");
      v = inner;
    }
  }
  if (!isObj(v)) return { repairs: json.repairs, error: "not a JSON object" };
  if (!Array.isArray(v.entities)) return { repairs: json.repairs, error: "no `entities` list: not an ITBench diagnosis" };
  const crewai = (typeof v.id === "string" && /^inc-/.test(v.id)) || v.entities.some((e) => isObj(e) && "root_cause" in e && !("contributing_factor" in e));
  const entities: DeliverableEntity[] = v.entities.map((e, position) => {
    const o = isObj(e) ? e : {};
    const name = str(o.name) ?? str(o.entity);
    return {
      name,
      id: str(o.id),
      contributingFactor: bool(o.contributing_factor) ?? bool(o.root_cause),
      reasoning: str(o.reasoning),
      evidence: str(o.evidence),
      position,
    };
  });
  const propagations = arr(v.propagations).filter(isObj).map((p) => ({
    source: str(p.source),
    target: str(p.target),
    sourceName: str(p.source_name),
    targetName: str(p.target_name),
    condition: str(p.condition),
    effect: str(p.effect),
  }));
  const alertsExplained = arr(v.alerts_explained).filter(isObj).map((a) => ({
    alert: str(a.alert),
    explanation: str(a.explanation),
    explained: bool(a.explained),
  }));
  return {
    repairs: json.repairs,
    value: {
      shape: crewai ? "crewai" : "zero",
      entities,
      propagations,
      alertsExplained,
      incidentSummary: isObj(v.incident_summary) ? v.incident_summary : undefined,
      incidentId: crewai ? str(v.id) : undefined,
      alertStartTime: str(v.alert_start_time),
      diagEndTime: str(v.diag_end_time),
      remediation: v.remediation,
      raw: v,
    },
  };
}

export async function loadDeliverable(path: string): Promise<LoadResult<ItbenchDeliverable>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return { repairs: [], error: `cannot read ${path}: ${(e as Error).message}` };
  }
  return parseDeliverable(text);
}

/** The agent's root-cause candidates in their original order. */
export const rootCauseCandidates = (d: ItbenchDeliverable): DeliverableEntity[] => d.entities.filter((e) => e.contributingFactor === true);

// ---------------------------------------------------------------------------------------------------------------
// Remediation plan (agent_remediation.json)
// ---------------------------------------------------------------------------------------------------------------

export interface RemediationStep {
  action?: string;
  priority?: string | number;
  rationale?: string;
  steps: string[];
  verification?: string;
}

export interface ItbenchRemediation {
  plan: RemediationStep[];
  estimatedTime?: string;
  riskAssessment?: string;
  raw: Record<string, unknown>;
}

export function parseRemediation(text: string): LoadResult<ItbenchRemediation> {
  const json = parseJsonDeliverable(text);
  if (json.value === undefined) return { repairs: json.repairs, error: json.error };
  const v = json.value;
  if (!isObj(v) || !Array.isArray(v.remediation_plan)) return { repairs: json.repairs, error: "no `remediation_plan` list" };
  const plan = v.remediation_plan.filter(isObj).map((s) => ({
    action: str(s.action),
    priority: typeof s.priority === "number" ? s.priority : str(s.priority),
    rationale: str(s.rationale),
    steps: arr(s.steps).map((x) => str(x) ?? JSON.stringify(x)),
    verification: str(s.verification),
  }));
  return { repairs: json.repairs, value: { plan, estimatedTime: str(v.estimated_time), riskAssessment: str(v.risk_assessment), raw: v } };
}

// ---------------------------------------------------------------------------------------------------------------
// Ground truth (SRE)
// ---------------------------------------------------------------------------------------------------------------

export interface GroundTruthGroup {
  id: string;
  kind?: string;
  namespace?: string;
  /** Exact resource name, when the group gives one instead of filters. */
  name?: string;
  /** Regexes matched (search semantics) against resource names. */
  filter: string[];
  rootCause: boolean;
}

export interface GroundTruthPropagation {
  source?: string;
  target?: string;
  condition?: string;
  effect?: string;
}

export interface GroundTruthFault {
  category?: string;
  condition?: string;
  entity?: { kind?: string; name?: string; groupId?: string };
  faultMechanism?: string;
  changed?: { element?: string; from?: string; to?: string };
}

export interface GroundTruthAlert {
  groupId?: string;
  id?: string;
  description?: string;
}

export interface GroundTruthAction {
  id?: string;
  actions: string[];
}

/** A Kubernetes object reference of the slim v2 file. */
export interface GroundTruthObjectRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
}

export interface ItbenchGroundTruth {
  version: "v1" | "v2";
  /** `wrapped`: apiVersion/kind/metadata/spec; `bare`: the keys at top level. */
  layout: "wrapped" | "bare";
  name?: string;
  groups: GroundTruthGroup[];
  /** Sets of interchangeable group ids. */
  aliases: string[][];
  propagations: GroundTruthPropagation[];
  faults: GroundTruthFault[];
  alerts: GroundTruthAlert[];
  recommendedActions: GroundTruthAction[];
  /** v2 only: the faulty objects. No groups or aliases, so v2 cannot drive the entity metrics. */
  entities: GroundTruthObjectRef[];
  /** v2 only: `solutions` as written. */
  solutions: unknown[];
}

const objectRef = (o: unknown): GroundTruthObjectRef => {
  const r = isObj(o) ? o : {};
  const md = isObj(r.metadata) ? r.metadata : {};
  return { apiVersion: str(r.apiVersion), kind: str(r.kind), name: str(md.name) ?? str(r.name), namespace: str(md.namespace) ?? str(r.namespace) };
};

export function parseGroundTruth(text: string): LoadResult<ItbenchGroundTruth> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return { repairs: [], error: `not valid YAML: ${(e as Error).message}` };
  }
  if (!isObj(doc)) return { repairs: [], error: "not a YAML mapping" };
  const apiVersion = str(doc.apiVersion);
  const kind = str(doc.kind);
  if (kind && kind !== "GroundTruth") return { repairs: [], error: `kind ${kind}, not GroundTruth` };
  const wrapped = isObj(doc.spec) && (apiVersion !== undefined || kind !== undefined);
  const body = wrapped ? (doc.spec as Record<string, unknown>) : doc;
  const md = isObj(doc.metadata) ? doc.metadata : {};
  const version: "v1" | "v2" = /\/v2$/.test(apiVersion ?? "") || (!("groups" in body) && "entities" in body) ? "v2" : "v1";
  if (version === "v1" && !Array.isArray(body.groups)) return { repairs: [], error: "no `groups` list: not an ITBench v1 ground truth" };

  const groups = arr(body.groups)
    .filter(isObj)
    .map((g) => ({
      id: str(g.id) ?? "",
      kind: str(g.kind),
      namespace: str(g.namespace),
      name: str(g.name),
      filter: arr(g.filter).map((f) => str(f)).filter((f): f is string => f !== undefined),
      rootCause: bool(g.root_cause) ?? bool(g.rootCause) ?? false,
    }));
  const faults = arr(body.fault ?? body.faults)
    .filter(isObj)
    .map((f) => {
      const e = isObj(f.entity) ? f.entity : undefined;
      const c = isObj(f.changed) ? f.changed : undefined;
      return {
        category: str(f.category),
        condition: str(f.condition),
        entity: e ? { kind: str(e.kind), name: str(e.name), groupId: str(e.group_id) ?? str(e.groupId) } : undefined,
        faultMechanism: str(f.fault_mechanism) ?? str(f.faultMechanism),
        changed: c ? { element: str(c.element), from: str(c.from), to: str(c.to) } : undefined,
      };
    });
  const actions = arr(body.recommended_actions ?? body.recommendedActions)
    .filter(isObj)
    .map((a) => {
      const s = isObj(a.solution) ? a.solution : a;
      return { id: str(s.id), actions: arr(s.actions).map((x) => str(x) ?? JSON.stringify(x)) };
    });
  return {
    repairs: [],
    value: {
      version,
      layout: wrapped ? "wrapped" : "bare",
      name: str(md.name),
      groups,
      aliases: arr(body.aliases).map((set) => arr(set).map((x) => str(x)).filter((x): x is string => x !== undefined)),
      propagations: arr(body.propagations)
        .filter(isObj)
        .map((p) => ({ source: str(p.source), target: str(p.target), condition: str(p.condition), effect: str(p.effect) })),
      faults,
      alerts: arr(body.alerts)
        .filter(isObj)
        .map((a) => ({ groupId: str(a.group_id) ?? str(a.groupId), id: str(a.id), description: isObj(a.metadata) ? str(a.metadata.description) : undefined })),
      recommendedActions: actions,
      entities: arr(body.entities).map(objectRef),
      solutions: arr(body.solutions),
    },
  };
}

export async function loadGroundTruth(path: string): Promise<LoadResult<ItbenchGroundTruth>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return { repairs: [], error: `cannot read ${path}: ${(e as Error).message}` };
  }
  return parseGroundTruth(text);
}

export const rootCauseGroups = (gt: ItbenchGroundTruth): GroundTruthGroup[] => gt.groups.filter((g) => g.rootCause);

/** The ids interchangeable with `groupId` (the group itself included). */
export function aliasSet(gt: ItbenchGroundTruth, groupId: string): string[] {
  const ids = new Set([groupId]);
  for (const set of gt.aliases) if (set.includes(groupId)) for (const id of set) ids.add(id);
  return [...ids];
}

// ---------------------------------------------------------------------------------------------------------------
// Supporting-file recognisers (by content keys, not by folder name)
// ---------------------------------------------------------------------------------------------------------------

const firstDoc = (s: Sample): Record<string, unknown> | undefined => (s.kind === "json" && isObj(s.records[0]) ? s.records[0] : undefined);

function describeJson(doc: Record<string, unknown>): string | undefined {
  if (isDeliverableShape(doc)) {
    if (typeof doc.id === "string" && "alert_start_time" in doc) return "ITBench CrewAI agent output (merged diagnosis and remediation)";
    const first = arr(doc.entities).find(isObj);
    if (first && "root_cause" in first && !("contributing_factor" in first)) return "ITBench CrewAI diagnosis structured output";
    return "ITBench diagnosis deliverable (agent_output.json)";
  }
  if (Array.isArray(doc.remediation_plan)) return "ITBench remediation plan (agent_remediation.json)";
  if (Object.keys(doc).length === 1 && Array.isArray(doc.remediation) && arr(doc.remediation).every((r) => Array.isArray(r)))
    return "ITBench CrewAI remediation structured output";
  if (Array.isArray(doc.nodes) && Array.isArray(doc.edges) && arr(doc.nodes).every((n) => isObj(n) && "id" in n && ("kind" in n || "namespace" in n)))
    return "ITBench application topology (app.json)";
  const schemaRef = str(doc.$schema) ?? "";
  if (/schemas\/library\/index\/scenario\.json$/.test(schemaRef) && "disruptions" in doc) return "ITBench scenario library index";
  if (/json-schema\.org/.test(schemaRef) && isObj(doc.properties) && "disruptions" in doc.properties && "complexity" in doc.properties)
    return "ITBench scenario library index JSON schema";
  const isJudge = (o: unknown) => isObj(o) && Array.isArray(o.raw_results) && isObj(o.statistics) && arr(o.raw_results).every((r) => isObj(r) && isObj(r.scores));
  if (isJudge(doc)) return "ITBench-Evaluations judge results (evaluation_results.json)";
  if (isObj(doc.participants) && Array.isArray(doc.results) && arr(doc.results).some((r) => isObj(r) && isJudge(r.evaluation_results)))
    return "AgentBeats ITBench judge results";
  if (isObj(doc.flat_scores)) return "ITBench judge output (judge_output.json)";
  return undefined;
}

function describeYaml(head: string): string | undefined {
  const api = head.match(/^apiVersion:\s*itbench\.io\/(v\d+)\s*$/m)?.[1];
  const kind = head.match(/^kind:\s*(\w+)\s*$/m)?.[1];
  if (api && kind === "GroundTruth") return `ITBench ground truth (${api}, wrapped)`;
  if (api && kind === "Scenario") return `ITBench scenario spec (${api})`;
  if (/^groups:\s*$/m.test(head) && /^(fault|propagations|alerts):\s*$/m.test(head) && /^metadata:\s*$/m.test(head)) return "ITBench ground truth (v1, bare)";
  return undefined;
}

/**
 * Says what an ITBench supporting file is (deliverables, remediation plans, Codex config, topology, ground truth,
 * scenario specs, library index, judge results, CrewAI outputs), or undefined when it is none of them.
 */
export function describeItbenchFile(s: Sample): string | undefined {
  const doc = firstDoc(s);
  if (doc) return describeJson(doc);
  if (s.kind !== "text") return undefined;
  if (s.ext === ".yaml" || s.ext === ".yml") return describeYaml(s.head);
  if (s.name === "config.toml" && /^\s*\[(profiles|mcp_servers|model_providers)[.\]]/m.test(s.head)) return "Codex CLI configuration (config.toml)";
  if (s.ext === ".txt" && /_time\.txt$/.test(s.name) && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/.test(s.head.trim()))
    return "ITBench CrewAI timing (MTTD input)";
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Run layout and sidecar lookup (touches the file system)
// ---------------------------------------------------------------------------------------------------------------

/** `Scenario-2`, `scenario_2`, `incident-2`, `2` → `2` (the official loader's canonical ids). */
export function canonicalIncidentId(name: string): string {
  const m = name.match(/^(?:scenario|incident)[-_]?(\d+)$/i) ?? name.match(/^(\d+)$/) ?? name.match(/[-_](\d+)$/);
  return m ? m[1]! : name;
}

/** Incident and trial from a Zero workspace path (`…/agent_outputs/<incident>/<trial>/…`). */
export function runFromPath(path: string | undefined): { incident: string; trial: string; runDir: string } | undefined {
  if (!path) return undefined;
  const m = path.replace(/\\/g, "/").match(/^(.*\/agent_outputs\/([^/]+)\/([^/]+))(?:\/|$)/);
  return m ? { runDir: m[1]!, incident: canonicalIncidentId(m[2]!), trial: m[3]! } : undefined;
}

export interface RunSidecars {
  deliverable?: string;
  groundTruth?: string;
  /**
   * How the ground truth was found: beside the run, the snapshot folder named in the instructions, the option, or
   * (`groundTruthInTree`) anywhere in the input by scenario id.
   */
  groundTruthFrom?: "run" | "snapshot" | "option" | "input-tree";
  /** Several ground-truth files matched and none names the incident: none was taken. */
  groundTruthAmbiguous?: string[];
}

/** The run folder of a trace file in Zero's layout (`<run>/sessions/YYYY/MM/DD/…`, `<run>/traces/…`). */
export function runDirOf(traceFile: string): string | undefined {
  const p = traceFile.replace(/\\/g, "/");
  return p.match(/^(.*)\/sessions\/\d{4}\/\d{2}\/\d{2}\/[^/]+$/)?.[1] ?? p.match(/^(.*)\/traces\/[^/]+$/)?.[1];
}

const GT_EXACT = ["groundtruth_v1.yaml", "ground_truth.yaml", "ground_truth.yml", "groundtruth_v1.yml"];

function groundTruthIn(dir: string, incident: string | undefined): { path?: string; ambiguous?: string[] } {
  for (const n of GT_EXACT) {
    const p = join(dir, n);
    if (existsSync(p)) return { path: p };
  }
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /groundtruth_v1\.ya?ml$/i.test(n)).sort();
  } catch {
    return {};
  }
  if (names.length === 1) return { path: join(dir, names[0]!) };
  if (names.length > 1) {
    const re = incident ? new RegExp(`(^|[^0-9])${incident.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([^0-9]|$)`) : undefined;
    const hit = re ? names.filter((n) => re.test(n)) : [];
    if (hit.length === 1) return { path: join(dir, hit[0]!) };
    return { ambiguous: names.map((n) => join(dir, n)) };
  }
  return {};
}

/**
 * Finds a run's deliverable and ground truth from one of its trace files: the deliverable upward from the file
 * (a few levels: `<trial>/sessions/YYYY/MM/DD/rollout.jsonl`, `<trial>/traces/stdout.log`); the ground truth near
 * the run (trial, incident and outputs folders), then in the snapshot folder the instructions name, then the
 * `--ground-truth` option (a file, or a folder holding `<incident>/ground_truth.yaml`).
 */
export function findRunSidecars(
  traceFile: string,
  opts: { deliverableName: string; incident?: string; snapshotDir?: string; groundTruthOption?: string },
): RunSidecars {
  const out: RunSidecars = {};
  out.deliverable = findUp(traceFile, opts.deliverableName, 4);
  // the ground-truth search starts at the run folder when the layout or the deliverable locates it
  const runDir = runDirOf(traceFile) ?? (out.deliverable ? dirname(out.deliverable) : undefined);
  let dir = runDir ?? dirname(traceFile);
  const levels = runDir ? 3 : 6;
  for (let level = 0; level <= levels; level++) {
    const r = groundTruthIn(dir, opts.incident);
    if (r.path) {
      out.groundTruth = r.path;
      out.groundTruthFrom = "run";
      return out;
    }
    if (r.ambiguous && !out.groundTruthAmbiguous) out.groundTruthAmbiguous = r.ambiguous;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  if (opts.snapshotDir) {
    const r = groundTruthIn(opts.snapshotDir, opts.incident);
    if (r.path) {
      out.groundTruth = r.path;
      out.groundTruthFrom = "snapshot";
      return out;
    }
  }
  const opt = opts.groundTruthOption;
  if (opt && existsSync(opt)) {
    let p: string | undefined = opt;
    if (statSync(opt).isDirectory()) {
      p = undefined;
      if (opts.incident) {
        for (const sub of [opts.incident, `Scenario-${opts.incident}`, `scenario_${opts.incident}`, `scenario-${opts.incident}`]) {
          const r = groundTruthIn(join(opt, sub), opts.incident);
          if (r.path) {
            p = r.path;
            break;
          }
        }
        p ??= groundTruthIn(opt, opts.incident).path;
      }
    }
    if (p) {
      out.groundTruth = p;
      out.groundTruthFrom = "option";
    }
  }
  return out;
}

/** What Zero's instructions say about the run: where the deliverable goes and where the snapshot data is. */
export function readInstructions(instructions: string | undefined): { deliverableName: string; runKind: "diagnosis" | "remediation"; snapshotDir?: string } {
  const text = instructions ?? "";
  const target = text.match(/write your (?:diagnosis|remediation plan|[a-z ]{1,40}) to:?\s*\**\s*([^\s*]+\.json)/i)?.[1];
  const deliverableName = target ? basename(target) : "agent_output.json";
  const runKind = /remediation/i.test(deliverableName) || /^\s*\**Task\**:\s*Generate Remediation Plan/i.test(text) ? "remediation" : "diagnosis";
  const snapshotDir = text.match(/incident data is located in these directories[^\n]*\n\s*-\s*(\S+)/i)?.[1];
  return { deliverableName, runKind, snapshotDir };
}

// ---------------------------------------------------------------------------------------------------------------
// Scenario ids and ground truth anywhere in the input tree
// ---------------------------------------------------------------------------------------------------------------

/** `Scenario-2`, `scenario_2`, `incident-2` → `2`; undefined for anything else (a bare number is a trial too). */
function scenarioIdOfName(name: string): string | undefined {
  return name.match(/^(?:scenario|incident)[-_]?(\d+)$/i)?.[1];
}

export interface RunScenario {
  /** The scenario id the run attempted (ITBench scenario number), when its surroundings say it. */
  id?: string;
  /** What said it, e.g. `run folder agent_outputs/2/1`, `snapshot folder Scenario-2`. */
  from: string[];
  /** The sources disagree: no ground truth is joined by scenario id. */
  conflict?: string;
}

/**
 * The scenario a Zero run attempted, from its run folder (`…/agent_outputs/<scenario>/<trial>`, in `session_meta.cwd`
 * or the file's path) and from the snapshot folder its instructions (or the run's AGENTS.md) name
 * (`…/snapshots/sre/<version>/Scenario-<N>`). Both are Zero's scenario number; when they disagree nothing is chosen.
 */
export function scenarioOfRun(runIncident: string | undefined, runDir: string | undefined, snapshotDir: string | undefined): RunScenario {
  const found: { id: string; from: string }[] = [];
  if (runIncident && /^\d+$/.test(runIncident)) {
    const tail = runDir?.replace(/\\/g, "/").match(/agent_outputs\/[^/]+\/[^/]+$/)?.[0];
    found.push({ id: runIncident, from: `run folder ${tail ?? `agent_outputs/${runIncident}`}` });
  }
  const snapName = snapshotDir?.replace(/\\/g, "/").replace(/\/+$/, "").split("/").pop();
  const snap = snapName ? scenarioIdOfName(snapName) : undefined;
  if (snap) found.push({ id: snap, from: `snapshot folder ${snapName}` });
  const ids = [...new Set(found.map((f) => f.id))];
  if (ids.length > 1) return { from: found.map((f) => f.from), conflict: found.map((f) => `${f.from} says scenario ${f.id}`).join(", ") };
  return { id: ids[0], from: found.map((f) => f.from) };
}

/** A ground-truth file found in the input tree, with the scenario it belongs to. */
export interface GroundTruthCandidate {
  path: string;
  scenario: string;
  /** What names the scenario: `metadata.name scenario-2`, `file name`, `folder Scenario-2`. */
  scenarioFrom: string;
  version: "v1" | "v2";
}

/** File names the tree search reads: `ground_truth.yaml`, `groundtruth_v1.yaml`, `scenario_2_groundtruth.yaml`, … */
const GT_FILE_NAME = /ground[-_]?truth[^/]*\.ya?ml$/i;

/** The scenario a ground-truth file belongs to: its `metadata.name`, else its file name, else a scenario folder above it. */
export function scenarioOfGroundTruth(path: string, gt: Pick<ItbenchGroundTruth, "name">): { id: string; from: string } | undefined {
  const byName = gt.name ? scenarioIdOfName(gt.name) : undefined;
  if (byName) return { id: byName, from: `metadata.name ${gt.name}` };
  const byFile = basename(path).match(/(?:^|[^a-z0-9])(?:scenario|incident)[-_]?(\d+)(?![0-9])/i)?.[1];
  if (byFile) return { id: byFile, from: "file name" };
  let dir = dirname(path);
  for (let i = 0; i < 3; i++) {
    const id = scenarioIdOfName(basename(dir));
    if (id) return { id, from: `folder ${basename(dir)}` };
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

const treeIndexes = new WeakMap<object, Promise<GroundTruthCandidate[]>>();

/**
 * Every ground-truth YAML under the input paths with its scenario id and version, sorted by path. Built once per
 * `key` (one read); files that do not parse as ground truth or name no scenario are left out.
 */
export function groundTruthIndex(roots: string[], key: object = {}): Promise<GroundTruthCandidate[]> {
  let hit = treeIndexes.get(key);
  if (!hit) {
    hit = (async () => {
      const { files, streams } = await walkFiles(roots);
      const out: GroundTruthCandidate[] = [];
      // a pipe given as input can be read once only: it is the reader's, never a ground-truth candidate
      const once = new Set(streams);
      for (const path of [...new Set(files)].filter((f) => !once.has(f) && GT_FILE_NAME.test(basename(f))).sort()) {
        const gt = await loadGroundTruth(path);
        if (!gt.value) continue;
        const sc = scenarioOfGroundTruth(path, gt.value);
        if (sc) out.push({ path, scenario: sc.id, scenarioFrom: sc.from, version: gt.value.version });
      }
      return out;
    })();
    hit.catch(() => undefined);
    treeIndexes.set(key, hit);
  }
  return hit;
}

export interface TreeGroundTruth {
  path: string;
  version: "v1" | "v2";
  /** Why this file: the scenario match and the preference applied, for the reader's notice. */
  reason: string;
  /** The other files of the same scenario that were not taken. */
  others: GroundTruthCandidate[];
}

/**
 * The ground truth of `scenario` anywhere under the input paths. Deterministic: v1 files first (scoring needs v1
 * groups), then the first by path; the others of the same scenario are listed in the reason.
 */
export async function groundTruthInTree(roots: string[], scenario: string, key?: object): Promise<TreeGroundTruth | undefined> {
  const all = (await groundTruthIndex(roots, key)).filter((c) => c.scenario === scenario);
  if (all.length === 0) return undefined;
  const ranked = [...all].sort((a, b) => (a.version === b.version ? (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) : a.version === "v1" ? -1 : 1));
  const chosen = ranked[0]!;
  const others = ranked.slice(1);
  const why = [`found in the input tree for scenario ${scenario} (${chosen.scenarioFrom})`];
  const v2 = others.filter((o) => o.version === "v2");
  if (chosen.version === "v1" && v2.length) why.push(`v1 preferred over ${v2.map((o) => `${basename(o.path)} (v2)`).join(", ")}`);
  if (chosen.version === "v2") why.push("no v1 file for this scenario: v2 has no groups, so the run cannot be scored");
  const v1 = others.filter((o) => o.version === "v1");
  if (v1.length) why.push(`first by path of ${v1.length + 1} v1 files (also ${v1.map((o) => o.path).join(", ")})`);
  return { path: chosen.path, version: chosen.version, reason: why.join("; "), others };
}

export interface JoinedGroundTruth {
  groundTruth?: string;
  groundTruthFrom?: RunSidecars["groundTruthFrom"];
  /** Why this file was joined (also said in a notice). */
  reason?: string;
  scenario: RunScenario;
}

const NEAR_REASON: Record<"run" | "snapshot" | "option", string> = {
  run: "found near the run folder",
  snapshot: "found in the snapshot folder the instructions name",
  option: "given by --ground-truth",
};

/**
 * The ground truth of a Zero run: the one `findRunSidecars` found near the run (or by the option), else the
 * scenario's ground truth anywhere under the input paths (`ctx.options.inputRoots`, see `groundTruthInTree`). The
 * scenario id comes from `scenarioOfRun`; the snapshot folder from the instructions, else the run folder's AGENTS.md.
 * Reports one notice saying which file was joined and why (or why none was), a warning when the sources disagree.
 */
export async function joinGroundTruthByScenario(
  ctx: ReadContext,
  traceFile: string,
  opts: { run?: { incident: string; runDir: string }; snapshotDir?: string; sidecars: RunSidecars },
): Promise<JoinedGroundTruth> {
  let snapshotDir = opts.snapshotDir;
  const localRun = runDirOf(traceFile);
  if (!snapshotDir && localRun && existsSync(join(localRun, "AGENTS.md"))) {
    try {
      snapshotDir = readInstructions(readFileSync(join(localRun, "AGENTS.md"), "utf8")).snapshotDir;
    } catch {
      /* an unreadable AGENTS.md says nothing */
    }
  }
  const scenario = scenarioOfRun(opts.run?.incident, opts.run?.runDir, snapshotDir);
  const said = scenario.id ? `scenario ${scenario.id} (from the ${scenario.from.join(" and the ")})` : undefined;
  const { sidecars } = opts;
  if (sidecars.groundTruth && sidecars.groundTruthFrom && sidecars.groundTruthFrom !== "input-tree") {
    const reason = NEAR_REASON[sidecars.groundTruthFrom];
    ctx.report({ level: "notice", message: `ground truth joined: ${sidecars.groundTruth} (${reason}${said ? `; the run attempted ${said}` : ""})` });
    return { groundTruth: sidecars.groundTruth, groundTruthFrom: sidecars.groundTruthFrom, reason, scenario };
  }
  if (scenario.conflict) {
    ctx.report({ level: "warning", message: `the run's scenario is unclear (${scenario.conflict}); no ground truth joined by scenario id` });
    return { scenario };
  }
  if (!scenario.id) {
    ctx.report({ level: "notice", message: "no ground truth joined: the run names no scenario (no …/agent_outputs/<scenario>/<trial> folder, no Scenario-<N> snapshot folder); pass --ground-truth" });
    return { scenario };
  }
  const roots = ctx.options.inputRoots ?? [];
  const found = roots.length ? await groundTruthInTree(roots, scenario.id, ctx.options) : undefined;
  if (!found) {
    ctx.report({ level: "notice", message: `no ground truth joined: none for ${said} near the run or in the input; pass --ground-truth` });
    return { scenario };
  }
  const reason = `${found.reason}; the run attempted ${said}`;
  ctx.report({ level: found.version === "v1" ? "notice" : "warning", message: `ground truth joined: ${found.path} (${reason})` });
  return { groundTruth: found.path, groundTruthFrom: "input-tree", reason, scenario };
}
