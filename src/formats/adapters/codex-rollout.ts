import { basename } from "node:path";
import { buildTrace, compact, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, contentText, isObj, maybeJson, normalizeModel, num, str } from "../common/index.js";
import type { FormatAdapter, ReadContext } from "../types.js";
import { sanitizeValue } from "../io/sanitize.js";
import { describeItbenchFile, findRunSidecars, joinGroundTruthByScenario, readInstructions, runFromPath } from "./itbench-files.js";

/**
 * Codex CLI rollout JSONL (`sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`), the trajectory of the ITBench "Zero"
 * SRE agent: one `{timestamp, type, payload}` per line, one trace per file (itbench.md §2.1, trace-formats.md §2).
 */
const ROLLOUT_LINE_TYPES = new Set(["session_meta", "turn_context", "response_item", "event_msg", "compacted"]);

interface RolloutLine {
  time: string;
  type: string;
  payload: Record<string, unknown>;
  line?: number;
}

const isRolloutLine = (v: unknown): v is { timestamp: string; type: string; payload: unknown } =>
  isObj(v) &&
  typeof v.timestamp === "string" &&
  typeof v.type === "string" &&
  ROLLOUT_LINE_TYPES.has(v.type) &&
  "payload" in v &&
  Object.keys(v).every((k) => k === "timestamp" || k === "type" || k === "payload");

/** The first line can exceed the 64 KiB sample (long instructions): then the head's prefix still identifies it. */
const ROLLOUT_HEAD = /^\s*\{"timestamp":"[^"]+","type":"(session_meta|turn_context|response_item|event_msg|compacted)","payload":\{/;

/** Blocks Codex injects as user messages before the task. */
const INJECTED = /^\s*(# AGENTS\.md instructions|<environment_context>|<user_instructions>|<INSTRUCTIONS>|<permissions instructions>|<developer_instructions>)/;
/** Zero's retry prompt: "I don't see agent_output.json file. Please resume the investigation …". */
const HARNESS_RETRY = /(agent_output|agent_remediation)\.json|please resume|resume the investigation/i;
/** Tool outputs that are Codex's own refusals rather than the tool's result. */
const CODEX_TOOL_ERROR = /^(failed to parse function arguments|unsupported call|unsupported custom tool call|apply_patch verification failed|error: )/i;
/** Newer Codex shell output: a text header instead of the JSON envelope. */
const SHELL_TEXT_OUTPUT = /^Exit code: (-?\d+)\nWall time: ([\d.]+) seconds\n(?:Total output lines: \d+\n)?Output:\n([\s\S]*)$/;

interface ParsedToolOutput {
  output: string;
  exitCode?: number;
  durationMs?: number;
  isError?: boolean;
}

/** Shell/apply_patch `{output, metadata{exit_code, duration_seconds}}`, MCP `[{type, text}]`, or plain text. */
export function parseToolOutput(raw: unknown): ParsedToolOutput {
  let value: unknown = raw;
  if (typeof raw === "string") {
    const t = raw.trim();
    if (t.startsWith("{") || t.startsWith("[")) {
      try {
        value = sanitizeValue(JSON.parse(t)).value;
      } catch {
        value = raw;
      }
    }
  }
  if (isObj(value) && "output" in value && isObj(value.metadata)) {
    const exitCode = num(value.metadata.exit_code);
    const seconds = num(value.metadata.duration_seconds);
    return compact({
      output: str(value.output) ?? contentText(value.output) ?? "",
      exitCode: exitCode !== undefined && Number.isInteger(exitCode) ? exitCode : undefined,
      durationMs: seconds !== undefined && seconds >= 0 ? Math.round(seconds * 1000) : undefined,
      isError: exitCode !== undefined ? exitCode !== 0 : undefined,
    });
  }
  if (Array.isArray(value) && value.length > 0 && value.every((p) => isObj(p) && typeof p.type === "string")) {
    return { output: contentText(value) ?? "" };
  }
  // {content, success} (older function-call output payloads) and MCP {content, isError}
  if (isObj(value) && ("content" in value || "success" in value)) {
    const ok = typeof value.success === "boolean" ? value.success : typeof value.isError === "boolean" ? !value.isError : undefined;
    return compact({ output: contentText(value.content) ?? "", isError: ok === undefined ? undefined : !ok });
  }
  const text = typeof raw === "string" ? raw : contentText(raw) ?? "";
  const m = text.match(SHELL_TEXT_OUTPUT);
  if (m) {
    const exitCode = Number(m[1]);
    return { output: m[3]!, exitCode, durationMs: Math.round(Number(m[2]) * 1000), isError: exitCode !== 0 };
  }
  return compact({ output: text, isError: CODEX_TOOL_ERROR.test(text) ? true : undefined });
}

/** Arguments are a JSON string; a malformed one (truncated by the model) stays a string and is flagged. */
function parseArguments(raw: unknown): { args: unknown; invalid: boolean } {
  if (typeof raw !== "string") return { args: raw, invalid: false };
  try {
    return { args: sanitizeValue(JSON.parse(raw)).value, invalid: false };
  } catch {
    return { args: raw, invalid: raw.trim() !== "" };
  }
}

function renderPlan(args: unknown): string {
  if (!isObj(args)) return typeof args === "string" ? args : "";
  const lines = arr(args.plan).map((p) => (isObj(p) ? `[${str(p.status) ?? "?"}] ${str(p.step) ?? ""}` : String(p)));
  const explanation = str(args.explanation);
  return [explanation, ...lines].filter((l) => l !== undefined && l !== "").join("\n");
}

const messageText = (payload: Record<string, unknown>): string => contentText(payload.content) ?? "";

const reasoningParts = (payload: Record<string, unknown>): string[] =>
  [...arr(payload.summary), ...arr(payload.content)]
    .map((p) => (isObj(p) ? str(p.text) : typeof p === "string" ? p : undefined))
    .filter((t): t is string => t !== undefined && t !== "");

const reasoningText = (payload: Record<string, unknown>): string => reasoningParts(payload).join("\n");

/** `last_token_usage` of a token_count event; undefined when it carries no counts (LiteLLM chat often sends zeros). */
function usageOf(info: Record<string, unknown>): Usage | undefined {
  const last = isObj(info.last_token_usage) ? info.last_token_usage : isObj(info.total_token_usage) ? info.total_token_usage : undefined;
  if (!last) return undefined;
  const u = compact({
    input: num(last.input_tokens),
    output: num(last.output_tokens),
    cachedInput: num(last.cached_input_tokens),
    reasoning: num(last.reasoning_output_tokens),
  });
  return (u.input ?? 0) + (u.output ?? 0) > 0 ? u : undefined;
}

const AGENT = "codex";

/** Assembles the steps of one rollout file (lines in file order). */
function rolloutToSteps(lines: RolloutLine[]) {
  const steps: (StepDraft | null)[] = [];
  const stepModel = new Map<number, string>();
  const modelCounts = new Map<string, number>();
  const counts = { harnessRetries: 0, emptyTurns: 0, encryptedReasoning: 0, invalidArguments: 0 };
  const otherEvents: Record<string, number> = {};
  /** Lines that should have been steps but could not be placed (reported by the adapter, counted as skipped steps). */
  const dropped: { line?: number; message: string }[] = [];
  const callNames = new Map<string, string>();
  let taskText: string | undefined;
  let taskSeen = false;
  let currentModel: string | undefined;
  /** Placeholder of the current model call until it produces something. */
  let pendingEmpty: number | undefined;
  let lastModelStep: number | undefined;
  let meta: Record<string, unknown> | undefined;
  let instructions: string | undefined;
  let effort: string | undefined;
  let tokenInfo: { total?: number; contextWindow?: number } = {};
  const hasTopLevelCompaction = lines.some((l) => l.type === "compacted");

  // Codex writes user/assistant text twice (response_item and event_msg); keep the event only when its mirror is missing.
  const mirrors = new Map<string, number>();
  const mirrorKey = (role: string, text: string) => `${role}\u0000${text.trim()}`;
  for (const l of lines) {
    if (l.type !== "response_item") continue;
    const p = l.payload;
    // agent_reasoning events mirror one summary part each
    const keys =
      p.type === "message" ? [mirrorKey(str(p.role) ?? "", messageText(p))] : p.type === "reasoning" ? reasoningParts(p).map((t) => mirrorKey("reasoning", t)) : [];
    for (const key of keys) mirrors.set(key, (mirrors.get(key) ?? 0) + 1);
  }
  const hasMirror = (role: string, text: string) => {
    const key = mirrorKey(role, text);
    const n = mirrors.get(key) ?? 0;
    if (n <= 0) return false;
    mirrors.set(key, n - 1);
    return true;
  };

  const push = (s: StepDraft): number => {
    steps.push(compact(s));
    return steps.length - 1;
  };
  /** A step the model produced: it replaces the empty-turn placeholder of its call. */
  const pushModel = (s: StepDraft): number => {
    if (pendingEmpty !== undefined) {
      const placeholder = steps[pendingEmpty];
      if (placeholder?.usage && !s.usage) s.usage = placeholder.usage;
      steps[pendingEmpty] = null;
      pendingEmpty = undefined;
    }
    const i = push(s);
    if (currentModel) stepModel.set(i, currentModel);
    lastModelStep = i;
    return i;
  };
  const closeTurn = () => {
    pendingEmpty = undefined;
  };

  const userStep = (text: string, time: string, ref: { line?: number }) => {
    if (!taskSeen && INJECTED.test(text)) {
      push({ agent: "system", role: "system", kind: "message", text, time, ref, tags: ["injected-context"] });
      return;
    }
    closeTurn();
    if (!taskSeen) {
      taskSeen = true;
      taskText = text;
      push({ agent: "user", role: "user", kind: "message", text, time, ref, tags: ["task"] });
      return;
    }
    // in an exec session every later user message comes from the harness; interactively only the retry prompt does
    const exec = str(meta?.originator) === "codex_exec" || str(meta?.source) === "exec";
    if (exec || HARNESS_RETRY.test(text)) {
      counts.harnessRetries++;
      push({ agent: "harness", role: "user", kind: "message", text, time, ref, tags: ["harness-retry"] });
    } else push({ agent: "user", role: "user", kind: "message", text, time, ref });
  };

  const toolCall = (name: string, callId: string | undefined, rawArgs: unknown, time: string, ref: { line?: number }, extraTags: string[] = [], freeform = false) => {
    // custom tools take free text (an apply_patch envelope), function tools a JSON string
    const { args, invalid } = freeform ? { args: maybeJson(rawArgs), invalid: false } : parseArguments(rawArgs);
    if (invalid) counts.invalidArguments++;
    if (callId) callNames.set(callId, name);
    const tags = [...extraTags, ...(invalid ? ["invalid-arguments"] : [])];
    const argText = typeof rawArgs === "string" ? rawArgs : JSON.stringify(rawArgs ?? {});
    if (name === "update_plan") {
      pushModel({ agent: AGENT, role: "assistant", kind: "plan", text: renderPlan(args), tool: compact({ name, callId, args }), time, ref, tags: tags.length ? tags : undefined });
    } else {
      pushModel({ agent: AGENT, role: "assistant", kind: "tool_call", text: `${name}(${argText})`, tool: compact({ name, callId, args }), time, ref, tags: tags.length ? tags : undefined });
    }
  };

  const toolResult = (callId: string | undefined, raw: unknown, time: string, ref: { line?: number }) => {
    const name = (callId && callNames.get(callId)) ?? "unknown";
    const r = parseToolOutput(raw);
    push({
      agent: AGENT,
      role: "tool",
      kind: "tool_result",
      text: r.output,
      tool: compact({ name, callId, output: r.output, exitCode: r.exitCode, isError: r.isError, durationMs: r.durationMs }),
      time,
      ref,
    });
  };

  for (const l of lines) {
    const p = l.payload;
    const time = l.time;
    const ref = compact({ line: l.line });
    // response_item and event_msg say what they are in payload.type: without a string there, the line is no step
    if ((l.type === "response_item" || l.type === "event_msg") && typeof p.type !== "string") {
      dropped.push({ line: l.line, message: `${l.type} with payload.type ${p.type === undefined ? "missing" : JSON.stringify(p.type)}, not a string; step skipped` });
      continue;
    }
    if (l.type === "response_item" && p.type === "message" && typeof p.role !== "string") {
      dropped.push({ line: l.line, message: `message with role ${p.role === undefined ? "missing" : JSON.stringify(p.role)}, not a string; step skipped` });
      continue;
    }
    switch (l.type) {
      case "session_meta": {
        if (!meta) {
          meta = p;
          instructions = str(p.instructions);
        } else {
          push({ agent: "harness", role: "system", kind: "event", text: `session resumed (${str(p.id) ?? "unknown id"})`, time, ref, tags: ["session-resume"] });
        }
        break;
      }
      case "turn_context": {
        const model = str(p.model);
        if (model) {
          modelCounts.set(model, (modelCounts.get(model) ?? 0) + 1);
          currentModel = model;
        }
        effort ??= str(p.effort);
        instructions ??= str(p.user_instructions);
        // one turn_context per model call: until the call produces something it is an empty model turn
        pendingEmpty = push({ agent: AGENT, role: "assistant", kind: "message", text: "", time, ref, tags: ["empty"] });
        if (currentModel) stepModel.set(pendingEmpty, currentModel);
        lastModelStep = pendingEmpty;
        break;
      }
      case "compacted": {
        push({ agent: "harness", role: "system", kind: "event", text: str(p.message) ?? str(p.summary) ?? "context compacted", time, ref, tags: ["compaction"] });
        break;
      }
      case "response_item": {
        const t = str(p.type);
        if (t === "message") {
          const role = str(p.role);
          const text = messageText(p);
          if (role === "user") userStep(text, time, ref);
          else if (role === "assistant") pushModel({ agent: AGENT, role: "assistant", kind: "message", text, time, ref, tags: text.trim() === "" ? ["empty"] : undefined });
          else push({ agent: "system", role: "system", kind: "message", text, time, ref, tags: ["injected-context"] });
        } else if (t === "function_call") {
          toolCall(str(p.name) ?? "unknown", str(p.call_id), p.arguments, time, ref);
        } else if (t === "custom_tool_call") {
          toolCall(str(p.name) ?? "unknown", str(p.call_id), p.input, time, ref, [], true);
        } else if (t === "local_shell_call") {
          toolCall("local_shell", str(p.call_id) ?? str(p.id), p.action ?? {}, time, ref);
        } else if (t === "web_search_call") {
          // the search results are not recorded in the rollout
          toolCall("web_search", str(p.call_id) ?? str(p.id), p.action ?? {}, time, ref, ["no-result-recorded"]);
        } else if (t === "function_call_output" || t === "custom_tool_call_output") {
          toolResult(str(p.call_id), p.output, time, ref);
        } else if (t === "reasoning") {
          const text = reasoningText(p);
          const encrypted = typeof p.encrypted_content === "string" && p.encrypted_content !== "";
          if (encrypted) counts.encryptedReasoning++;
          pushModel({ agent: AGENT, role: "assistant", kind: "reasoning", text, time, ref, tags: encrypted ? ["encrypted"] : undefined });
        } else {
          const key = `response_item/${t ?? "?"}`;
          otherEvents[key] = (otherEvents[key] ?? 0) + 1;
        }
        break;
      }
      case "event_msg": {
        const t = str(p.type);
        if (t === "user_message") {
          const text = str(p.message) ?? "";
          if (!hasMirror("user", text)) userStep(text, time, ref);
        } else if (t === "agent_message") {
          const text = str(p.message) ?? "";
          if (!hasMirror("assistant", text)) pushModel({ agent: AGENT, role: "assistant", kind: "message", text, time, ref });
        } else if (t === "agent_reasoning") {
          const text = str(p.text) ?? "";
          if (!hasMirror("reasoning", text)) pushModel({ agent: AGENT, role: "assistant", kind: "reasoning", text, time, ref });
        } else if (t === "token_count") {
          if (isObj(p.info)) {
            const total = isObj(p.info.total_token_usage) ? num(p.info.total_token_usage.total_tokens) : undefined;
            const contextWindow = num(p.info.model_context_window);
            tokenInfo = { total: total ?? tokenInfo.total, contextWindow: contextWindow ?? tokenInfo.contextWindow };
            const target = lastModelStep !== undefined ? steps[lastModelStep] : undefined;
            if (target) {
              const u = usageOf(p.info);
              if (u) target.usage = u;
              // Codex fills the counter to the window size when the provider reports the context window exceeded
              if (total !== undefined && contextWindow !== undefined && contextWindow > 0 && total >= contextWindow)
                target.tags = [...new Set([...(target.tags ?? []), "context-window-full"])];
            }
          }
        } else if (t === "turn_aborted") {
          closeTurn();
          const reason = str(p.reason) ?? "unknown";
          push({ agent: "harness", role: "system", kind: "termination", text: `turn aborted: ${reason}`, time, ref, tags: ["turn-aborted"] });
        } else if (t === "context_compacted" && !hasTopLevelCompaction) {
          push({ agent: "harness", role: "system", kind: "event", text: "context compacted", time, ref, tags: ["compaction"] });
        } else if (t === "error") {
          push({ agent: "harness", role: "system", kind: "error", text: str(p.message) ?? "error", time, ref });
        } else if (t === "stream_error") {
          push({ agent: "harness", role: "system", kind: "event", text: str(p.message) ?? "stream error", time, ref, tags: ["stream-error"] });
        } else {
          const key = `event_msg/${t ?? "?"}`;
          otherEvents[key] = (otherEvents[key] ?? 0) + 1;
        }
        break;
      }
    }
  }

  const kept: StepDraft[] = [];
  const distinctModels = new Set([...modelCounts.keys()].map((m) => normalizeModel(m)));
  steps.forEach((s, i) => {
    if (!s) return;
    if (s.tags?.includes("empty") && s.kind === "message" && s.role === "assistant") counts.emptyTurns++;
    const m = stepModel.get(i);
    if (m && distinctModels.size > 1) s.model = normalizeModel(m);
    kept.push(s);
  });
  let modelRaw: string | undefined;
  let best = 0;
  for (const [m, n] of modelCounts) if (n > best) [modelRaw, best] = [m, n];
  return { steps: kept, meta, instructions, taskText, modelRaw, modelCounts, effort, counts, otherEvents, tokenInfo, dropped };
}

export const codexRollout: FormatAdapter = {
  id: "codex-rollout",
  title: "Codex CLI rollout JSONL (ITBench Zero SRE agent sessions)",
  detect(s) {
    if (s.kind !== "jsonl") return false;
    if (s.records.length > 0) return s.records.every(isRolloutLine);
    return ROLLOUT_HEAD.test(s.head);
  },
  supports: describeItbenchFile,
  async *read(file, ctx: ReadContext) {
    const lines: RolloutLine[] = [];
    for await (const r of file.records()) {
      if (!isRolloutLine(r.value)) {
        ctx.report({ line: r.line, level: "warning", message: "not a Codex rollout line: expected {timestamp, type, payload} with a known type", skipped: "record" });
        continue;
      }
      if (!isObj(r.value.payload)) {
        ctx.report({ line: r.line, level: "warning", message: `${r.value.type} line without an object payload`, skipped: "record" });
        continue;
      }
      lines.push({ time: r.value.timestamp, type: r.value.type, payload: r.value.payload, line: r.line });
    }
    if (lines.length === 0) return;

    const built = rolloutToSteps(lines);
    const { meta, counts } = built;
    for (const d of built.dropped) ctx.report({ line: d.line, level: "error", message: d.message, skipped: "step" });
    const stem = basename(file.path).replace(/\.jsonl$/i, "");
    const id = str(meta?.id) ?? stem.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)?.[0] ?? stem;
    if (!meta) ctx.report({ level: "warning", message: "no session_meta line: session id, CLI version and instructions are unknown" });

    const run = runFromPath(str(meta?.cwd)) ?? runFromPath(file.path);
    // a task prompt that names its own output (the remediation run) overrides the AGENTS.md instructions
    const fromTask = built.taskText && /write your .{1,60} to:/i.test(built.taskText) ? readInstructions(built.taskText) : undefined;
    const fromInstructions = readInstructions(built.instructions);
    const inst = { ...(fromTask ?? fromInstructions), snapshotDir: fromTask?.snapshotDir ?? fromInstructions.snapshotDir };
    const sidecars = findRunSidecars(file.path, {
      deliverableName: inst.deliverableName,
      incident: run?.incident,
      snapshotDir: inst.snapshotDir,
      groundTruthOption: ctx.options.groundTruth,
    });
    if (sidecars.groundTruthAmbiguous)
      ctx.report({ level: "warning", message: `several ground-truth files near the run and none names incident ${run?.incident ?? "?"}: ${sidecars.groundTruthAmbiguous.map((p) => basename(p)).join(", ")}; none used` });
    const itbench = run !== undefined || sidecars.deliverable !== undefined || sidecars.groundTruth !== undefined || /SRE|ITBench|agent_output\.json/.test(built.instructions ?? "");
    // the scenario's ground truth anywhere in the input when none is near the run (and a notice saying which)
    const joined = itbench ? await joinGroundTruthByScenario(ctx, file.path, { run, snapshotDir: inst.snapshotDir, sidecars }) : undefined;

    const model = normalizeModel(built.modelRaw);
    const metadata: Record<string, unknown> = compact({
      cliVersion: str(meta?.cli_version),
      instructions: built.instructions,
      originator: str(meta?.originator),
      sessionSource: str(meta?.source),
      modelProvider: str(meta?.model_provider),
      cwd: str(meta?.cwd),
      startedAt: str(meta?.timestamp),
      modelRaw: built.modelRaw && built.modelRaw !== model ? built.modelRaw : undefined,
      models: built.modelCounts.size > 1 ? Object.fromEntries(built.modelCounts) : undefined,
      reasoningEffort: built.effort,
      harnessRetries: counts.harnessRetries,
      emptyTurns: counts.emptyTurns,
      invalidToolArguments: counts.invalidArguments || undefined,
      encryptedReasoning: counts.encryptedReasoning || undefined,
      totalTokens: built.tokenInfo.total,
      contextWindow: built.tokenInfo.contextWindow,
      otherEvents: Object.keys(built.otherEvents).length ? built.otherEvents : undefined,
      itbench: itbench
        ? compact({
            incident: run?.incident,
            trial: run?.trial,
            runKind: inst.runKind,
            deliverableName: inst.deliverableName,
            snapshotDir: inst.snapshotDir,
            scenario: joined?.scenario.id,
            scenarioFrom: joined?.scenario.from.length ? joined.scenario.from.join("; ") : undefined,
            groundTruthFrom: joined?.groundTruthFrom,
            groundTruthReason: joined?.reason,
          })
        : undefined,
    });
    const groundTruth = joined?.groundTruth ?? sidecars.groundTruth;
    const sidecarPaths = [sidecars.deliverable, groundTruth].filter((p): p is string => p !== undefined);
    try {
      yield buildTrace(
        {
          id,
          source: compact({ file: file.path, format: "codex-rollout", index: 0, sidecars: sidecarPaths.length ? sidecarPaths : undefined }),
          task: compact({ id: run?.incident, text: built.taskText, benchmark: itbench ? "itbench-sre" : undefined }),
          model,
          framework: "codex",
          agents: [AGENT],
          outcome: sidecarPaths.length ? compact({ deliverable: sidecars.deliverable, groundTruth }) : undefined,
          metadata,
        },
        built.steps,
      );
    } catch (e) {
      ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    }
  },
};
