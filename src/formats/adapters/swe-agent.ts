import { basename, dirname } from "node:path";
import { parse as parseYaml } from "yaml";
import { buildTrace, compact, type OutcomeInput, type StepDraft } from "../../trace/index.js";
import { arr, contentText, findUp, isObj, maybeJson, normalizeModel, num, str } from "../common/index.js";
import { parseJsonLines, readSidecar } from "../common/sidecar-cache.js";
import { stepLimitStep } from "../common/step-limit.js";
import { hasPatch } from "../common/swebench.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";

/**
 * SWE-agent `.traj` files (corpus/swe-agent/MANIFEST.md), both generations:
 * - v0.x: `trajectory[]{action, observation, response, state, thought, execution_time?}` and `history[]` (chat
 *   messages `{role, content, agent, thought?, action?, is_demo?}`); the model is in the run's `args.yaml`.
 * - v1.x: the same plus `message_type`, `tool_calls`, `tool_call_ids` on history messages, `query`/`extra_info` on
 *   trajectory steps, and `replay_config` (object or JSON string) with `agent.model.name`.
 *
 * `history` and `trajectory` carry the same turns twice. One copy is kept per turn, the richest:
 * - from `trajectory`: the thought, the action, the raw observation (history processors may elide old observations
 *   in `history`, and the last observation, e.g. the submitted patch, is only in `trajectory`), `execution_time`;
 * - from `history`: what only it has — the system prompt, demonstrations, the task message, function-call ids and
 *   names (v1), and the observation as the model saw it (raw output plus the open-file/cwd footer), used as the
 *   tool_result's `text` while `tool.output` keeps the raw observation.
 * `response` (= thought + the action block) and `query` (= the prompt, i.e. history up to that step) are mirrors and
 * are not turned into steps.
 *
 * Failures SWE-agent reports only in words get `tool.isError`: the edit linter's rejection (the edit was not
 * applied) and the file viewer's "No file open" refusal. A run whose `info.exit_status` names the cost limit
 * (`exit_cost`, `submitted (exit_cost)` after autosubmission; SWE-agent's per-instance call limit exits the same way)
 * ends with a `termination` step tagged `step-limit`. Other exits (`exit_context`, `exit_format`,
 * `exit_total_execution_time`, …) are not step or cost caps and get no such step.
 */

export const SWE_AGENT_ID = "swe-agent";

type Obj = Record<string, unknown>;

function isTrajDocument(v: unknown): v is Obj {
  if (!isObj(v) || !Array.isArray(v.trajectory) || !isObj(v.info)) return false;
  if (!Array.isArray(v.history) && typeof v.environment !== "string") return false;
  const first = v.trajectory[0];
  if (first === undefined) return Array.isArray(v.history);
  return isObj(first) && "action" in first && ("observation" in first || "response" in first || "thought" in first);
}

/** SWE-agent v0 run configuration: top-level `agent:` (with `model: model_name:`) and `environment:` sections. */
const isArgsYaml = (s: Sample) =>
  s.kind === "text" && /\.ya?ml$/.test(s.name) && /^agent:\s*$/m.test(s.head) && /^environment:\s*$/m.test(s.head) && /^\s+model_name:\s*\S/m.test(s.head);

/** SWE-bench predictions (`all_preds.jsonl`): `{model_name_or_path, instance_id, model_patch}` per line. */
const isPredictions = (s: Sample) =>
  (s.kind === "jsonl" || s.kind === "json") &&
  s.records.length > 0 &&
  s.records.every((r) => isObj(r) && typeof r.instance_id === "string" && "model_patch" in r && "model_name_or_path" in r);

/**
 * Tool outputs that mean the command did nothing: the edit linter's rejection ("Your proposed edit has introduced new
 * syntax error(s). … Your changes have NOT been applied", v0 and v1 wordings share this opening) and the windowed
 * file tools' "No file open. Use the `open` command first.".
 */
const REFUSED_OUTPUT = /^\s*(Your proposed edit has introduced new syntax error\(s\)|No file open\. Use the `open` command first\.)/;

/** Exit statuses of a run that hit SWE-agent's cost (or per-instance call) limit. */
const COST_LIMIT_EXIT = /\bexit_cost\b/;

/** The command's first word (`edit 4:4\n…` → `edit`). */
const commandName = (action: string) => action.trim().split(/\s+/)[0] || undefined;

/** v0 prompts wrap the issue as `ISSUE:\n…\n\nINSTRUCTIONS:`. */
function issueText(prompt: string): string | undefined {
  return prompt.match(/ISSUE:\n([\s\S]*?)\n\s*\nINSTRUCTIONS:/)?.[1]?.trim() || undefined;
}

interface Turn {
  step?: Obj;
  stepIndex?: number;
  /** The history's assistant message of this turn. */
  said?: Obj;
  saidIndex?: number;
  /** The history's observation message that follows it. */
  seen?: Obj;
  seenIndex?: number;
}

const isDemo = (m: Obj) => m.is_demo === true || m.message_type === "demonstration";
const sameAction = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.trim() === b.trim();

/**
 * Pairs history assistant messages with trajectory steps. When both have the same number of turns they pair by
 * position; otherwise by equal action text, in order. Returns the pairing and what stayed unpaired.
 */
function pairTurns(history: Obj[], steps: Obj[]): { stepOfSaid: Map<number, number>; unpairedSteps: number; unpairedSaid: number } {
  const said = history.map((m, i) => (m.role === "assistant" && !isDemo(m) ? i : -1)).filter((i) => i >= 0);
  const stepOfSaid = new Map<number, number>();
  if (said.length === steps.length) {
    said.forEach((h, k) => stepOfSaid.set(h, k));
    return { stepOfSaid, unpairedSteps: 0, unpairedSaid: 0 };
  }
  let k = 0;
  for (const h of said) {
    const found = steps.findIndex((s, j) => j >= k && sameAction(s.action, history[h]!.action));
    if (found < 0) continue;
    stepOfSaid.set(h, found);
    k = found + 1;
  }
  return { stepOfSaid, unpairedSteps: steps.length - stepOfSaid.size, unpairedSaid: said.length - stepOfSaid.size };
}

function turnSteps(turn: Turn, defaultAgent: string): StepDraft[] {
  const { step, said, seen } = turn;
  const out: StepDraft[] = [];
  const agent = str(said?.agent) ?? defaultAgent;
  const pointer = turn.stepIndex !== undefined ? `/trajectory/${turn.stepIndex}` : `/history/${turn.saidIndex}`;
  const thought = str(step?.thought) ?? str(said?.thought) ?? (step ? str(step.response) : contentText(said?.content));
  if (thought && thought.trim() !== "") out.push({ agent, role: "assistant", kind: "reasoning", text: thought, ref: { pointer } });

  const action = str(step?.action) ?? str(said?.action);
  const call = arr(said?.tool_calls).find(isObj);
  const fn = call && isObj(call.function) ? call.function : undefined;
  const name = str(fn?.name) ?? (action !== undefined ? commandName(action) : undefined) ?? "unknown";
  const callId = str(call?.id) ?? `turn-${turn.stepIndex ?? `h${turn.saidIndex}`}`;
  const raw = step ? str(step.observation) : undefined;
  const seenText = seen ? contentText(seen.content) : undefined;
  if (action !== undefined && action.trim() !== "") {
    out.push({
      agent,
      role: "assistant",
      kind: "tool_call",
      text: action.trim(),
      tool: compact({ name, callId, args: fn ? maybeJson(fn.arguments) : action.trim() }),
      ref: { pointer },
    });
  } else if (raw === undefined && seenText === undefined) {
    return out;
  }
  if (raw !== undefined || seenText !== undefined) {
    const seconds = num(step?.execution_time);
    const resultPointer = raw !== undefined ? `${pointer}/observation` : `/history/${turn.seenIndex}`;
    const isCall = action !== undefined && action.trim() !== "";
    out.push(
      compact({
        agent: "environment",
        role: "tool" as const,
        kind: isCall ? ("tool_result" as const) : ("message" as const),
        text: seenText ?? raw,
        tool: isCall
          ? compact({
              name,
              callId,
              output: raw ?? seenText,
              isError: REFUSED_OUTPUT.test(raw ?? seenText ?? "") ? true : undefined,
              durationMs: seconds !== undefined && seconds >= 0 ? seconds * 1000 : undefined,
            })
          : undefined,
        ref: { pointer: resultPointer },
      }),
    );
  }
  return out;
}

async function modelFromArgs(path: string, ctx: ReadContext): Promise<string | undefined> {
  try {
    const args = await readSidecar(path, "yaml", (t) => parseYaml(t) as unknown);
    const model = isObj(args) && isObj(args.agent) && isObj(args.agent.model) ? args.agent.model : undefined;
    return str(model?.model_name) ?? str(model?.name);
  } catch (e) {
    ctx.report({ file: path, level: "warning", message: `args.yaml does not parse, no model taken from it: ${(e as Error).message}` });
    return undefined;
  }
}

async function predictionFor(path: string, instanceId: string, ctx: ReadContext): Promise<Obj | undefined> {
  try {
    const rows = await readSidecar(path, "jsonl", parseJsonLines);
    return rows.find((r): r is Obj => isObj(r) && r.instance_id === instanceId);
  } catch (e) {
    ctx.report({ file: path, level: "warning", message: `predictions file not read: ${(e as Error).message}` });
    return undefined;
  }
}

export const sweAgent: FormatAdapter = {
  id: SWE_AGENT_ID,
  title: "SWE-agent .traj (v0.x and v1.x)",
  detect: (s) => s.kind === "json" && isTrajDocument(s.records[0]),
  supports(s) {
    if (isArgsYaml(s)) return "SWE-agent run configuration (args.yaml: agent.model.model_name)";
    if (isPredictions(s)) return "SWE-bench predictions (all_preds.jsonl: instance_id, model_patch)";
    return undefined;
  },
  async *read(file, ctx) {
    const doc = await file.document();
    if (!isTrajDocument(doc)) {
      ctx.report({ level: "error", message: "not a SWE-agent trajectory: expected {trajectory:[{action, observation, thought…}], history:[…], info:{…}}", skipped: "trace" });
      return;
    }
    const instanceId = basename(file.path).replace(/\.traj$/i, "");
    const info = doc.info as Obj;
    const replay = isObj(doc.replay_config) ? doc.replay_config : isObj(maybeJson(doc.replay_config)) ? (maybeJson(doc.replay_config) as Obj) : undefined;

    const history: Obj[] = [];
    arr(doc.history).forEach((m, i) => {
      if (isObj(m)) history.push(m);
      else ctx.report({ level: "error", message: `/history/${i} is not a message object; skipped`, skipped: "record" });
    });
    const trajSteps: Obj[] = [];
    const trajIndexOf: number[] = [];
    arr(doc.trajectory).forEach((s, i) => {
      if (isObj(s)) {
        trajSteps.push(s);
        trajIndexOf.push(i);
      } else ctx.report({ level: "error", message: `/trajectory/${i} is not a step object; skipped`, skipped: "record" });
    });
    // history positions shift when a bad message was skipped; keep the original position for pointers
    const historyIndexOf: number[] = [];
    arr(doc.history).forEach((m, i) => isObj(m) && historyIndexOf.push(i));

    const { stepOfSaid, unpairedSteps, unpairedSaid } = pairTurns(history, trajSteps);
    if (unpairedSteps > 0 || unpairedSaid > 0)
      ctx.report({
        level: "warning",
        message: `${instanceId}: history and trajectory disagree (${unpairedSaid} history turn(s) and ${unpairedSteps} trajectory step(s) without a counterpart); each is kept once, from the side that has it`,
      });

    const defaultAgent = str(history.find((m) => m.role === "assistant")?.agent) ?? str(history[0]?.agent) ?? "primary";
    const steps: StepDraft[] = [];
    const emitted = new Set<number>();
    let taskText: string | undefined;
    const emitStepsBefore = (limit: number) => {
      for (let k = 0; k < Math.min(limit, trajSteps.length); k++) {
        if (emitted.has(k)) continue;
        emitted.add(k);
        steps.push(...turnSteps({ step: trajSteps[k], stepIndex: trajIndexOf[k] }, defaultAgent));
      }
    };

    for (let i = 0; i < history.length; i++) {
      const m = history[i]!;
      const hi = historyIndexOf[i]!;
      const role = str(m.role) ?? "";
      const text = contentText(m.content);
      if (role === "assistant" && !isDemo(m)) {
        const k = stepOfSaid.get(i);
        if (k !== undefined) emitStepsBefore(k);
        const next = history[i + 1];
        const seen = next && (next.role === "tool" || next.role === "user") && !isDemo(next) ? next : undefined;
        if (k !== undefined) emitted.add(k);
        steps.push(
          ...turnSteps(
            { step: k !== undefined ? trajSteps[k] : undefined, stepIndex: k !== undefined ? trajIndexOf[k] : undefined, said: m, saidIndex: hi, seen, seenIndex: seen ? historyIndexOf[i + 1] : undefined },
            defaultAgent,
          ),
        );
        if (seen) i++;
        continue;
      }
      const ref = { pointer: `/history/${hi}` };
      if (role === "system") steps.push(compact({ agent: "system", role: "system" as const, kind: "message" as const, text, ref }));
      else if (isDemo(m)) steps.push(compact({ agent: "user", role: "user" as const, kind: "message" as const, text, ref, tags: ["injected-context", "demonstration"] }));
      else if (role === "tool") steps.push(compact({ agent: "environment", role: "tool" as const, kind: "message" as const, text, ref }));
      else {
        if (taskText === undefined && role === "user") taskText = text;
        steps.push(compact({ agent: role === "user" ? "user" : role || "unknown", role: "user" as const, kind: "message" as const, text, ref }));
      }
    }
    emitStepsBefore(trajSteps.length);

    // model: v1 keeps the run config inside the trajectory; v0 in the run folder's args.yaml
    const sidecars: string[] = [];
    const files = { argsYaml: findUp(file.path, "args.yaml", 1), predictions: findUp(file.path, "all_preds.jsonl", 1) };
    let modelRaw = replay && isObj(replay.agent) && isObj(replay.agent.model) ? str(replay.agent.model.name) : undefined;
    let modelFrom = modelRaw ? "replay_config" : undefined;
    if (!modelRaw && files.argsYaml) {
      modelRaw = await modelFromArgs(files.argsYaml, ctx);
      if (modelRaw) {
        modelFrom = "args.yaml";
        sidecars.push(files.argsYaml);
      }
    }
    const model = normalizeModel(modelRaw);

    // outcome: no test verdict in SWE-agent output; only whether a patch was produced
    const prediction = files.predictions ? await predictionFor(files.predictions, instanceId, ctx) : undefined;
    if (prediction && files.predictions) sidecars.push(files.predictions);
    const produced = hasPatch(info.submission) || hasPatch(prediction?.model_patch);
    const exitStatus = str(info.exit_status);
    if (exitStatus !== undefined && COST_LIMIT_EXIT.test(exitStatus)) {
      // SWE-agent writes its own reason as the last step's thought ("Exit due to cost limit"); keep it with the status
      const reason = trajSteps.map((t) => str(t.thought)?.trim()).findLast((t) => t !== undefined && /^Exit due to /.test(t));
      steps.push(stepLimitStep("swe-agent", reason ? `${reason} (exit_status: ${exitStatus})` : `exit_status: ${exitStatus}`, { pointer: "/info/exit_status" }));
    }
    const outcome: OutcomeInput = compact({
      // without a patch an issue cannot be resolved; with one, only a SWE-bench evaluation can tell
      success: produced ? undefined : false,
      metric: "patch-produced",
      raw: compact({
        exitStatus,
        submitted: produced,
        submission: str(info.submission),
        predictionPatch: prediction ? (hasPatch(prediction.model_patch) ? "present" : "null") : undefined,
      }),
    });

    const stats = isObj(info.model_stats) ? info.model_stats : undefined;
    const ps = replay && isObj(replay.problem_statement) ? replay.problem_statement : undefined;
    try {
      yield buildTrace(
        {
          id: instanceId,
          source: compact({ file: file.path, format: SWE_AGENT_ID, index: 0, sidecars: sidecars.length ? sidecars : undefined }),
          task: compact({ id: instanceId, text: str(ps?.text) ?? (taskText ? issueText(taskText) ?? taskText : undefined) }),
          model,
          framework: "swe-agent",
          outcome,
          metadata: compact({
            exitStatus,
            generation: replay || history.some((m) => "message_type" in m) ? "v1" : "v0",
            run: basename(dirname(file.path)),
            environment: str(doc.environment),
            modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined,
            modelFrom,
            modelStats: stats,
            // a replayed run re-executes recorded actions: API calls but no tokens sent to a model
            replayed: stats && num(stats.tokens_sent) === 0 && (num(stats.api_calls) ?? 0) > 0 ? true : undefined,
          }),
        },
        steps,
      );
    } catch (e) {
      ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    }
  },
};
