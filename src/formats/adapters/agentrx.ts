import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { buildTrace, compact, type GoldFailure, type GoldLabels, type StepDraft, type Trace } from "../../trace/index.js";
import { matchAgentName } from "../common/agent-names.js";
import { findUp, isObj, num, str } from "../common/index.js";
import { looksLikeMagenticLog, magenticLogToSteps, normalizeMagenticAgent } from "../common/magentic.js";
import { parseJsonLenient } from "../io/lenient.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";
import { isTauSample, readTauFile, tauRunFromFileName } from "./tau-bench.js";

/**
 * AgentRx (microsoft/AgentRx), trace-formats.md §8. Two trajectory layouts, one label file per layout:
 *
 * - `magentic_dataset/<trajectory_id>.json`: a bare Magentic-One log `[{content, role}]` (the Who&When Hand-Crafted
 *   layout, parsed by the same role grammar in common/magentic.ts). Labels: `ground_truth/magentic_one_ground_truth.json`.
 * - `tau_retail/tau_dataset_failed.json`: a tau-bench result list, mapped by the tau-bench adapter's record mapper.
 *   Labels: `ground_truth/tau_ground_truth.json` (or its 24-trajectory variant `tau_retail.json`), keyed by `task_id`.
 *
 * Detection. A bare list whose records are `{content, role}` with at least one orchestrator role string
 * (`Orchestrator (thought)`, `Orchestrator (-> X)`, `Orchestrator (termination condition)`) is a Magentic-One log:
 * generic chat never uses such roles, and the OpenAI-chat adapter would refuse them. A tau-bench list is the AgentRx
 * copy when it carries AgentRx's additions: an `index` on the messages, a `records` key, or string-typed numbers.
 *
 * Labels. `step_number` is 1-based: for Magentic logs step n is canonical step n-1; for tau runs it is the message
 * whose `index` is n, i.e. that message's first canonical step. The root cause is the failure whose `failure_id`
 * equals `root_cause.failure_id` (compared as text: one record writes the id as a string).
 */

export const AGENTRX_ID = "agentrx";

const MAGENTIC_TRUTH = ["ground_truth/magentic_one_ground_truth.json"];
const TAU_TRUTH = ["ground_truth/tau_ground_truth.json", "ground_truth/tau_retail.json"];

/** AgentRx's ten failure categories, in their canonical spelling. */
export const AGENTRX_CATEGORIES = [
  "Instruction/Plan Adherence Failure",
  "Invention of New Information",
  "Invalid Invocation",
  "Misinterpretation of Tool Output",
  "Intent-Plan Misalignment",
  "Underspecified User Intent",
  "Intent Not Supported",
  "Guardrails Triggered",
  "System Failure",
  "Inconclusive",
] as const;

const categoryKey = (s: string) => s.toLowerCase().replace(/[^a-z]+/g, " ").trim();
const CATEGORY_BY_KEY = new Map<string, string>([
  ...AGENTRX_CATEGORIES.map((c) => [categoryKey(c), c] as [string, string]),
  // the tau labels drop "/Plan"
  [categoryKey("Instruction Adherence Failure"), "Instruction/Plan Adherence Failure"],
]);

/** Canonical category name for a label's spelling (`Intent Plan Misalignment`, `Invention of new information` …). */
export function normalizeAgentRxCategory(raw: string): string | undefined {
  return CATEGORY_BY_KEY.get(categoryKey(raw));
}

// ---------------------------------------------------------------------------------------------------------------
// Ground truth files

type TruthEntry = Record<string, unknown>;
interface TruthFile {
  byId: Map<string, TruthEntry>;
  error?: string;
}

/** Label files are shared by many trajectory files (one per Magentic log): parse each once per version on disk. */
const truthCache = new Map<string, { stamp: string; truth: TruthFile }>();

async function loadTruth(path: string): Promise<TruthFile> {
  const st = await stat(path);
  const stamp = `${st.mtimeMs}:${st.size}`;
  const hit = truthCache.get(path);
  if (hit && hit.stamp === stamp) return hit.truth;
  let truth: TruthFile;
  try {
    const doc = parseJsonLenient(await readFile(path, "utf8")).value;
    if (!Array.isArray(doc)) truth = { byId: new Map(), error: "expected a JSON array of {trajectory_id, failures, root_cause}" };
    else {
      const byId = new Map<string, TruthEntry>();
      for (const e of doc) if (isObj(e) && str(e.trajectory_id) !== undefined) byId.set(str(e.trajectory_id)!, e);
      truth = { byId };
    }
  } catch (e) {
    truth = { byId: new Map(), error: (e as Error).message };
  }
  truthCache.set(path, { stamp, truth });
  return truth;
}

const isTruthEntry = (v: unknown) => isObj(v) && "trajectory_id" in v && Array.isArray(v.failures) && "root_cause" in v;

/**
 * AgentRx labels for one trace. `stepOf` turns a 1-based `step_number` into the canonical step index (or undefined
 * when it names no step); `agentOf` puts a `failed_agent` into the trace's own spelling.
 */
export function agentRxGold(
  entry: TruthEntry,
  stepOf: (stepNumber: number) => number | undefined,
  agentOf: (name: string) => string,
  report: (message: string) => void,
): GoldLabels {
  const trajectory = str(entry.trajectory_id);
  const rootCause = isObj(entry.root_cause) ? entry.root_cause : {};
  const rootId = str(rootCause.failure_id);
  if (typeof rootCause.failure_id === "string")
    report(`trajectory ${trajectory}: root_cause.failure_id is the string "${rootCause.failure_id}"; matched to failure ${rootCause.failure_id} by its text`);
  const failures: GoldFailure[] = [];
  for (const f of entry.failures as unknown[]) {
    if (!isObj(f)) {
      report(`trajectory ${trajectory}: a failure is not an object; left out`);
      continue;
    }
    const stepNumber = num(f.step_number);
    const step = stepNumber !== undefined ? stepOf(stepNumber) : undefined;
    if (step === undefined) report(`trajectory ${trajectory}: failure ${str(f.failure_id)} has step_number ${JSON.stringify(f.step_number)}, which names no step; kept without a step`);
    const rawCategory = str(f.failure_category);
    const category = rawCategory !== undefined ? normalizeAgentRxCategory(rawCategory) ?? rawCategory : undefined;
    if (rawCategory !== undefined && normalizeAgentRxCategory(rawCategory) === undefined)
      report(`trajectory ${trajectory}: unknown failure category "${rawCategory}"; kept as written`);
    const rawAgent = str(f.failed_agent);
    failures.push(
      compact({
        step,
        agent: rawAgent !== undefined ? agentOf(rawAgent) : undefined,
        category,
        reason: str(f.step_reason),
        rootCause: rootId !== undefined && str(f.failure_id) === rootId,
      }),
    );
  }
  const root = failures.find((f) => f.rootCause);
  if (!root) report(`trajectory ${trajectory}: root_cause.failure_id ${JSON.stringify(rootCause.failure_id)} matches no failure; no root-cause step`);
  return compact({
    source: "agentrx",
    mistakeAgent: root?.agent,
    mistakeStep: root?.step,
    mistakeReason: str(entry.failure_summary),
    failures,
  });
}

/** Finds the label file beside a trajectory file, loads it and attaches the trajectory's labels to the trace. */
async function attachTruth(
  trace: Trace,
  trajectoryId: string,
  names: string[],
  stepOf: (n: number) => number | undefined,
  agentOf: (name: string) => string,
  ctx: ReadContext,
  line?: number,
): Promise<void> {
  const path = findUp(trace.source.file, names, 2);
  if (!path) {
    ctx.report({ line, level: "notice", message: `no AgentRx ground truth (${names.join(" or ")}) found near the file; trace ${trace.id} has no labels` });
    return;
  }
  trace.source.sidecars = [...(trace.source.sidecars ?? []), path];
  const truth = await loadTruth(path);
  if (truth.error) {
    ctx.report({ file: path, level: "warning", message: `AgentRx ground truth unreadable (${truth.error}); traces get no labels` });
    return;
  }
  const entry = truth.byId.get(trajectoryId);
  if (!entry) {
    ctx.report({ line, level: "notice", message: `trajectory ${trajectoryId} has no entry in ${basename(path)}; no AgentRx labels` });
    return;
  }
  if (!isTruthEntry(entry)) {
    ctx.report({ file: path, level: "warning", message: `trajectory ${trajectoryId}: label entry lacks failures[] or root_cause; no labels` });
    return;
  }
  trace.goldLabels = [...(trace.goldLabels ?? []), agentRxGold(entry, stepOf, agentOf, (message) => ctx.report({ file: path, level: "warning", message }))];
  // The entry as released (1-based step numbers, category reasons, root-cause reason): nothing of it is lost.
  trace.metadata.agentrxGroundTruth = entry;
}

// ---------------------------------------------------------------------------------------------------------------
// Trajectories

/** AgentRx's tau-bench copy: messages numbered with `index`, a `records` key, or numbers written as strings. */
function isAgentRxTauSample(s: Sample): boolean {
  if (!isTauSample(s)) return false;
  const r = s.records[0] as Record<string, unknown>;
  const traj = r.traj as unknown[];
  return "records" in r || typeof r.reward === "string" || traj.some((m) => isObj(m) && "index" in m);
}

async function* readMagentic(file: Parameters<FormatAdapter["read"]>[0], ctx: ReadContext): AsyncGenerator<Trace> {
  const trajectoryId = basename(file.path).replace(/\.json$/i, "");
  // Place items by their position in the array: a malformed element (reported by the reader) keeps its slot, so
  // 1-based labels still point at the right steps.
  const items: unknown[] = [];
  const lines: (number | undefined)[] = [];
  for await (const r of file.records()) {
    items[r.index] = r.value;
    lines[r.index] = r.line;
  }
  for (let i = 0; i < items.length; i++) if (!(i in items)) items[i] = undefined;
  const { steps, problems } = magenticLogToSteps(items, { pointer: "" });
  for (const p of problems) ctx.report({ line: lines[p.position], level: "warning", message: p.message });
  steps.forEach((s: StepDraft, i) => {
    if (s.ref && lines[i] !== undefined) s.ref.line = lines[i];
  });
  let trace: Trace;
  try {
    trace = buildTrace(
      {
        id: `${AGENTRX_ID}:${trajectoryId}`,
        source: { file: file.path, format: AGENTRX_ID, index: 0 },
        framework: "magentic-one",
        task: compact({ id: trajectoryId, text: steps.find((s) => s.role === "user")?.text }),
        // AgentRx releases failed trajectories only; the logs carry no verdict of their own.
        outcome: { success: false, raw: "AgentRx: failed trajectory" },
        metadata: { dataset: "agentrx", layout: "magentic" },
      },
      steps,
    );
  } catch (e) {
    ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    return;
  }
  await attachTruth(
    trace,
    trajectoryId,
    MAGENTIC_TRUTH,
    (n) => (Number.isInteger(n) && n >= 1 && n <= trace.steps.length ? n - 1 : undefined),
    (name) => matchAgentName(normalizeMagenticAgent(name), trace.agents),
    ctx,
  );
  yield trace;
}

/** The first canonical step of the tau message that AgentRx numbers `n` (its `index`, else its 1-based position). */
function tauStepOf(trace: Trace): (n: number) => number | undefined {
  return (n) => {
    const byIndex = trace.steps.find((s) => s.ref?.original !== undefined && Number(s.ref.original) === n);
    if (byIndex) return byIndex.index;
    return trace.steps.find((s) => s.ref?.pointer === `/traj/${n - 1}`)?.index;
  };
}

async function* readTau(file: Parameters<FormatAdapter["read"]>[0], ctx: ReadContext): AsyncGenerator<Trace> {
  const traces = readTauFile(file, { idPrefix: `${AGENTRX_ID}:tau-bench`, format: AGENTRX_ID, run: tauRunFromFileName(file.path) }, ctx);
  for await (const trace of traces) {
    trace.metadata.dataset = "agentrx";
    if (trace.task?.id !== undefined)
      await attachTruth(trace, trace.task.id, TAU_TRUTH, tauStepOf(trace), (name) => matchAgentName(name, trace.agents), ctx, trace.source.line);
    yield trace;
  }
}

export const agentRx: FormatAdapter = {
  id: AGENTRX_ID,
  title: "AgentRx failure localisation (Magentic-One logs, tau-bench retail runs) with its step-level ground truth",
  detect(s) {
    if (s.kind === "json-array" && looksLikeMagenticLog(s.records)) return true;
    return isAgentRxTauSample(s);
  },
  read(file, ctx) {
    return file.sample.kind === "json-array" && looksLikeMagenticLog(file.sample.records) ? readMagentic(file, ctx) : readTau(file, ctx);
  },
  supports(s) {
    return s.records.length > 0 && isTruthEntry(s.records[0]) ? "AgentRx ground truth (failure labels keyed by trajectory_id)" : undefined;
  },
};
