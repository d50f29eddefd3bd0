import { buildTrace, compact, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, asText, bool, contentText, isObj, normalizeModel, num, str } from "../common/index.js";
import { STEP_LIMIT_TAG } from "../common/step-limit.js";
import type { FormatAdapter } from "../types.js";

/**
 * τ²-bench simulation results: one JSON object `{timestamp, info, tasks, simulations}` per run. One trace per
 * simulation. The agent's model is `info.agent_info.llm` (the user simulator's goes to metadata); the outcome is
 * `reward_info.reward` (success = reward 1). Messages: `assistant` (the agent) and `user` (the simulator) may both
 * call tools (`tool_calls[]{id, name, arguments, requestor}`); `tool` messages answer them by `id`. `raw_data` is the
 * provider's copy of the same message: only its `reasoning_content` (grok-3-mini) is not elsewhere, so only that is
 * taken from it.
 */

const isRun = (v: unknown): v is Record<string, unknown> =>
  isObj(v) && isObj(v.info) && Array.isArray(v.simulations) && Array.isArray(v.tasks) && ("agent_info" in v.info || "user_info" in v.info);

function usageOf(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const r = compact({ input: num(u.prompt_tokens), output: num(u.completion_tokens) });
  return Object.keys(r).length ? r : undefined;
}

function taskText(task: Record<string, unknown> | undefined): string | undefined {
  const ins = isObj(task?.user_scenario) ? task.user_scenario.instructions : undefined;
  if (typeof ins === "string") return ins;
  if (!isObj(ins)) return undefined;
  const parts = [
    ["Reason for call", ins.reason_for_call],
    ["Known info", ins.known_info],
    ["Unknown info", ins.unknown_info],
    ["Task instructions", ins.task_instructions],
  ].flatMap(([label, v]) => (str(v) ? [`${label}: ${str(v)!.trim()}`] : []));
  return parts.length ? parts.join("\n\n") : undefined;
}

function messageSteps(messages: unknown[], simIndex: number): StepDraft[] {
  const steps: StepDraft[] = [];
  const toolNames = new Map<string, string>();
  messages.forEach((m, j) => {
    if (!isObj(m)) return;
    const role = str(m.role);
    const ref = compact({ pointer: `/simulations/${simIndex}/messages/${j}`, original: num(m.turn_idx) });
    const time = str(m.timestamp);
    const text = contentText(m.content);
    if (role === "tool") {
      const id = str(m.id);
      const name = (id && toolNames.get(id)) ?? "tool";
      steps.push(compact({ agent: name, role: "tool" as const, kind: "tool_result" as const, text, time, ref, tool: compact({ name, callId: id, output: text, isError: bool(m.error) }) }));
      return;
    }
    // the agent speaks as "assistant", the user simulator as "user"; both are model turns
    const speaker = role === "assistant" ? "assistant" : role === "user" ? "user" : role ?? "unknown";
    const canonicalRole = speaker === "assistant" ? "assistant" : "user";
    const usage = usageOf(m.usage);
    const turn: StepDraft[] = [];
    const raw = isObj(m.raw_data) && isObj(m.raw_data.message) ? m.raw_data.message : undefined;
    const reasoning = str(raw?.reasoning_content);
    if (reasoning) turn.push({ agent: speaker, role: canonicalRole, kind: "reasoning", text: reasoning, time, ref });
    if (text !== undefined && text !== "") turn.push({ agent: speaker, role: canonicalRole, kind: "message", text, time, ref });
    for (const c of arr(m.tool_calls)) {
      if (!isObj(c)) continue;
      const name = str(c.name) ?? "unknown";
      const id = str(c.id);
      if (id) toolNames.set(id, name);
      turn.push({ agent: speaker, role: canonicalRole, kind: "tool_call", text: `${name}(${asText(c.arguments ?? {})})`, time, ref, tool: compact({ name, callId: id, args: c.arguments }) });
    }
    if (turn.length === 0) turn.push({ agent: speaker, role: canonicalRole, kind: "message", text: "", time, ref, tags: ["empty"] });
    // usage belongs to the model call that produced the whole turn: put it on its first step only
    if (usage) turn[0] = { ...turn[0]!, usage };
    steps.push(...turn.map((s) => compact(s)));
  });
  return steps;
}

export const tau2Bench: FormatAdapter = {
  id: "tau2-bench",
  title: "τ²-bench simulation results (JSON)",
  detect: (s) => s.kind === "json" && isRun(s.records[0]),
  async *read(file, ctx) {
    const doc = await file.document();
    if (!isRun(doc)) {
      ctx.report({ level: "error", message: "not a τ²-bench result: expected {info, tasks, simulations}", skipped: "file" });
      return;
    }
    const info = doc.info as Record<string, unknown>;
    const agentInfo = isObj(info.agent_info) ? info.agent_info : {};
    const userInfo = isObj(info.user_info) ? info.user_info : {};
    const env = isObj(info.environment_info) ? info.environment_info : {};
    const llm = str(agentInfo.llm);
    const model = normalizeModel(llm);
    const domain = str(env.domain_name);
    const tasks = new Map<string, Record<string, unknown>>();
    for (const t of doc.tasks as unknown[]) if (isObj(t) && str(t.id) !== undefined) tasks.set(str(t.id)!, t);
    if (!llm) ctx.report({ level: "warning", message: "info.agent_info.llm is missing; traces have no model" });

    const sims = doc.simulations as unknown[];
    for (let i = 0; i < sims.length; i++) {
      const sim = sims[i];
      if (!isObj(sim)) {
        ctx.report({ level: "error", message: `simulations[${i}] is not an object`, skipped: "trace" });
        continue;
      }
      const taskId = str(sim.task_id);
      const task = taskId !== undefined ? tasks.get(taskId) : undefined;
      if (taskId !== undefined && !task) ctx.report({ level: "warning", message: `simulations[${i}]: task ${taskId} is not in tasks[]` });
      const rewardInfo = isObj(sim.reward_info) ? sim.reward_info : undefined;
      const reward = num(rewardInfo?.reward);
      if (reward === undefined) ctx.report({ level: "warning", message: `simulations[${i}]: no reward_info.reward; no outcome` });
      const steps = messageSteps(arr(sim.messages), i);
      const termination = str(sim.termination_reason);
      // max_steps is the orchestrator's step cap; the other reasons (user_stop, agent_stop, too_many_errors, …) are not
      if (termination)
        steps.push(
          compact({
            agent: "system",
            role: "system" as const,
            kind: "termination" as const,
            text: `termination_reason: ${termination}`,
            time: str(sim.end_time),
            tags: termination === "max_steps" ? [STEP_LIMIT_TAG] : undefined,
            ref: { pointer: `/simulations/${i}/termination_reason` },
          }),
        );
      try {
        yield buildTrace(
          compact({
            id: str(sim.id) ?? `${taskId ?? "task"}#${num(sim.trial) ?? i}`,
            source: { file: file.path, format: "tau2-bench", index: i, pointer: `/simulations/${i}` },
            framework: "tau2-bench",
            model,
            task: compact({ id: taskId, text: taskText(task), expected: task?.evaluation_criteria, benchmark: domain ? `tau2-bench/${domain}` : "tau2-bench" }),
            outcome: reward !== undefined ? { success: reward === 1, reward, metric: "tau2 reward", raw: rewardInfo } : undefined,
            metadata: compact({
              modelRaw: llm !== model ? llm : undefined,
              userModel: str(userInfo.llm),
              agentImplementation: str(agentInfo.implementation),
              domain,
              trial: num(sim.trial),
              seed: num(sim.seed),
              terminationReason: termination,
              durationS: num(sim.duration),
              agentCost: num(sim.agent_cost),
              userCost: num(sim.user_cost),
              taskPurpose: isObj(task?.description) ? str(task.description.purpose) : undefined,
              runTimestamp: str(doc.timestamp),
              gitCommit: str(info.git_commit),
            }),
          }),
          steps,
        );
      } catch (e) {
        ctx.report({ level: "error", message: `simulations[${i}]: ${(e as Error).message}`, skipped: "trace" });
      }
    }
  },
};
