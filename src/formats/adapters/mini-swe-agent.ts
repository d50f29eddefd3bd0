import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { buildTrace, compact, type OutcomeInput, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, contentText, findUp, isObj, normalizeModel, num, str } from "../common/index.js";
import { readSidecar } from "../common/sidecar-cache.js";
import { stepLimitStep } from "../common/step-limit.js";
import {
  hasPatch,
  isResultsSummary,
  isSwebenchReport,
  verdictFromReport,
  verdictFromResultsSummary,
  type SwebenchVerdict,
} from "../common/swebench.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";

/**
 * mini-SWE-agent trajectories (`<id>.traj.json`, corpus/mini-swe-agent/MANIFEST.md): `{info{exit_status, submission,
 * model_stats, mini_version, config{model{model_name}}}, messages[{role, content, extra{response}}],
 * trajectory_format: "mini-swe-agent-1", instance_id}`.
 *
 * The agent answers with a THOUGHT and exactly one ```bash block; the harness replies with a `user` message holding
 * `<returncode>N</returncode><output>…</output>`, a timeout notice, a format-error notice (zero or several bash
 * blocks: nothing ran), or — after the submit command — the submitted patch. Mapping:
 * - the THOUGHT text → `reasoning`; the provider's own reasoning (`extra.response.choices[0].message.reasoning`) → a
 *   second `reasoning` step before it; the bash block → `tool_call` named `bash` with `{command}`;
 * - the reply to a call → `tool_result` with `exitCode` from `<returncode>` and the `<output>` body as `tool.output`;
 * - a format-error reply → a `user` message tagged `format-error` (the assistant turn stays a plain message);
 * - a run that ended on `LimitsExceeded` (mini-SWE-agent's step or cost limit, `info.exit_status`) → a final
 *   `termination` step tagged `step-limit`. The harness records that exit as a last `user` message holding the
 *   exception's text, which for this exception is empty; that message becomes the termination step.
 *
 * The outcome is the SWE-bench verdict from `logs/<id>/report.json` (two folders above the trajectory), else from
 * the run's `results_summary.json`.
 */

export const MINI_SWE_AGENT_ID = "mini-swe-agent";

type Obj = Record<string, unknown>;

function isMiniTrajectory(v: unknown): v is Obj {
  if (!isObj(v) || !isObj(v.info) || !Array.isArray(v.messages)) return false;
  return (str(v.trajectory_format) ?? "").startsWith("mini-swe-agent") || typeof v.info.mini_version === "string";
}

/** mini-SWE-agent batch runs write `exit_statuses_<ts>.yaml` with `instances_by_exit_status: {Status: [ids]}`. */
const isExitStatusesYaml = (s: Sample) => s.kind === "text" && /\.ya?ml$/.test(s.name) && /^instances_by_exit_status:\s*$/m.test(s.head);

/** mini-SWE-agent's action regex: a ```bash fenced block. */
const BASH_BLOCK = /```bash\s*\n([\s\S]*?)\n```/g;

const RETURNCODE = /^\s*<returncode>(-?\d+)<\/returncode>/;
const OUTPUT = /<output>\n?([\s\S]*?)\n?<\/output>/;
const TIMEOUT = /^The last command <command>[\s\S]*?<\/command> timed out and has been killed/;
const FORMAT_ERROR = /^Please always provide EXACTLY ONE action/;

function usageOf(response: Obj | undefined): Usage | undefined {
  const u = isObj(response?.usage) ? response.usage : undefined;
  if (!u) return undefined;
  const prompt = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return compact({ input: num(u.prompt_tokens), output: num(u.completion_tokens), cachedInput: num(prompt.cached_tokens), reasoning: num(completion.reasoning_tokens) });
}

function providerReasoning(response: Obj | undefined): string | undefined {
  const choice = arr(response?.choices)[0];
  const message = isObj(choice) && isObj(choice.message) ? choice.message : undefined;
  const text = str(message?.reasoning) ?? str(message?.reasoning_content);
  return text && text.trim() !== "" ? text : undefined;
}

/** Maps the message list; returns the steps and the models the provider reported, most frequent first. */
function messagesToSteps(messages: unknown[], ctx: ReadContext, instanceId: string): { steps: StepDraft[]; models: string[]; task?: string } {
  const steps: StepDraft[] = [];
  const modelCounts = new Map<string, number>();
  let open: { callId: string } | undefined;
  let task: string | undefined;
  messages.forEach((m, i) => {
    const pointer = `/messages/${i}`;
    if (!isObj(m)) {
      ctx.report({ level: "error", pointer, message: `${instanceId}: ${pointer} is not a message object; skipped`, skipped: "step" });
      return;
    }
    // a message without a role string (null, {}, false …) cannot be placed: read as a user turn it would turn the
    // agent's action into an observation; it is dropped and said so
    if (typeof m.role !== "string" || m.role === "") {
      const got = m.role === undefined ? "no role" : `role ${JSON.stringify(m.role)}`;
      ctx.report({ level: "error", pointer, message: `${instanceId}: ${pointer} has ${got}, not system/user/assistant; message skipped`, skipped: "step" });
      return;
    }
    const role = m.role;
    const text = contentText(m.content) ?? "";
    if (role === "system") {
      steps.push({ agent: "system", role: "system", kind: "message", text, ref: { pointer } });
      return;
    }
    if (role === "assistant") {
      const response = isObj(m.extra) && isObj(m.extra.response) ? m.extra.response : undefined;
      const rawModel = str(response?.model);
      if (rawModel) modelCounts.set(rawModel, (modelCounts.get(rawModel) ?? 0) + 1);
      const model = normalizeModel(rawModel);
      const usage = usageOf(response);
      const hidden = providerReasoning(response);
      if (hidden) steps.push(compact({ agent: "mini-swe-agent", role: "assistant" as const, kind: "reasoning" as const, text: hidden, model, ref: { pointer: `${pointer}/extra/response/choices/0/message/reasoning` } }));
      const blocks = [...text.matchAll(BASH_BLOCK)];
      if (blocks.length !== 1) {
        // the harness rejects the turn: nothing runs, the next user message is a format error
        steps.push(compact({ agent: "mini-swe-agent", role: "assistant" as const, kind: "message" as const, text, model, usage, ref: { pointer }, tags: text.trim() === "" ? ["empty"] : undefined }));
        open = undefined;
        return;
      }
      const command = blocks[0]![1]!;
      const thought = text.replace(blocks[0]![0], "").trim();
      if (thought) steps.push(compact({ agent: "mini-swe-agent", role: "assistant" as const, kind: "reasoning" as const, text: thought, model, ref: { pointer } }));
      const callId = `msg-${i}`;
      steps.push(compact({ agent: "mini-swe-agent", role: "assistant" as const, kind: "tool_call" as const, text: command, tool: { name: "bash", callId, args: { command } }, model, usage, ref: { pointer } }));
      open = { callId };
      return;
    }
    // user: the task, then observations of the previous call, or harness notices
    if (task === undefined) {
      task = text;
      steps.push({ agent: "user", role: "user", kind: "message", text, ref: { pointer } });
      return;
    }
    if (open && !FORMAT_ERROR.test(text)) {
      const code = text.match(RETURNCODE)?.[1];
      const timedOut = TIMEOUT.test(text);
      steps.push(
        compact({
          agent: "environment",
          role: "tool" as const,
          kind: "tool_result" as const,
          text,
          tool: compact({ name: "bash", callId: open.callId, output: text.match(OUTPUT)?.[1] ?? text, exitCode: code !== undefined ? Number(code) : undefined, isError: timedOut ? true : undefined }),
          tags: timedOut ? ["timeout"] : undefined,
          ref: { pointer },
        }),
      );
      open = undefined;
      return;
    }
    open = undefined;
    steps.push(compact({ agent: "user", role: "user" as const, kind: "message" as const, text, ref: { pointer }, tags: FORMAT_ERROR.test(text) ? ["format-error"] : undefined }));
  });
  const models = [...modelCounts.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  return { steps, models, task };
}

async function readJsonSidecar(path: string, ctx: ReadContext): Promise<unknown> {
  try {
    return await readSidecar(path, "json", (t) => JSON.parse(t) as unknown);
  } catch (e) {
    ctx.report({ file: path, level: "warning", message: `supporting file not read: ${(e as Error).message}` });
    return undefined;
  }
}

/** The run's `exit_statuses_*.yaml` files in the trajectory folder or the one above it. */
function exitStatusFiles(trajectoryPath: string): string[] {
  const out: string[] = [];
  for (const dir of [dirname(trajectoryPath), dirname(dirname(trajectoryPath))]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) if (/^exit_statuses_.*\.ya?ml$/.test(name)) out.push(join(dir, name));
  }
  return out;
}

async function runExitStatus(trajectoryPath: string, instanceId: string, ctx: ReadContext): Promise<{ status: string; file: string } | undefined> {
  for (const file of exitStatusFiles(trajectoryPath)) {
    try {
      const doc = await readSidecar(file, "yaml", (t) => parseYaml(t) as unknown);
      const byStatus = isObj(doc) && isObj(doc.instances_by_exit_status) ? doc.instances_by_exit_status : {};
      for (const [status, ids] of Object.entries(byStatus)) if (arr(ids).includes(instanceId)) return { status, file };
    } catch (e) {
      ctx.report({ file, level: "warning", message: `exit-status file not read: ${(e as Error).message}` });
    }
  }
  return undefined;
}

/** mini-SWE-agent's exception for its step or cost limit (`0 < step_limit <= n_calls or 0 < cost_limit <= cost`). */
const LIMITS_EXCEEDED = "LimitsExceeded";

/**
 * The final `step-limit` termination step of a run that exited on `LimitsExceeded`, or undefined. The harness adds
 * the exception's text (empty for this exception) as a last `user` message; that empty message is taken out of
 * `steps` and its pointer kept on the termination step, so it is not read as a silent user turn.
 */
function limitStep(exitStatus: string | undefined, info: Obj, config: Obj, steps: StepDraft[], messageCount: number): StepDraft | undefined {
  if (exitStatus !== LIMITS_EXCEEDED) return undefined;
  const lastPointer = `/messages/${messageCount - 1}`;
  const last = steps.at(-1);
  let ref: StepDraft["ref"] = { pointer: "/info/exit_status" };
  if (last && last.role === "user" && last.kind === "message" && (last.text ?? "").trim() === "" && last.ref?.pointer === lastPointer) {
    steps.pop();
    ref = { pointer: lastPointer };
  }
  const agentConfig = isObj(config.agent) ? config.agent : {};
  const stats = isObj(info.model_stats) ? info.model_stats : {};
  const facts = [
    num(agentConfig.step_limit) !== undefined ? `step_limit ${num(agentConfig.step_limit)}` : undefined,
    num(agentConfig.cost_limit) !== undefined ? `cost_limit ${num(agentConfig.cost_limit)}` : undefined,
    num(stats.api_calls) !== undefined ? `${num(stats.api_calls)} model calls` : undefined,
    num(stats.instance_cost) !== undefined ? `cost ${num(stats.instance_cost)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return stepLimitStep("mini-swe-agent", facts.length ? `${LIMITS_EXCEEDED} (${facts.join(", ")})` : LIMITS_EXCEEDED, ref);
}

export const miniSweAgent: FormatAdapter = {
  id: MINI_SWE_AGENT_ID,
  title: "mini-SWE-agent trajectory (.traj.json)",
  detect: (s) => s.kind === "json" && isMiniTrajectory(s.records[0]),
  supports(s) {
    if (s.kind === "json" && isSwebenchReport(s.records[0])) return "SWE-bench evaluation report (report.json: resolved, tests_status)";
    if (s.kind === "json" && isResultsSummary(s.records[0])) return "SWE-bench run summary (results_summary.json: instances[].resolved)";
    if (isExitStatusesYaml(s)) return "mini-SWE-agent exit statuses (instances_by_exit_status)";
    return undefined;
  },
  async *read(file, ctx) {
    const doc = await file.document();
    if (!isMiniTrajectory(doc)) {
      ctx.report({ level: "error", message: "not a mini-SWE-agent trajectory: expected {info:{…}, messages:[…], trajectory_format}", skipped: "trace" });
      return;
    }
    const info = doc.info as Obj;
    const instanceId = str(doc.instance_id) ?? basename(file.path).replace(/\.traj\.json$/i, "").replace(/\.json$/i, "");
    const { steps, models, task } = messagesToSteps(arr(doc.messages), ctx, instanceId);

    const config = isObj(info.config) ? info.config : {};
    const configModel = isObj(config.model) ? str(config.model.model_name) : undefined;
    const modelRaw = configModel ?? models[0];
    const model = normalizeModel(modelRaw);

    // outcome: the instance's harness report, else the run summary
    const sidecars: string[] = [];
    let verdict: SwebenchVerdict | undefined;
    const reportPath = findUp(file.path, join("logs", instanceId, "report.json"), 3);
    if (reportPath) {
      verdict = verdictFromReport(await readJsonSidecar(reportPath, ctx), instanceId);
      if (verdict) sidecars.push(reportPath);
      else ctx.report({ file: reportPath, level: "warning", message: `no SWE-bench verdict for ${instanceId} in this report` });
    }
    const summaryPath = findUp(file.path, "results_summary.json", 3);
    if (summaryPath) {
      const fromSummary = verdictFromResultsSummary(await readJsonSidecar(summaryPath, ctx), instanceId);
      if (fromSummary && !verdict) {
        verdict = fromSummary;
        sidecars.push(summaryPath);
      } else if (fromSummary && verdict && fromSummary.resolved !== verdict.resolved)
        ctx.report({ file: summaryPath, level: "warning", message: `${instanceId}: resolved=${fromSummary.resolved} here but ${verdict.resolved} in ${reportPath}; the instance report is used` });
    }
    const runStatus = await runExitStatus(file.path, instanceId, ctx);
    if (runStatus) sidecars.push(runStatus.file);

    const exitStatus = str(info.exit_status);
    const limit = limitStep(exitStatus ?? runStatus?.status, info, config, steps, arr(doc.messages).length);
    if (limit) steps.push(limit);
    const outcome: OutcomeInput = compact({
      success: verdict?.resolved,
      metric: verdict ? "swe-bench:resolved" : undefined,
      raw: compact({ exitStatus, status: verdict?.status, submitted: hasPatch(info.submission), ...(verdict?.details ?? {}) }),
    });
    const pr = task?.match(/<pr_description>\s*([\s\S]*?)\s*<\/pr_description>/)?.[1];
    const prText = pr?.replace(/^Consider the following PR description:\s*/, "");
    try {
      yield buildTrace(
        {
          id: instanceId,
          source: compact({ file: file.path, format: MINI_SWE_AGENT_ID, index: 0, sidecars: sidecars.length ? sidecars : undefined }),
          task: compact({ id: instanceId, text: prText ?? task, benchmark: verdict ? "swe-bench" : undefined }),
          model,
          framework: "mini-swe-agent",
          outcome,
          metadata: compact({
            exitStatus,
            runExitStatus: runStatus?.status,
            submission: str(info.submission),
            modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined,
            modelStats: isObj(info.model_stats) ? info.model_stats : undefined,
            miniVersion: str(info.mini_version),
            trajectoryFormat: str(doc.trajectory_format),
            agentType: str(config.agent_type),
          }),
        },
        steps,
      );
    } catch (e) {
      ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    }
  },
};
