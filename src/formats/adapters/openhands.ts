import { basename } from "node:path";
import { buildTrace, compact, type OutcomeInput, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, asText, bool, contentText, isObj, maybeJson, normalizeModel, num, str } from "../common/index.js";
import { capStepFromRunError, describeOpenHandsRunFile, evalVerdictFor, exitCodeFromOutput, isContinueNudge, isFailedToolOutput, runMetadataFor, type RunMetadata } from "../common/openhands-run.js";
import { hasPatch } from "../common/swebench.js";
import type { FormatAdapter, ReadContext, SourceFile } from "../types.js";

/**
 * OpenHands / OpenDevin event histories (corpus/openhands/MANIFEST.md, kinds 2–4):
 * - `output.jsonl` of `run_infer`, one instance per line: `instance_id` (or `id`), `instruction`, `instance`,
 *   `metadata{agent_class, llm_config{model} | model_name}`, `history`, `metrics`, `error`, `test_result`.
 *   `history` is either a flat event list (OpenHands ≥ 0.10) or a list of `[action, observation]` pairs (OpenDevin
 *   v0.x, where a missing observation is a `"null"` placeholder).
 * - the issue resolver's `output.jsonl`: `issue`, `git_patch`, `history` (oldest event shape: fields flat on the
 *   event, no `id`/`source`), `success`, `result_explanation`.
 * - replay trajectories (`tests/runtime/trajs/*.json`): a JSON array of events.
 *
 * Event → step: `system` → system message; `message` → user/assistant message by `source`; tool actions (`run`,
 * `run_ipython`, `read`, `edit`, `browse`, `think`, …) → `tool_call` named by the function the model called
 * (`tool_call_metadata.function_name`, else the action), with `args.thought` as a `reasoning` step before it;
 * observations → `tool_result` linked by `tool_call_id`, else by `cause` (the action's event id), else — for the
 * id-less oldest shape — to the last unanswered call; `finish`/`reject` → `termination`; `delegate` → `handoff`;
 * `recall` and its observation → `event` tagged `injected-context`; an `error` observation answering no call →
 * `error`. The same `model_response` rides on every event of one LLM call, so its usage is counted once.
 * A record whose `error` says the controller reached its maximum iteration (or budget) ends with a `termination`
 * step tagged `step-limit` holding that error text.
 */

export const OPENHANDS_ID = "openhands";

type Obj = Record<string, unknown>;

const isEvent = (v: unknown): v is Obj => isObj(v) && (typeof v.action === "string" || typeof v.observation === "string");

/** History items: events, or OpenDevin `[action, observation]` pairs. */
const isHistoryItem = (v: unknown) => isEvent(v) || (Array.isArray(v) && v.length > 0 && v.every(isEvent));

function isEventRecord(v: unknown): v is Obj {
  if (!isObj(v) || !Array.isArray(v.history)) return false;
  if (!("instance_id" in v || "instruction" in v || "instance" in v || "issue" in v)) return false;
  return v.history.length === 0 ? "instruction" in v && "test_result" in v : isHistoryItem(v.history[0]);
}

/** Actions that the runtime does not execute: they never get a tool_result. */
const NON_TOOL_ACTIONS = new Set(["message", "system", "recall", "finish", "reject", "delegate", "change_agent_state", "null", "condensation", "condensation_request", "start"]);
const STATE_OBSERVATIONS = new Set(["agent_state_changed", "condense", "recall"]);
/** Keys of an action's args that describe the event, not the call. */
const NON_ARG_KEYS = new Set(["thought", "action", "is_confirmed", "action_risk", "keep_prompt", "confirmation_state", "security_risk", "hidden", "blocking", "is_static", "impl_source"]);

interface Located {
  event: Obj;
  pointer: string;
}

function flattenHistory(history: unknown[], prefix: string): { events: Located[]; bad: string[] } {
  const events: Located[] = [];
  const bad: string[] = [];
  history.forEach((item, i) => {
    if (Array.isArray(item)) {
      item.forEach((e, j) => (isEvent(e) ? events.push({ event: e, pointer: `${prefix}/${i}/${j}` }) : bad.push(`${prefix}/${i}/${j}`)));
    } else if (isEvent(item)) events.push({ event: item, pointer: `${prefix}/${i}` });
    else bad.push(`${prefix}/${i}`);
  });
  return { events, bad };
}

function usageOf(response: Obj): Usage | undefined {
  const u = isObj(response.usage) ? response.usage : undefined;
  if (!u) return undefined;
  const prompt = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
  return compact({
    input: num(u.prompt_tokens),
    output: num(u.completion_tokens),
    cachedInput: num(prompt.cached_tokens) ?? num(u.cache_read_input_tokens),
    reasoning: num(completion.reasoning_tokens),
  });
}

function callArgs(args: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(args)) if (!NON_ARG_KEYS.has(k)) out[k] = v;
  return out;
}

const nonEmpty = (s: string | undefined) => (s !== undefined && s.trim() !== "" ? s : undefined);

/** The arguments the model actually sent for a tool call (before OpenHands turned them into an action). */
function modelCallArgs(response: Obj | undefined, toolCallId: string | undefined): unknown {
  if (!response || !toolCallId) return undefined;
  for (const choice of arr(response.choices)) {
    const message = isObj(choice) && isObj(choice.message) ? choice.message : undefined;
    for (const call of arr(message?.tool_calls))
      if (isObj(call) && call.id === toolCallId && isObj(call.function)) return maybeJson(call.function.arguments);
  }
  return undefined;
}

function exitCodeOf(e: Obj): number | undefined {
  const extras = isObj(e.extras) ? e.extras : {};
  const meta = isObj(extras.metadata) ? extras.metadata : {};
  const code = num(meta.exit_code) ?? num(extras.exit_code) ?? num(e.exit_code);
  return code !== undefined && Number.isInteger(code) ? code : undefined;
}

interface Mapped {
  steps: StepDraft[];
  /** Provider-reported models of the LLM calls, most frequent first. */
  models: string[];
}

/** Maps one history (already flattened) to canonical steps. */
function eventsToSteps(events: Located[], agentName: string, line: number | undefined): Mapped {
  const steps: StepDraft[] = [];
  const modelCounts = new Map<string, number>();
  const callOfEvent = new Map<number, { callId: string; name: string }>();
  const open = new Map<string, { name: string }>();
  const countedResponses = new Set<string>();
  let userMessages = 0;
  let agentActed = false;

  events.forEach(({ event: e, pointer }, position) => {
    const id = num(e.id);
    const ref = compact({ pointer, line, original: id });
    const time = str(e.timestamp);
    const tcm = isObj(e.tool_call_metadata) ? e.tool_call_metadata : undefined;
    const response = tcm && isObj(tcm.model_response) ? tcm.model_response : undefined;
    const rawModel = str(response?.model);
    const model = normalizeModel(rawModel);
    const responseId = str(response?.id);
    let usage: Usage | undefined;
    if (response && typeof e.action === "string" && !(responseId && countedResponses.has(responseId))) {
      if (rawModel) modelCounts.set(rawModel, (modelCounts.get(rawModel) ?? 0) + 1);
      usage = usageOf(response);
      if (responseId) countedResponses.add(responseId);
    }
    const base = { time, ref };

    if (typeof e.action === "string") {
      const action = e.action;
      // the oldest shape keeps the action's fields flat on the event
      const args = isObj(e.args) ? e.args : e;
      const source = str(e.source) ?? (action === "message" && !agentActed ? "user" : "agent");
      const thought = nonEmpty(str(args.thought));
      const fromUser = source === "user";
      if (!fromUser && action !== "system") agentActed = true;
      const agent = fromUser ? "user" : agentName;
      const role = fromUser ? ("user" as const) : ("assistant" as const);
      const llm = fromUser ? {} : { model, usage };

      if (action === "system") {
        steps.push(compact({ ...base, agent: "system", role: "system" as const, kind: "message" as const, text: str(args.content) ?? str(e.message) }));
        return;
      }
      if (action === "message") {
        const text = str(args.content) ?? str(e.message) ?? contentText(e.content) ?? "";
        if (fromUser) {
          userMessages++;
          steps.push(compact({ ...base, agent, role, kind: "message" as const, text, tags: userMessages > 1 && isContinueNudge(text) ? ["harness-retry"] : undefined }));
        } else {
          if (thought && thought !== text) steps.push(compact({ ...base, agent, role, kind: "reasoning" as const, text: thought, model }));
          steps.push(compact({ ...base, agent, role, kind: "message" as const, text, ...llm, tags: text.trim() === "" ? ["empty"] : undefined }));
        }
        return;
      }
      if (action === "recall") {
        steps.push(compact({ ...base, agent, role, kind: "event" as const, text: str(e.message) ?? `recall ${str(args.recall_type) ?? ""}`.trim(), tags: ["injected-context"] }));
        return;
      }
      const name = str(tcm?.function_name) ?? action;
      const callId = str(tcm?.tool_call_id) ?? (id !== undefined ? `event-${id}` : `event-at-${position}`);
      const argsOut = modelCallArgs(response, str(tcm?.tool_call_id)) ?? callArgs(args);
      const argsObj = isObj(argsOut) ? argsOut : {};
      if (action === "finish" || action === "reject") {
        const text = nonEmpty(str(args.final_thought)) ?? nonEmpty(str(e.message)) ?? thought ?? action;
        if (thought && thought !== text) steps.push(compact({ ...base, agent, role, kind: "reasoning" as const, text: thought, model }));
        steps.push(compact({ ...base, agent, role, kind: "termination" as const, text, tool: { name, callId, args: argsOut }, ...llm }));
        return;
      }
      if (action === "delegate") {
        if (thought) steps.push(compact({ ...base, agent, role, kind: "reasoning" as const, text: thought, model }));
        const target = str(args.agent) ?? "delegate";
        steps.push(compact({ ...base, agent, role, kind: "handoff" as const, text: `delegate to ${target}: ${asText(args.inputs) ?? ""}`, tool: { name, callId, args: argsOut }, ...llm }));
        if (id !== undefined) callOfEvent.set(id, { callId, name });
        open.set(callId, { name });
        return;
      }
      if (NON_TOOL_ACTIONS.has(action)) {
        steps.push(compact({ ...base, agent, role, kind: "event" as const, text: nonEmpty(str(e.message)) ?? action, tags: ["state"] }));
        return;
      }
      // a tool the runtime executes
      const isThink = action === "think";
      if (thought && !isThink) steps.push(compact({ ...base, agent, role, kind: "reasoning" as const, text: thought, model }));
      const text =
        (isThink ? thought : undefined) ??
        nonEmpty(str(e.message)) ??
        // editor calls carry a sub-command and a path (`create /workspace/x.py`); shell calls a command line
        (str(argsObj.path) ? `${str(argsObj.command) ?? name} ${str(argsObj.path)}` : undefined) ??
        nonEmpty(str(argsObj.command)) ??
        nonEmpty(str(argsObj.code)) ??
        `${name}(${JSON.stringify(argsOut)})`;
      steps.push(compact({ ...base, agent, role, kind: "tool_call" as const, text, tool: { name, callId, args: argsOut }, ...llm }));
      if (id !== undefined) callOfEvent.set(id, { callId, name });
      open.set(callId, { name });
      return;
    }

    // an observation
    const observation = str(e.observation) ?? "";
    const content = contentText(e.content) ?? str(e.message);
    // OpenDevin pairs hold a `"null"` observation with no content for actions that have none
    if (observation === "null" && !nonEmpty(content)) return;
    if (STATE_OBSERVATIONS.has(observation)) {
      steps.push(compact({ ...base, agent: "environment", role: "system" as const, kind: "event" as const, text: content ?? observation, tags: observation === "recall" ? ["injected-context"] : ["state"] }));
      return;
    }
    const byToolId = str(tcm?.tool_call_id);
    const cause = num(e.cause);
    let linked: { callId: string; name: string } | undefined;
    if (byToolId && open.has(byToolId)) linked = { callId: byToolId, name: open.get(byToolId)!.name };
    else if (cause !== undefined && callOfEvent.has(cause)) linked = callOfEvent.get(cause);
    else if (!("id" in e) && !("cause" in e) && open.size > 0) {
      // id-less events: an observation answers the last unanswered action
      const last = [...open.entries()].at(-1)!;
      linked = { callId: last[0], name: last[1].name };
    }
    if (linked) open.delete(linked.callId);
    // the extras' exit code first; the marker at the end of the output when an event stream lacks it
    const exitCode = exitCodeOf(e) ?? exitCodeFromOutput(content);
    const isError = e.success === false || observation === "error" || observation === "user_rejected" || isFailedToolOutput(exitCode, content) ? true : undefined;
    if (!linked && observation === "error") {
      steps.push(compact({ ...base, agent: "environment", role: "tool" as const, kind: "error" as const, text: content }));
      return;
    }
    steps.push(
      compact({
        ...base,
        agent: "environment",
        role: "tool" as const,
        kind: "tool_result" as const,
        text: content,
        tool: compact({ name: str(tcm?.function_name) ?? linked?.name ?? observation, callId: linked?.callId, output: content, exitCode, isError }),
      }),
    );
  });
  const models = [...modelCounts.entries()].sort((a, b) => b[1] - a[1]).map(([m]) => m);
  return { steps, models };
}

function recordId(rec: Obj): string | undefined {
  const instance = isObj(rec.instance) ? rec.instance : undefined;
  const issue = isObj(rec.issue) ? rec.issue : undefined;
  const issueId = issue && str(issue.repo) ? `${str(issue.owner) ?? ""}/${str(issue.repo)}#${str(issue.number) ?? ""}` : undefined;
  return str(rec.instance_id) ?? str(rec.id) ?? str(instance?.instance_id) ?? issueId;
}

function taskOf(rec: Obj, benchmark: string | undefined) {
  const instance = isObj(rec.instance) ? rec.instance : undefined;
  const issue = isObj(rec.issue) ? rec.issue : undefined;
  const issueText = issue ? [str(issue.title), str(issue.body)].filter(Boolean).join("\n\n") : undefined;
  return compact({
    id: recordId(rec),
    text: str(instance?.problem_statement) ?? nonEmpty(issueText) ?? str(rec.instruction),
    expected: instance?.answer,
    benchmark,
  });
}

/** Outcome fields of a record: ProntoQA-style `test_result.result`, a SWE-bench `test_result.report`, resolver `success`. */
function recordOutcome(rec: Obj): OutcomeInput | undefined {
  const tr = isObj(rec.test_result) ? rec.test_result : undefined;
  const patch = tr?.git_patch ?? rec.git_patch;
  const raw = compact({ patchProduced: patch !== undefined ? hasPatch(patch) : undefined, explanation: str(rec.result_explanation) });
  const report = tr && isObj(tr.report) ? tr.report : undefined;
  if (typeof report?.resolved === "boolean") return compact({ success: report.resolved, metric: "swe-bench:resolved", raw });
  if (typeof tr?.result === "boolean") return compact({ success: tr.result, metric: "test_result.result", raw });
  const success = bool(rec.success);
  if (success !== undefined) return compact({ success, metric: "resolver:success", raw: compact({ ...raw, commentSuccess: rec.comment_success ?? undefined }) });
  return Object.keys(raw).length ? { raw } : undefined;
}

function metricsSummary(m: unknown): Obj | undefined {
  if (!isObj(m)) return undefined;
  // per-call arrays (costs, latencies, token usages) are already on the steps; keep the totals
  return compact({ accumulatedCost: num(m.accumulated_cost), accumulatedTokenUsage: isObj(m.accumulated_token_usage) ? m.accumulated_token_usage : undefined, calls: arr(m.costs).length || arr(m.response_latencies).length || undefined });
}

async function recordToTrace(file: SourceFile, rec: Obj, index: number, line: number | undefined, run: RunMetadata | undefined, ctx: ReadContext) {
  const meta = isObj(rec.metadata) ? rec.metadata : undefined;
  const llm = meta && isObj(meta.llm_config) ? meta.llm_config : undefined;
  const agentClass = str(meta?.agent_class) ?? run?.agentClass;
  const { events, bad } = flattenHistory(arr(rec.history), "/history");
  for (const p of bad) ctx.report({ line, level: "error", message: `${p} is not an OpenHands event; skipped`, skipped: "record" });
  const { steps, models } = eventsToSteps(events, agentClass ?? "agent", line);
  // a run the controller stopped on its iteration or budget cap: the record's error says so, the history does not
  const cap = capStepFromRunError(rec.error, compact({ pointer: "/error", line }));
  if (cap) steps.push(cap);

  const id = recordId(rec) ?? `${basename(file.path)}:${line ?? index}`;
  let modelRaw = str(llm?.model) ?? str(meta?.model_name);
  let modelFrom = modelRaw ? "metadata" : undefined;
  if (!modelRaw && run?.modelRaw) [modelRaw, modelFrom] = [run.modelRaw, "metadata.json"];
  if (!modelRaw && models[0]) [modelRaw, modelFrom] = [models[0], "model_response"];
  const model = normalizeModel(modelRaw);
  const responseModel = normalizeModel(models[0]);

  const sidecars: string[] = [];
  if (run && modelFrom === "metadata.json") sidecars.push(run.path);
  let outcome = recordOutcome(rec);
  if (outcome?.success === undefined) {
    const found = await evalVerdictFor(file.path, id, 0, ctx);
    if (found) {
      outcome = compact({ success: found.verdict.resolved, metric: "swe-bench:resolved", raw: compact({ ...(outcome?.raw as Obj | undefined), status: found.verdict.status }) });
      sidecars.push(found.file);
    }
  }
  return buildTrace(
    {
      id,
      source: compact({ file: file.path, format: OPENHANDS_ID, index, line, sidecars: sidecars.length ? sidecars : undefined }),
      task: taskOf(rec, str(meta?.dataset) ?? run?.dataset),
      model,
      framework: "openhands",
      outcome,
      metadata: compact({
        agentClass,
        modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined,
        modelFrom,
        responseModel: responseModel && responseModel !== model ? responseModel : undefined,
        error: rec.error ?? undefined,
        maxIterations: meta?.max_iterations,
        metrics: metricsSummary(rec.metrics),
        historyShape: arr(rec.history).some(Array.isArray) ? "action-observation pairs" : "event stream",
      }),
    },
    steps,
  );
}

export const openhands: FormatAdapter = {
  id: OPENHANDS_ID,
  title: "OpenHands / OpenDevin event histories (output.jsonl, resolver output, replay trajectories)",
  detect(s) {
    // a bare event array (replay trajectory): OpenHands events carry `id`, `source` and `message`, unlike other
    // datasets' {action, observation} step lists
    if (s.kind === "json-array") return s.records.length > 0 && s.records.every((e) => isEvent(e) && "id" in e && typeof e.source === "string" && "message" in e);
    return (s.kind === "jsonl" || s.kind === "json") && s.records.length > 0 && isEventRecord(s.records[0]);
  },
  supports: describeOpenHandsRunFile,
  async *read(file, ctx) {
    if (file.sample.kind === "json-array") {
      const events: Located[] = [];
      for await (const r of file.records()) {
        if (isEvent(r.value)) events.push({ event: r.value, pointer: `/${r.index}` });
        else ctx.report({ line: r.line, level: "error", message: `array element ${r.index} is not an OpenHands event (no action/observation); skipped`, skipped: "record" });
      }
      const { steps, models } = eventsToSteps(events, "agent", undefined);
      const modelRaw = models[0];
      const model = normalizeModel(modelRaw);
      const firstUser = steps.find((s) => s.role === "user" && s.kind === "message")?.text;
      try {
        yield buildTrace(
          {
            id: basename(file.path).replace(/\.json$/i, ""),
            source: { file: file.path, format: OPENHANDS_ID, index: 0 },
            task: compact({ text: firstUser }),
            model,
            framework: "openhands",
            metadata: compact({ modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined, modelFrom: modelRaw ? "model_response" : undefined, historyShape: "event array" }),
          },
          steps,
        );
      } catch (e) {
        ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
      }
      return;
    }
    const run = await runMetadataFor(file.path, 0, ctx);
    let index = 0;
    for await (const r of file.records()) {
      const rec = r.value;
      if (!isEventRecord(rec)) {
        ctx.report({ line: r.line, level: "error", message: "not an OpenHands output record: expected {instance_id|id|issue, history:[events], …}", skipped: "trace" });
        continue;
      }
      try {
        yield await recordToTrace(file, rec, index++, r.line, run, ctx);
      } catch (e) {
        ctx.report({ line: r.line, level: "error", message: (e as Error).message, skipped: "trace" });
      }
    }
  },
};
