import { join } from "node:path";
import type { StepDraft } from "../../trace/index.js";
import type { ReadContext, Sample } from "../types.js";
import { findUp } from "./sidecar.js";
import { readSidecar } from "./sidecar-cache.js";
import {
  isEvalInstanceLog,
  isEvalMarkdown,
  parseEvalMarkdown,
  verdictFromEvalLog,
  verdictFromEvalMarkdown,
  type SwebenchVerdict,
} from "./swebench.js";
import { stepLimitStep } from "./step-limit.js";
import { arr, isObj, num, str } from "./values.js";

/**
 * Run-level files of an OpenHands evaluation folder, shared by the OpenHands event-history adapter and the
 * LLM-completion-log adapter: the run's `metadata.json` and the SWE-bench evaluation report.
 */

type Obj = Record<string, unknown>;

/** `metadata.json` written by `run_infer`: `agent_class`, `llm_config{model…}`, `max_iterations`, … */
export const isEvalRunMetadata = (v: unknown): v is Obj => isObj(v) && typeof v.agent_class === "string" && isObj(v.llm_config);

/** The older summary `metadata.json` (OpenDevin logic-reasoning runs): `Dataset`, `Agent class`, `Model name`, `Final Accuracy`. */
export const isSummaryMetadata = (v: unknown): v is Obj => isObj(v) && "Agent class" in v && ("Model name" in v || "Final Accuracy" in v);

export function describeOpenHandsRunFile(s: Sample): string | undefined {
  const doc = s.records[0];
  if (s.kind === "json" && isEvalRunMetadata(doc)) return "OpenHands run metadata (metadata.json: agent_class, llm_config.model)";
  if (s.kind === "json" && isSummaryMetadata(doc)) return "OpenDevin run summary (metadata.json: Agent class, Model name, Final Accuracy)";
  if (s.kind === "text" && isEvalMarkdown(s.head)) return "OpenHands SWE-bench evaluation report (output.swebench_eval.md: resolved/unresolved instance lists)";
  if (s.kind === "text" && isEvalInstanceLog(s.head)) return "OpenHands SWE-bench evaluation log of one instance (Result for <id>: resolved)";
  return undefined;
}

export interface RunMetadata {
  path: string;
  agentClass?: string;
  modelRaw?: string;
  dataset?: string;
  maxIterations?: unknown;
}

/** The run's `metadata.json` found from a trace file `levels` folders up, when its keys say it is one. */
export async function runMetadataFor(tracePath: string, levels: number, ctx: ReadContext): Promise<RunMetadata | undefined> {
  const path = findUp(tracePath, "metadata.json", levels);
  if (!path) return undefined;
  let doc: unknown;
  try {
    doc = await readSidecar(path, "json", (t) => JSON.parse(t) as unknown);
  } catch (e) {
    ctx.report({ file: path, level: "warning", message: `run metadata not read: ${(e as Error).message}` });
    return undefined;
  }
  if (isEvalRunMetadata(doc)) {
    const llm = doc.llm_config as Obj;
    return { path, agentClass: str(doc.agent_class), modelRaw: str(llm.model), dataset: str(doc.dataset), maxIterations: doc.max_iterations };
  }
  if (isSummaryMetadata(doc)) return { path, agentClass: str(doc["Agent class"]), modelRaw: str(doc["Model name"]), dataset: str(doc.Dataset) };
  return undefined;
}

/**
 * The SWE-bench verdict for an instance from the run's `output.swebench_eval.md`, else from its per-instance log in
 * `output.swebench_eval.logs/`. Returns the file it came from.
 */
export async function evalVerdictFor(
  tracePath: string,
  instanceId: string,
  levels: number,
  ctx: ReadContext,
): Promise<{ verdict: SwebenchVerdict; file: string } | undefined> {
  const md = findUp(tracePath, "output.swebench_eval.md", levels);
  if (md) {
    try {
      const statuses = await readSidecar(md, "swebench-eval-md", parseEvalMarkdown);
      const verdict = verdictFromEvalMarkdown(statuses, instanceId);
      if (verdict) return { verdict, file: md };
    } catch (e) {
      ctx.report({ file: md, level: "warning", message: `evaluation report not read: ${(e as Error).message}` });
    }
  }
  const log = findUp(tracePath, join("output.swebench_eval.logs", `instance_${instanceId}.log`), levels);
  if (log) {
    try {
      const verdict = verdictFromEvalLog(await readSidecar(log, "text", (t) => t), instanceId);
      if (verdict) return { verdict, file: log };
    } catch (e) {
      ctx.report({ file: log, level: "warning", message: `evaluation log not read: ${(e as Error).message}` });
    }
  }
  return undefined;
}

/** OpenHands' automatic reply when the agent talks instead of acting (`fake_user_response_fn` of the benchmarks). */
export const isContinueNudge = (text: string | undefined) => /^Please continue working on the task/.test(text ?? "");

/**
 * The bash runtime appends the exit code to a command's output: `[Command finished with exit code N]` (≤ 0.15, seen
 * in completion logs) or `[The command completed with exit code N.]` (later event streams). Only a marker at the very
 * end counts, so a command that prints such a line mid-output is not misread.
 */
const EXIT_CODE_MARKER = /\[(?:Command finished|The command completed) with exit code (-?\d+)\.?\]\s*$/;

export function exitCodeFromOutput(text: string | undefined): number | undefined {
  const code = text?.match(EXIT_CODE_MARKER)?.[1];
  return code === undefined ? undefined : Number(code);
}

/**
 * Edits OpenHands refused, leaving the file unchanged: the file editor's `ERROR:` replies ("No replacement was
 * performed", "Invalid `path` parameter", …, which the OpenHands UI marks as failed) and the IPython agentskills'
 * rejections of `edit_file_by_replace` and friends ("[No exact match found in …", "[Your proposed edit has introduced
 * new syntax error(s)… Your changes have NOT been applied").
 */
const REFUSED_EDIT = /^\s*(ERROR:\s*\n|\[No exact match found in |\[Your proposed edit has introduced new syntax error)/;

/**
 * Whether a tool result reports failure, as OpenHands itself decides: a command failed when its exit code is not 0
 * (`CmdOutputObservation.error`; -1 is a command that timed out or is still running), an edit failed when OpenHands
 * refused it. An exit code, when known, decides alone: a command that exits 0 may well print "ERROR:" itself.
 * Returns undefined, not false, when nothing says the call failed.
 */
export function isFailedToolOutput(exitCode: number | undefined, text: string | undefined): true | undefined {
  if (exitCode !== undefined) return exitCode !== 0 ? true : undefined;
  return REFUSED_EDIT.test(text ?? "") ? true : undefined;
}

/**
 * The controller's own words when it stopped a run on a cap, as `run_infer` stores them in a record's `error`:
 * "RuntimeError: Agent reached maximum iteration in headless mode. Current iteration: 50, max iteration: 50" (in the
 * corpus) and its budget twin "Agent reached maximum budget for conversation…" (`max_budget_per_task`). Other errors
 * (stuck-in-loop, runtime crashes) are not caps.
 */
const RUN_CAP_ERROR = /\bAgent reached maximum (?:number of )?(?:iteration|budget)/i;

/** A final `step-limit` step for a record whose `error` says the controller hit its iteration or budget cap. */
export function capStepFromRunError(error: unknown, ref: StepDraft["ref"]): StepDraft | undefined {
  const text = str(error);
  return text !== undefined && RUN_CAP_ERROR.test(text) ? stepLimitStep("openhands", text, ref) : undefined;
}

/**
 * A completion log has no error field; the cap shows only in the count. Every action the controller runs is one
 * iteration, and one LLM response yields one action per tool call (a reply without tool calls is one message
 * action), so a conversation whose responses hold at least `max_iterations` actions, the last of them not `finish`,
 * was stopped by the cap. Counting this way can miss a cap (events that are not in the prompt), never invent one.
 */
export function capStepFromCallCount(messages: unknown[], response: unknown, maxIterations: unknown, ref: StepDraft["ref"]): StepDraft | undefined {
  const max = num(maxIterations);
  if (max === undefined || max <= 0) return undefined;
  const answer = isObj(response) ? arr(response.choices).find(isObj) : undefined;
  const answerMessage = answer && isObj(answer.message) ? answer.message : undefined;
  const replies = [...messages.filter((m) => isObj(m) && m.role === "assistant"), ...(answerMessage ? [answerMessage] : [])] as Record<string, unknown>[];
  const actions = replies.reduce((n, m) => n + Math.max(1, arr(m.tool_calls).length), 0);
  const lastCalls = arr(answerMessage?.tool_calls).map((c) => (isObj(c) && isObj(c.function) ? str(c.function.name) : undefined));
  if (actions < max || lastCalls.includes("finish")) return undefined;
  return stepLimitStep("openhands", `max_iterations ${max} (metadata.json) reached: ${actions} actions from ${replies.length} LLM responses, the last without finish`, ref);
}
