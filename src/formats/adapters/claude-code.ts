import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildTrace, compact, type StepDraft, type Usage } from "../../trace/index.js";
import { arr, asText, contentText, isObj, normalizeModel, num, str } from "../common/index.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";

/**
 * Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`), one session per file. Lines:
 *
 *   `user`       message.content is the prompt (string) or blocks: `tool_result{tool_use_id, content, is_error}`, `text`
 *   `assistant`  one line per content block of an API message (`thinking` / `text` / `tool_use{id, name, input}`);
 *                lines of one message share `message.id` and repeat its `usage`
 *   `system`     `local_command`, `stop_hook_summary`, `turn_duration`, `api_error`, `compact_boundary` …
 *   `progress`, `file-history-snapshot`, `queue-operation`, `summary`  bookkeeping: counted in metadata, not steps
 *
 * Sessions stored by the Entire CLI come with `metadata.json` (checkpoint facts, files touched, token usage) and
 * `prompt.txt` (the user's prompts) beside them: the metadata is joined when its session_id matches, the prompt
 * becomes `task.text`.
 */

/** Lines that carry no sessionId of their own. */
const SESSIONLESS = new Set(["file-history-snapshot", "summary"]);

/** Every transcript line has a `type`; all but snapshots and summaries carry the sessionId (newer CLI versions add
 *  line types, so the type itself is not checked here). */
const isSessionLine = (v: unknown): boolean =>
  isObj(v) && typeof v.type === "string" && (typeof v.sessionId === "string" || SESSIONLESS.has(v.type));

const isEntireMetadata = (v: unknown): v is Record<string, unknown> =>
  isObj(v) && typeof v.session_id === "string" && typeof v.checkpoint_id === "string" && ("agent" in v || "token_usage" in v);

/** Anthropic usage → canonical: `input` counts every prompt token, cached ones included. */
function usageOf(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const input = num(u.input_tokens);
  const created = num(u.cache_creation_input_tokens) ?? 0;
  const read = num(u.cache_read_input_tokens) ?? 0;
  const r = compact({ input: input !== undefined ? input + created + read : undefined, output: num(u.output_tokens), cachedInput: read || undefined });
  return Object.keys(r).length ? r : undefined;
}

/** Command echoes of the CLI (`/fast`, `/sandbox` …) the user typed, not prompts to the model. */
const LOCAL_COMMAND = /^\s*<(?:command-name|local-command-stdout|local-command-stderr|local-command-caveat)>/;

function readSidecar(path: string, ctx: ReadContext): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    ctx.report({ file: path, level: "warning", message: `supporting file unreadable, not joined: ${(e as Error).message}` });
    return undefined;
  }
}

export const claudeCode: FormatAdapter = {
  id: "claude-code",
  title: "Claude Code session transcript (JSONL)",
  detect: (s) =>
    s.kind === "jsonl" &&
    s.records.length > 0 &&
    s.records.every(isSessionLine) &&
    s.records.some((r) => isObj(r) && typeof r.sessionId === "string" && typeof r.uuid === "string" && (r.type === "user" || r.type === "assistant" || r.type === "system" || r.type === "progress")),
  supports(s: Sample) {
    if (s.kind === "json" && isEntireMetadata(s.records[0])) return "Entire checkpoint metadata of a Claude Code session";
    if (s.kind === "text" && s.name === "prompt.txt" && existsSync(join(dirname(s.path), "full.jsonl"))) return "the user prompts of the Claude Code session beside it";
    return undefined;
  },
  async *read(file, ctx) {
    const steps: StepDraft[] = [];
    const toolNames = new Map<string, string>();
    const models = new Map<string, number>();
    const bookkeeping: Record<string, number> = {};
    const seen = new Set<string>();
    let duplicates = 0;
    let sessionId: string | undefined;
    const otherSessions = new Set<string>();
    let version: string | undefined;
    let cwd: string | undefined;
    let gitBranch: string | undefined;
    let turnMs = 0;
    const summaries: string[] = [];
    /** message.id → index of its first step and the latest usage seen for it (streamed lines repeat and grow it). */
    const messageUsage = new Map<string, { step: number; usage?: Usage }>();
    const count = (k: string) => (bookkeeping[k] = (bookkeeping[k] ?? 0) + 1);

    for await (const r of file.records()) {
      const o = r.value;
      if (!isObj(o) || typeof o.type !== "string") {
        ctx.report({ line: r.line, level: "error", message: "not a Claude Code transcript line (no `type`)", skipped: "line" });
        continue;
      }
      const uuid = str(o.uuid);
      if (uuid) {
        // resumed sessions re-write earlier lines: keep each once
        if (seen.has(uuid)) {
          duplicates++;
          continue;
        }
        seen.add(uuid);
      }
      const sid = str(o.sessionId);
      if (sid) {
        sessionId ??= sid;
        if (sid !== sessionId) otherSessions.add(sid);
      }
      version ??= str(o.version);
      cwd ??= str(o.cwd);
      gitBranch ??= str(o.gitBranch);
      const time = str(o.timestamp);
      const ref = { line: r.line };
      const sidechain = o.isSidechain === true;
      const tags = (extra: string[] = []) => {
        const t = [...(sidechain ? ["sidechain"] : []), ...extra];
        return t.length ? t : undefined;
      };
      const msg = isObj(o.message) ? o.message : undefined;

      switch (o.type) {
        case "progress":
        case "file-history-snapshot":
        case "queue-operation":
          count(o.type === "progress" && isObj(o.data) && str(o.data.type) ? `progress:${str(o.data.type)}` : o.type);
          break;
        case "summary":
          if (str(o.summary)) summaries.push(str(o.summary)!);
          count("summary");
          break;
        case "system": {
          const subtype = str(o.subtype) ?? "system";
          if (subtype === "turn_duration") {
            turnMs += num(o.durationMs) ?? 0;
            count("system:turn_duration");
          } else if (subtype === "stop_hook_summary" && arr(o.hookErrors).length === 0 && o.preventedContinuation !== true) {
            count("system:stop_hook_summary");
          } else {
            const kind = /error/i.test(subtype) || o.level === "error" ? "error" : "event";
            const text = str(o.content) ?? `[${subtype}] ${asText(o.hookErrors ?? o.error ?? "") ?? ""}`.trim();
            steps.push(compact({ agent: "system", role: "system" as const, kind: kind as "error" | "event", text, time, ref, tags: tags(subtype === "local_command" ? ["local-command"] : []) }));
          }
          break;
        }
        case "user": {
          const agent = sidechain ? "subagent-prompt" : "user";
          const content = msg?.content;
          if (typeof content === "string") {
            const extra = o.isMeta === true ? ["injected-context"] : LOCAL_COMMAND.test(content) ? ["local-command"] : [];
            steps.push(compact({ agent, role: "user" as const, kind: "message" as const, text: content, time, ref, tags: tags(extra) }));
            break;
          }
          for (const b of arr(content)) {
            if (isObj(b) && b.type === "tool_result") {
              const id = str(b.tool_use_id);
              const name = (id && toolNames.get(id)) ?? "tool";
              const output = contentText(b.content) ?? "";
              steps.push(compact({ agent: name, role: "tool" as const, kind: "tool_result" as const, text: output, time, ref, tags: tags(), tool: compact({ name, callId: id, output, isError: b.is_error === true ? true : b.is_error === false ? false : undefined }) }));
            } else {
              const text = contentText([b]) ?? "";
              steps.push(compact({ agent, role: "user" as const, kind: "message" as const, text, time, ref, tags: tags(o.isMeta === true ? ["injected-context"] : []) }));
            }
          }
          break;
        }
        case "assistant": {
          const model = str(msg?.model);
          const synthetic = model === "<synthetic>";
          if (model && !synthetic) models.set(model, (models.get(model) ?? 0) + 1);
          const agent = sidechain ? "subagent" : "claude-code";
          const first = steps.length;
          for (const b of arr(msg?.content)) {
            if (!isObj(b)) continue;
            const base = { agent, role: "assistant" as const, time, ref, model: synthetic ? undefined : normalizeModel(model) };
            if (b.type === "thinking" || b.type === "redacted_thinking") {
              steps.push(compact({ ...base, kind: "reasoning" as const, text: str(b.thinking) ?? "[redacted thinking]", tags: tags() }));
            } else if (b.type === "tool_use") {
              const name = str(b.name) ?? "unknown";
              const id = str(b.id);
              if (id) toolNames.set(id, name);
              steps.push(compact({ ...base, kind: "tool_call" as const, text: `${name}(${asText(b.input ?? {})})`, tool: compact({ name, callId: id, args: b.input }), tags: tags() }));
            } else {
              const text = contentText([b]) ?? "";
              const apiError = o.isApiErrorMessage === true || synthetic;
              steps.push(compact({ ...base, kind: apiError ? ("error" as const) : ("message" as const), text, tags: tags(text.trim() === "" ? ["empty"] : []) }));
            }
          }
          if (steps.length === first) steps.push(compact({ agent, role: "assistant" as const, kind: "message" as const, text: "", time, ref, tags: tags(["empty"]) }));
          const id = str(msg?.id);
          const usage = usageOf(msg?.usage);
          if (id) {
            const entry = messageUsage.get(id) ?? { step: first };
            if (usage) entry.usage = usage;
            messageUsage.set(id, entry);
          } else if (usage) steps[first] = { ...steps[first]!, usage };
          break;
        }
        default:
          ctx.report({ line: r.line, level: "warning", message: `unknown transcript line type "${o.type}", kept as an event` });
          steps.push({ agent: "system", role: "system", kind: "event", text: asText(o) ?? "", time, ref });
      }
    }
    // usage once per API message, on the first of its steps
    for (const { step, usage } of messageUsage.values()) if (usage && steps[step]) steps[step] = { ...steps[step]!, usage };

    if (!sessionId) {
      ctx.report({ level: "error", message: "no sessionId in any line: not a Claude Code session", skipped: "trace" });
      return;
    }
    if (otherSessions.size) ctx.report({ level: "warning", message: `lines of other sessions mixed in: ${[...otherSessions].join(", ")}` });

    const dir = dirname(file.path);
    const sidecars: string[] = [];
    const metaPath = join(dir, "metadata.json");
    let entire: Record<string, unknown> | undefined;
    if (existsSync(metaPath)) {
      const m = readSidecar(metaPath, ctx);
      if (isEntireMetadata(m) && m.session_id === sessionId) {
        entire = m;
        sidecars.push(metaPath);
      } else if (isEntireMetadata(m)) ctx.report({ file: metaPath, level: "notice", message: `session_id ${String(m.session_id)} is not this transcript's ${sessionId}; not joined` });
    }
    const promptPath = join(dir, "prompt.txt");
    let prompt: string | undefined;
    if (existsSync(promptPath)) {
      prompt = readFileSync(promptPath, "utf8").trim() || undefined;
      sidecars.push(promptPath);
    }
    const firstPrompt = steps.find((s) => s.role === "user" && s.kind === "message" && !s.tags?.length)?.text;
    const ranked = [...models.entries()].sort((a, b) => b[1] - a[1]);
    const modelRaw = ranked[0]?.[0];
    const model = normalizeModel(modelRaw);

    try {
      yield buildTrace(
        compact({
          id: sessionId,
          source: compact({ file: file.path, format: "claude-code", index: 0, sidecars: sidecars.length ? sidecars : undefined }),
          framework: "claude-code",
          model,
          task: prompt ?? firstPrompt ? { text: prompt ?? firstPrompt } : undefined,
          metadata: compact({
            modelRaw: modelRaw !== model ? modelRaw : undefined,
            models: ranked.length > 1 ? ranked.map(([k]) => k) : undefined,
            claudeCodeVersion: version,
            cwd,
            gitBranch,
            turnDurationMs: turnMs || undefined,
            summaries: summaries.length ? summaries : undefined,
            bookkeepingLines: Object.keys(bookkeeping).length ? bookkeeping : undefined,
            duplicateLines: duplicates || undefined,
            toolErrors: steps.filter((s) => s.kind === "tool_result" && s.tool?.isError).length,
            entire: entire
              ? compact({
                  checkpointId: str(entire.checkpoint_id),
                  cliVersion: str(entire.cli_version),
                  agent: str(entire.agent),
                  branch: str(entire.branch),
                  createdAt: str(entire.created_at),
                  filesTouched: entire.files_touched,
                  tokenUsage: entire.token_usage,
                  initialAttribution: entire.initial_attribution,
                })
              : undefined,
          }),
        }),
        steps,
      );
    } catch (e) {
      ctx.report({ level: "error", message: (e as Error).message, skipped: "trace" });
    }
  },
};
