import { createReadStream, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { buildTrace, compact, type StepDraft } from "../../trace/index.js";
import { arr, contentText, isObj, normalizeModel, num, str } from "../common/index.js";
import type { FormatAdapter, ReadContext } from "../types.js";
import { findRunSidecars, joinGroundTruthByScenario, runDirOf, runFromPath } from "./itbench-files.js";

/**
 * `codex exec --json` event stream (Zero's `traces/stdout.log`): `thread.started`, `turn.*`, `item.*`, `error`
 * (itbench.md §2.2, trace-formats.md §3). Only `item.completed` carries an item's final state. One trace per thread.
 */
const EVENT_TYPE = /^(thread\.(started)|turn\.(started|completed|failed)|item\.(started|updated|completed|plan\.delta)|error|request_user_input)$/;

function isExecEvent(v: unknown): v is Record<string, unknown> & { type: string } {
  if (!isObj(v) || typeof v.type !== "string" || !EVENT_TYPE.test(v.type)) return false;
  if (v.type === "item.started" || v.type === "item.updated" || v.type === "item.completed") return isObj(v.item) && typeof v.item.id === "string";
  return true;
}

/** Items the model produced; a turn with none of them is an empty model turn. */
const MODEL_ITEMS = new Set(["agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list", "plan", "collab_tool_call"]);

const AGENT = "codex";

/** The model of a thread from its rollout (`<run>/sessions/**\/rollout-*-<thread_id>.jsonl`): the stream names none. */
export async function modelFromRollout(runDir: string, threadId: string): Promise<string | undefined> {
  const sessions = join(runDir, "sessions");
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      if (n.endsWith(`${threadId}.jsonl`)) found.push(p);
      else if (depth < 4 && !n.includes(".")) {
        try {
          if (statSync(p).isDirectory()) walk(p, depth + 1);
        } catch {
          /* a dangling link */
        }
      }
    }
  };
  walk(sessions, 0);
  if (!found[0]) return undefined;
  const rl = createInterface({ input: createReadStream(found[0], "utf8"), crlfDelay: Infinity });
  try {
    for await (const line of rl) {
      if (!line.includes('"turn_context"')) continue;
      try {
        const v = JSON.parse(line) as unknown;
        const model = isObj(v) && isObj(v.payload) ? str(v.payload.model) : undefined;
        if (model) return model;
      } catch {
        /* a bad line: keep looking */
      }
    }
  } finally {
    rl.close();
  }
  return undefined;
}

/** `model = "…"` of a Codex config.toml: the active profile's, else the top-level one. */
export function modelFromConfig(text: string): string | undefined {
  const top = text.split(/^\s*\[/m)[0] ?? "";
  const profile = top.match(/^\s*profile\s*=\s*"([^"]+)"/m)?.[1];
  if (profile) {
    const section = text.split(/^\s*\[/m).find((s) => s.startsWith(`profiles.${profile}]`));
    const m = section?.match(/^\s*model\s*=\s*"([^"]+)"/m)?.[1];
    if (m) return m;
  }
  return top.match(/^\s*model\s*=\s*"([^"]+)"/m)?.[1];
}

interface Thread {
  id: string;
  line?: number;
  steps: StepDraft[];
  turns: number;
  failedTurns: number;
  resumed: number;
  ignored: Record<string, number>;
}

function mcpResultText(result: unknown): string | undefined {
  if (!isObj(result)) return typeof result === "string" ? result : undefined;
  const text = contentText(arr(result.content));
  if (text !== undefined && text !== "") return text;
  return result.structured_content !== undefined ? JSON.stringify(result.structured_content) : text;
}

/** Maps one completed item to steps (exported for tests). */
export function itemToSteps(item: Record<string, unknown>, line: number | undefined): StepDraft[] {
  const ref = compact({ line });
  const id = str(item.id);
  const type = str(item.type) ?? "unknown";
  const call = (name: string, args: unknown, text: string, tags?: string[]): StepDraft =>
    compact({ agent: AGENT, role: "assistant" as const, kind: "tool_call" as const, text, tool: compact({ name, callId: id, args }), ref, tags });
  const result = (name: string, output: string, extra: { exitCode?: number; isError?: boolean }): StepDraft =>
    compact({ agent: AGENT, role: "tool" as const, kind: "tool_result" as const, text: output, tool: compact({ name, callId: id, output, ...extra }), ref });
  switch (type) {
    case "agent_message": {
      const text = str(item.text) ?? "";
      return [compact({ agent: AGENT, role: "assistant", kind: "message", text, ref, tags: text.trim() === "" ? ["empty"] : undefined })];
    }
    case "reasoning":
      return [{ agent: AGENT, role: "assistant", kind: "reasoning", text: str(item.text) ?? "", ref }];
    case "plan":
      return [{ agent: AGENT, role: "assistant", kind: "plan", text: str(item.text) ?? "", ref }];
    case "todo_list": {
      const items = arr(item.items).filter(isObj);
      const text = items.map((t) => `[${t.completed === true ? "x" : " "}] ${str(t.text) ?? ""}`).join("\n");
      return [{ agent: AGENT, role: "assistant", kind: "plan", text, tool: compact({ name: "todo_list", callId: id, args: { items } }), ref }];
    }
    case "command_execution": {
      // the same tool the rollout calls `shell`
      const command = str(item.command) ?? "";
      const status = str(item.status);
      const exitCode = num(item.exit_code);
      const isError = (exitCode !== undefined && exitCode !== 0) || status === "failed" || status === "declined";
      return [
        call("shell", { command }, command),
        result("shell", str(item.aggregated_output) ?? "", { exitCode: exitCode !== undefined && Number.isInteger(exitCode) ? exitCode : undefined, isError }),
      ];
    }
    case "mcp_tool_call": {
      const name = `mcp__${str(item.server) ?? "unknown"}__${str(item.tool) ?? "unknown"}`;
      const status = str(item.status);
      const error = isObj(item.error) ? str(item.error.message) : undefined;
      const steps = [call(name, item.arguments, `${name}(${item.arguments !== undefined ? JSON.stringify(item.arguments) : ""})`)];
      const output = error ?? mcpResultText(item.result);
      if (output !== undefined || status === "failed") steps.push(result(name, output ?? "", { isError: error !== undefined || status === "failed" }));
      else steps[0]!.tags = ["no-result-recorded"];
      return steps;
    }
    case "file_change": {
      const changes = arr(item.changes).filter(isObj);
      const status = str(item.status);
      const summary = changes.map((c) => `${str(c.kind) ?? "?"} ${str(c.path) ?? "?"}`).join("\n");
      return [call("file_change", { changes }, summary), result("file_change", status ?? "", { isError: status === "failed" })];
    }
    case "web_search": {
      const query = str(item.query) ?? "";
      return [call("web_search", compact({ query, action: item.action }), query, ["no-result-recorded"])];
    }
    case "collab_tool_call": {
      const name = `collab:${str(item.tool) ?? "unknown"}`;
      const status = str(item.status);
      return [call(name, compact({ prompt: item.prompt, receivers: item.receiver_thread_ids }), str(item.prompt) ?? name), result(name, status ?? "", { isError: status === "failed" })];
    }
    case "error":
      return [{ agent: AGENT, role: "system", kind: "error", text: str(item.message) ?? "error", ref }];
    default:
      return [{ agent: AGENT, role: "system", kind: "event", text: `item ${type}`, ref, tags: ["unknown-item"] }];
  }
}

export const codexExec: FormatAdapter = {
  id: "codex-exec",
  title: "Codex exec --json event stream (ITBench Zero traces/stdout.log)",
  detect(s) {
    if (s.kind !== "jsonl" || s.records.length === 0) return false;
    return s.records.every(isExecEvent) && s.records.some((r) => isObj(r) && /^(thread|turn|item)\./.test(String(r.type)));
  },
  async *read(file, ctx: ReadContext) {
    const threads: Thread[] = [];
    let current: Thread | undefined;
    let turn: { emptyAt?: number; lastModel?: number } | undefined;
    const stem = basename(file.path).replace(/\.(jsonl|log|ndjson)$/i, "");
    const ensureThread = (line?: number): Thread => {
      if (!current) {
        current = { id: stem, line, steps: [], turns: 0, failedTurns: 0, resumed: 0, ignored: {} };
        threads.push(current);
        ctx.report({ line, level: "warning", message: "events before any thread.started: the thread id is unknown, the file name is used" });
      }
      return current;
    };
    for await (const r of file.records()) {
      const ev = r.value;
      if (!isExecEvent(ev)) {
        ctx.report({ line: r.line, level: "warning", message: "not a codex exec event: expected {type: thread.*|turn.*|item.*|error}", skipped: "record" });
        continue;
      }
      const ref = compact({ line: r.line });
      switch (ev.type) {
        case "thread.started": {
          const id = str(ev.thread_id) ?? stem;
          const same = threads.find((t) => t.id === id);
          if (same) {
            // `codex exec resume` continues the same thread
            same.resumed++;
            current = same;
            current.steps.push({ agent: "harness", role: "system", kind: "event", text: `thread resumed (${id})`, ref, tags: ["session-resume"] });
          } else {
            current = { id, line: r.line, steps: [], turns: 0, failedTurns: 0, resumed: 0, ignored: {} };
            threads.push(current);
          }
          break;
        }
        case "turn.started": {
          const t = ensureThread(r.line);
          t.turns++;
          // an empty model turn until an item arrives
          t.steps.push({ agent: AGENT, role: "assistant", kind: "message", text: "", ref, tags: ["empty"] });
          turn = { emptyAt: t.steps.length - 1, lastModel: t.steps.length - 1 };
          break;
        }
        case "item.completed": {
          const t = ensureThread(r.line);
          const item = ev.item as Record<string, unknown>;
          const steps = itemToSteps(item, r.line);
          if (MODEL_ITEMS.has(str(item.type) ?? "") && turn?.emptyAt !== undefined) {
            t.steps.splice(turn.emptyAt, 1);
            turn.emptyAt = undefined;
          }
          t.steps.push(...steps);
          if (MODEL_ITEMS.has(str(item.type) ?? "") && turn) turn.lastModel = t.steps.length - steps.length;
          break;
        }
        case "turn.completed": {
          const t = ensureThread(r.line);
          const u = isObj(ev.usage) ? ev.usage : undefined;
          const target = turn?.lastModel !== undefined ? t.steps[turn.lastModel] : undefined;
          if (u && target) target.usage = compact({ input: num(u.input_tokens), cachedInput: num(u.cached_input_tokens), output: num(u.output_tokens) });
          turn = undefined;
          break;
        }
        case "turn.failed": {
          const t = ensureThread(r.line);
          t.failedTurns++;
          // the failure, not the model, ended this turn: no empty-turn placeholder
          if (turn?.emptyAt !== undefined) t.steps.splice(turn.emptyAt, 1);
          const message = isObj(ev.error) ? str(ev.error.message) : undefined;
          t.steps.push({ agent: "harness", role: "system", kind: "error", text: message ?? "turn failed", ref, tags: ["turn-failed"] });
          turn = undefined;
          break;
        }
        case "error": {
          ensureThread(r.line).steps.push({ agent: "harness", role: "system", kind: "error", text: str(ev.message) ?? "error", ref });
          break;
        }
        default: {
          // item.started / item.updated: intermediate states, superseded by item.completed
          const t = ensureThread(r.line);
          t.ignored[ev.type] = (t.ignored[ev.type] ?? 0) + 1;
        }
      }
    }

    const runDir = runDirOf(file.path) ?? dirname(file.path);
    const run = runFromPath(file.path);
    let configModel: string | undefined;
    try {
      configModel = modelFromConfig(readFileSync(join(runDir, "config.toml"), "utf8"));
    } catch {
      /* no config beside the run */
    }
    const sidecars = findRunSidecars(file.path, { deliverableName: "agent_output.json", incident: run?.incident, groundTruthOption: ctx.options.groundTruth });
    const itbench = run !== undefined || sidecars.deliverable !== undefined || sidecars.groundTruth !== undefined;
    // the scenario's ground truth anywhere in the input when none is near the run
    const joined = itbench ? await joinGroundTruthByScenario(ctx, file.path, { run, sidecars }) : undefined;
    const groundTruth = joined?.groundTruth ?? sidecars.groundTruth;
    for (const [index, t] of threads.entries()) {
      const modelRaw = (await modelFromRollout(runDir, t.id)) ?? configModel;
      const model = normalizeModel(modelRaw);
      const sidecarPaths = [sidecars.deliverable, groundTruth].filter((p): p is string => p !== undefined);
      try {
        yield buildTrace(
          {
            id: t.id,
            source: compact({ file: file.path, format: "codex-exec", index, line: t.line, sidecars: sidecarPaths.length ? sidecarPaths : undefined }),
            task: itbench ? compact({ id: run?.incident, benchmark: "itbench-sre" }) : undefined,
            model,
            framework: "codex",
            agents: [AGENT],
            outcome: sidecarPaths.length ? compact({ deliverable: sidecars.deliverable, groundTruth }) : undefined,
            metadata: compact({
              modelRaw: modelRaw && modelRaw !== model ? modelRaw : undefined,
              turns: t.turns,
              failedTurns: t.failedTurns || undefined,
              resumed: t.resumed || undefined,
              emptyTurns: t.steps.filter((s) => s.kind === "message" && s.role === "assistant" && s.tags?.includes("empty")).length,
              ignoredEvents: Object.keys(t.ignored).length ? t.ignored : undefined,
              itbench: itbench
                ? compact({ incident: run?.incident, trial: run?.trial, scenario: joined?.scenario.id, groundTruthFrom: joined?.groundTruthFrom, groundTruthReason: joined?.reason })
                : undefined,
            }),
          },
          t.steps,
        );
      } catch (e) {
        ctx.report({ line: t.line, level: "error", message: (e as Error).message, skipped: "trace" });
      }
    }
  },
};
