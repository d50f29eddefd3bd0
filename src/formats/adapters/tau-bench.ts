import { basename } from "node:path";
import { buildTrace, compact, type Trace } from "../../trace/index.js";
import { arr, chatMessagesToSteps, contentText, isObj, maybeJson, normalizeModel, num, str } from "../common/index.js";
import { stepLimitStep } from "../common/step-limit.js";
import { parsePythonLiteral } from "../io/lenient.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";

/**
 * tau-bench results (sierra-research/tau-bench), trace-formats.md §11: a JSON list of
 * `{task_id, reward, info, traj, trial}` where `traj` is an OpenAI chat-completions message list.
 *
 * The same mapper reads the AgentRx copy of tau-retail runs (agentrx.ts), which may store `task_id`, `reward` and
 * `trial` as strings, `info` as a Python repr string, and adds an `index` to every message (kept as the step's
 * `ref.original`: AgentRx ground truth counts steps by it).
 *
 * A run cut by tau-bench's step budget ends with a `termination` step tagged `step-limit` (see `endedOnStepBudget`).
 */

export const TAU_BENCH_ID = "tau-bench";

/** What a results file says about its run outside the records: tau-bench keeps the model only in the file name. */
export interface TauRunInfo {
  model?: string;
  domain?: string;
  agentStrategy?: string;
  temperature?: number;
  userModel?: string;
}

const TAU_DOMAINS = "airline|retail";
/** `historical_trajectories/<model>-<domain>.json`, e.g. `gpt-4o-airline.json`, `sonnet-35-new-retail.json`. */
const HISTORICAL_NAME = new RegExp(`^(.+)-(${TAU_DOMAINS})$`, "i");
/**
 * `run.py` checkpoints: `<strategy>-<model>-<temperature>_range_<start>-<end>_user-<user model>-<user strategy>_<time>`,
 * with `/` in model names written as `_` (older versions keep only the part after the last `/`).
 */
const RUN_NAME = /^(tool-calling|act|react|few-shot|orchestrated-tool-calling)-(.+)-(\d+(?:\.\d+)?)_range_-?\d+--?\d+_user-(.+)-([a-z]+)_[^_]+$/i;

/**
 * The one place that reads run facts from a tau-bench results file name. Unknown names give `{}`; the domain may
 * still come from the system prompt (see `domainFromPolicy`).
 */
export function tauRunFromFileName(path: string): TauRunInfo {
  const stem = basename(path).replace(/\.(jsonl?|ndjson)$/i, "");
  const run = RUN_NAME.exec(stem);
  if (run) return { agentStrategy: run[1]!.toLowerCase(), model: run[2], temperature: Number(run[3]), userModel: run[4] };
  const historical = HISTORICAL_NAME.exec(stem);
  if (historical) return { model: historical[1], domain: historical[2]!.toLowerCase() };
  return {};
}

/** tau-bench's system prompt starts with the domain policy title: `# Airline Agent Policy`, `# Retail agent policy`. */
function domainFromPolicy(traj: unknown[]): string | undefined {
  const first = traj[0];
  if (!isObj(first) || first.role !== "system" || typeof first.content !== "string") return undefined;
  return /^\s*#\s*(\w+)\s+agent\s+policy/i.exec(first.content)?.[1]?.toLowerCase();
}

export function isTauRecord(v: unknown): v is Record<string, unknown> {
  return isObj(v) && "task_id" in v && "reward" in v && Array.isArray(v.traj);
}

/** `info` as an object: JSON already, a JSON string, or a Python repr string (AgentRx). */
function parseInfo(info: unknown): { value?: Record<string, unknown>; from?: "json-string" | "python-repr"; failed?: boolean } {
  if (info === undefined || info === null) return {};
  if (isObj(info)) return { value: info };
  if (typeof info !== "string") return { failed: true };
  const asJson = maybeJson(info);
  if (isObj(asJson)) return { value: asJson, from: "json-string" };
  const asPython = parsePythonLiteral(info);
  if (isObj(asPython)) return { value: asPython, from: "python-repr" };
  return { failed: true };
}

/**
 * tau-bench's agents take at most `max_num_steps` model turns (`solve(…, max_num_steps=30)` in every agent; `run.py`
 * keeps the default), one assistant message each. The environment ends a run earlier when the user simulator says
 * `###STOP###` or the agent calls a terminate tool (`transfer_to_human_agents`). A run with exactly 30 assistant turns
 * that ended neither way was cut by the budget. A run with more turns had a different budget and is left alone.
 */
const TAU_MAX_NUM_STEPS = 30;
const TAU_TERMINATE_TOOLS = new Set(["transfer_to_human_agents"]);

/** The cap statement when the run used the whole step budget without the environment ending it, else undefined. */
function endedOnStepBudget(traj: unknown[]): string | undefined {
  const turns = traj.filter((m): m is Record<string, unknown> => isObj(m) && m.role === "assistant");
  if (turns.length !== TAU_MAX_NUM_STEPS) return undefined;
  const last = traj.at(-1);
  if (isObj(last) && last.role === "user" && (contentText(last.content) ?? "").includes("###STOP###")) return undefined;
  const lastCall = arr(turns.at(-1)!.tool_calls).find(isObj);
  const lastTool = lastCall && isObj(lastCall.function) ? str(lastCall.function.name) : undefined;
  if (lastTool !== undefined && TAU_TERMINATE_TOOLS.has(lastTool)) return undefined;
  return `max_num_steps (${TAU_MAX_NUM_STEPS}) reached: ${TAU_MAX_NUM_STEPS} agent turns, and neither the user's ###STOP### nor a terminate tool ended the run`;
}

export interface TauMappingOptions {
  /** Trace id prefix, e.g. `tau-bench`, `agentrx:tau-bench`. */
  idPrefix: string;
  /** Adapter id written to `trace.source.format`. */
  format: string;
  run: TauRunInfo;
}

/** Maps one tau-bench result record to a trace; reports and returns undefined when it cannot. */
export function tauRecordToTrace(
  value: unknown,
  where: { file: string; index: number; line?: number },
  opts: TauMappingOptions,
  ctx: ReadContext,
): Trace | undefined {
  const { line } = where;
  if (!isTauRecord(value)) {
    ctx.report({ line, level: "error", message: "not a tau-bench result: expected {task_id, reward, info, traj, trial}", skipped: "trace" });
    return undefined;
  }
  const rec = value;
  const traj = rec.traj as unknown[];
  const taskId = str(rec.task_id);
  const trial = num(rec.trial);
  const reward = num(rec.reward);
  if (reward === undefined) ctx.report({ line, level: "warning", message: `reward ${JSON.stringify(rec.reward)} is not a number; no outcome` });

  const info = parseInfo(rec.info);
  if (info.failed)
    ctx.report({ line, level: "warning", message: "info is neither JSON nor a Python literal; kept raw in metadata.infoRaw" });
  const { task, reward_info: rewardInfo, ...restInfo } = info.value ?? {};
  const { instruction, actions, outputs, ...restTask } = isObj(task) ? task : ({} as Record<string, unknown>);

  const steps = chatMessagesToSteps(traj, { pointer: "/traj", line });
  // Keep the dataset's own message number (AgentRx `index`) on every step made from that message.
  for (const step of steps) {
    const position = Number(step.ref?.pointer?.slice("/traj/".length));
    const message = traj[position];
    const own = isObj(message) ? message.index : undefined;
    if (step.ref && (typeof own === "number" || typeof own === "string")) step.ref.original = num(own) ?? own;
  }
  traj.forEach((m, position) => {
    if (isObj(m) && typeof m.refusal === "string" && m.refusal !== "")
      ctx.report({ line, level: "warning", message: `traj message ${position} carries a refusal, which is not mapped to a step: ${m.refusal.slice(0, 80)}` });
  });
  // A run that crashed is stored with an empty traj and the exception in info.error.
  const error = str(restInfo.error);
  if (traj.length === 0 && error !== undefined)
    steps.push({ agent: "tau-bench", role: "system", kind: "error", text: [error, str(restInfo.traceback)].filter(Boolean).join("\n"), ref: compact({ pointer: "/info/error", line }) });

  const budget = endedOnStepBudget(traj);
  if (budget) steps.push(stepLimitStep("tau-bench", budget, compact({ pointer: "/traj", line })));

  const domain = opts.run.domain ?? domainFromPolicy(traj);
  const model = normalizeModel(opts.run.model);
  const extraKeys = Object.entries(rec).filter(([k, v]) => !["task_id", "reward", "info", "traj", "trial"].includes(k) && !(isObj(v) && Object.keys(v).length === 0));
  const infoRest = { ...restInfo, ...(Object.keys(restTask).length ? { task: restTask } : {}) };
  const metadata: Record<string, unknown> = compact({
    trial,
    domain,
    agentStrategy: opts.run.agentStrategy,
    temperature: opts.run.temperature,
    userModel: opts.run.userModel,
    modelRaw: opts.run.model && opts.run.model !== model ? opts.run.model : undefined,
    info: Object.keys(infoRest).length ? infoRest : undefined,
    infoParsedFrom: info.from,
    infoRaw: info.failed ? rec.info : undefined,
    extra: extraKeys.length ? Object.fromEntries(extraKeys) : undefined,
  });
  try {
    return buildTrace(
      {
        id: [opts.idPrefix, domain, taskId ?? `#${where.index}`, trial].filter((p) => p !== undefined).join(":"),
        source: compact({ file: where.file, format: opts.format, index: where.index, line }),
        framework: "tau-bench",
        model,
        task: compact({
          id: taskId,
          text: str(instruction),
          expected: actions !== undefined || outputs !== undefined ? compact({ actions, outputs }) : undefined,
          benchmark: domain ? `tau-bench/${domain}` : "tau-bench",
        }),
        outcome: reward !== undefined ? compact({ success: reward === 1, reward, metric: "reward", raw: rewardInfo }) : undefined,
        metadata,
      },
      steps,
    );
  } catch (e) {
    ctx.report({ line, level: "error", message: (e as Error).message, skipped: "trace" });
    return undefined;
  }
}

/** Reads every record of a tau-bench results file with the given mapping options. */
export async function* readTauFile(file: { path: string; records(): AsyncIterable<{ value: unknown; line?: number; index: number }> }, opts: TauMappingOptions, ctx: ReadContext) {
  for await (const r of file.records()) {
    const trace = tauRecordToTrace(r.value, { file: file.path, index: r.index, line: r.line }, opts, ctx);
    if (trace) yield trace;
  }
}

export const isTauSample = (s: Sample) => s.records.length > 0 && isTauRecord(s.records[0]);

export const tauBench: FormatAdapter = {
  id: TAU_BENCH_ID,
  title: "tau-bench results ({task_id, reward, info, traj, trial} with OpenAI chat trajectories)",
  detect: isTauSample,
  read(file, ctx) {
    return readTauFile(file, { idPrefix: TAU_BENCH_ID, format: TAU_BENCH_ID, run: tauRunFromFileName(file.path) }, ctx);
  },
};
