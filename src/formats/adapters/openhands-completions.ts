import { readdirSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { buildTrace, compact, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, chatMessagesToSteps, isObj, normalizeModel, num, str } from "../common/index.js";
import { capStepFromCallCount, evalVerdictFor, exitCodeFromOutput, isContinueNudge, isFailedToolOutput, runMetadataFor } from "../common/openhands-run.js";
import type { FormatAdapter, Sample } from "../types.js";

/**
 * OpenHands LLM-completion logs (`log_completions: true`): `<run>/llm_completions/<instance_id>/<model>-<unix-ts>.json`,
 * one file per LLM call, each `{messages, response, args, kwargs{tools}, timestamp, cost}` where `messages` is the
 * whole prompt of that call (OpenAI chat format with `tool_calls` / `role: tool`) and `response` the raw completion.
 *
 * One trace per run (one instance's folder), not per call: every call repeats the conversation so far, so the
 * calls of one folder are prefixes of the last one. The latest call file (by the timestamp in its name) is read as
 * the trace — its prompt plus its response is the whole conversation — and the earlier call files of the folder are
 * listed as supporting files. The SWE-bench verdict comes from the run's `output.swebench_eval.md` (or the
 * per-instance log), the model from the run's `metadata.json` (`llm_config.model`), else from `response.model`.
 * When the conversation used up the run's `max_iterations` without `finish`, a `termination` step tagged
 * `step-limit` ends the trace (see `capStepFromCallCount`).
 */

export const OPENHANDS_COMPLETIONS_ID = "openhands-llm-completions";

type Obj = Record<string, unknown>;

function isCompletionLog(v: unknown): v is Obj {
  return isObj(v) && Array.isArray(v.messages) && isObj(v.response) && Array.isArray(v.response.choices) && "kwargs" in v && "timestamp" in v;
}

/** The call's unix timestamp from a file name like `litellm_proxy__claude-3-5-sonnet-20241022-1733339462.430701.json`. */
const callTime = (name: string) => Number(name.match(/-(\d{9,}(?:\.\d+)?)\.json$/i)?.[1] ?? Number.NaN);

/** Latest call file per folder; every call file of a folder asks, so the listing is kept per folder version. */
const latestByFolder = new Map<string, { version: number; latest: string | undefined }>();

/** The latest call file of the folder holding `path` (by timestamp in the name, then by name). */
function latestCallFile(path: string): string | undefined {
  const dir = dirname(path);
  let version: number;
  let names: string[];
  try {
    version = statSync(dir).mtimeMs;
    const hit = latestByFolder.get(dir);
    if (hit && hit.version === version) return hit.latest;
    names = readdirSync(dir).filter((n) => n.toLowerCase().endsWith(".json") && !n.startsWith("."));
  } catch {
    return undefined;
  }
  const latest = names
    .sort((a, b) => {
      const ta = callTime(a);
      const tb = callTime(b);
      if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb;
      return a < b ? -1 : a > b ? 1 : 0;
    })
    .at(-1);
  if (latestByFolder.size > 256) latestByFolder.clear();
  latestByFolder.set(dir, { version, latest });
  return latest;
}

const isLatestCall = (s: Sample) => latestCallFile(s.path) === basename(s.path);

function usageOf(response: Obj): Usage | undefined {
  const u = isObj(response.usage) ? response.usage : undefined;
  if (!u) return undefined;
  const prompt = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  return compact({ input: num(u.prompt_tokens), output: num(u.completion_tokens), cachedInput: num(prompt.cached_tokens) ?? num(u.cache_read_input_tokens) });
}

export const openhandsCompletions: FormatAdapter = {
  id: OPENHANDS_COMPLETIONS_ID,
  title: "OpenHands LLM-completion logs (llm_completions/<instance>/*.json, latest call per instance)",
  detect: (s) => s.kind === "json" && isCompletionLog(s.records[0]) && isLatestCall(s),
  // asked before detection: an earlier call is also a valid chat conversation that openai-chat would take
  supportsBeforeDetect(s) {
    if (s.kind === "json" && isCompletionLog(s.records[0]) && !isLatestCall(s))
      return `earlier LLM call of ${basename(dirname(s.path))}; its conversation is repeated in the folder's latest call, which is read as the trace`;
    return undefined;
  },
  async *read(file, ctx) {
    const doc = await file.document();
    if (!isCompletionLog(doc)) {
      ctx.report({ level: "error", message: "not an OpenHands completion log: expected {messages:[…], response:{choices}, kwargs, timestamp}", skipped: "trace" });
      return;
    }
    const instanceId = basename(dirname(file.path));
    const run = await runMetadataFor(file.path, 2, ctx);
    const agent = run?.agentClass ?? "agent";
    const response = doc.response as Obj;
    const answer = arr(response.choices).find(isObj);
    const answerMessage = answer && isObj(answer.message) ? answer.message : undefined;

    const steps: StepDraft[] = chatMessagesToSteps(arr(doc.messages), { pointer: "/messages", assistantAgent: agent });
    const responseModelRaw = str(response.model);
    if (answerMessage) {
      const answerSteps = chatMessagesToSteps([{ ...answerMessage, role: "assistant" }], { assistantAgent: agent });
      const usage = usageOf(response);
      answerSteps.forEach((s, i) => {
        s.ref = { pointer: "/response/choices/0/message" };
        s.model = normalizeModel(responseModelRaw);
        if (i === answerSteps.length - 1 && usage) s.usage = usage;
      });
      steps.push(...answerSteps);
    } else ctx.report({ level: "warning", message: `${instanceId}: the response has no message; the trace ends with the prompt` });

    let users = 0;
    for (const s of steps) {
      if (s.role === "user" && s.kind === "message" && ++users > 1 && isContinueNudge(s.text)) s.tags = [...(s.tags ?? []), "harness-retry"];
      // OpenHands' finish tool ends the run (AgentFinishAction), as in the event histories
      if (s.kind === "tool_call" && s.tool?.name === "finish") s.kind = "termination";
      // the tool message is plain text here: the exit code and editor errors are only in its wording
      if (s.kind === "tool_result" && s.tool) {
        const exitCode = exitCodeFromOutput(s.text);
        if (exitCode !== undefined) s.tool.exitCode = exitCode;
        const isError = isFailedToolOutput(exitCode, s.text);
        if (isError) s.tool.isError = isError;
      }
    }

    // the log has no error field: a cap shows only as max_iterations actions without finish
    const cap = capStepFromCallCount(arr(doc.messages), response, run?.maxIterations, { pointer: "/response" });
    if (cap) steps.push(cap);

    const modelRaw = run?.modelRaw ?? responseModelRaw;
    const model = normalizeModel(modelRaw);
    const sidecars: string[] = [];
    if (run) sidecars.push(run.path);
    const found = await evalVerdictFor(file.path, instanceId, 3, ctx);
    if (found) sidecars.push(found.file);
    const firstUser = steps.find((s) => s.role === "user" && s.kind === "message")?.text;
    const calls = (() => {
      try {
        return readdirSync(dirname(file.path)).filter((n) => n.toLowerCase().endsWith(".json")).length;
      } catch {
        return undefined;
      }
    })();
    try {
      yield buildTrace(
        {
          id: instanceId,
          source: compact({ file: file.path, format: OPENHANDS_COMPLETIONS_ID, index: 0, sidecars: sidecars.length ? sidecars : undefined }),
          task: compact({ id: instanceId, text: firstUser?.match(/<pr_description>\s*([\s\S]*?)\s*<\/pr_description>/)?.[1] ?? firstUser, benchmark: run?.dataset }),
          model,
          framework: "openhands",
          outcome: found ? { success: found.verdict.resolved, metric: "swe-bench:resolved", raw: { status: found.verdict.status } } : undefined,
          metadata: compact({
            agentClass: run?.agentClass,
            modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined,
            modelFrom: run?.modelRaw ? "metadata.json" : responseModelRaw ? "response.model" : undefined,
            responseModel: responseModelRaw,
            llmCallFiles: calls,
            lastCallCost: num(doc.cost),
            lastCallTimestamp: num(doc.timestamp),
            finishReason: str(answer?.finish_reason),
            tools: arr(isObj(doc.kwargs) ? doc.kwargs.tools : undefined)
              .map((t) => (isObj(t) && isObj(t.function) ? str(t.function.name) : undefined))
              .filter((n): n is string => n !== undefined),
          }),
        },
        steps,
      );
    } catch (e) {
      ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    }
  },
};
