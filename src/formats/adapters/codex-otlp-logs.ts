import { basename } from "node:path";
import { buildTrace, compact, type StepDraft } from "../../trace/index.js";
import { arr, bool, isObj, maybeJson, normalizeModel, num, str } from "../common/index.js";
import type { FormatAdapter, ReadContext, Sample } from "../types.js";
import { findRunSidecars, joinGroundTruthByScenario, runFromPath } from "./itbench-files.js";

/**
 * Codex's OTLP log export as Zero's local receiver writes it (`traces/traces.jsonl`, itbench.md §2.3): one JSON line
 * per POST, `{timestamp, path: "/v1/logs", content_type, content_length, data: {resource_logs: […]}}` with snake_case
 * keys decoded from protobuf. Also accepts OTLP/JSON camelCase and bare `{resourceLogs}` documents. Codex events are
 * named in `attributes["event.name"]` (`codex.*`) and correlated by `conversation.id`: one trace per conversation.
 * The export carries no assistant text — prompts, API calls, token counts and tool results only.
 */

/** An OTLP AnyValue in any of its encodings (camelCase JSON, snake_case protobuf dicts, plain values). */
export function anyValue(v: unknown): unknown {
  if (!isObj(v)) return v;
  const pick = (a: string, b: string) => (a in v ? v[a] : b in v ? v[b] : undefined);
  const s = pick("stringValue", "string_value");
  if (s !== undefined) return s;
  const i = pick("intValue", "int_value");
  if (i !== undefined) return num(i) ?? i;
  const d = pick("doubleValue", "double_value");
  if (d !== undefined) return num(d) ?? d;
  const b = pick("boolValue", "bool_value");
  if (b !== undefined) return bool(b) ?? b;
  const a = pick("arrayValue", "array_value");
  if (a !== undefined) return arr(isObj(a) ? a.values : a).map(anyValue);
  const kv = pick("kvlistValue", "kvlist_value");
  if (kv !== undefined) return attributes(isObj(kv) ? kv.values : kv);
  const bytes = pick("bytesValue", "bytes_value");
  if (bytes !== undefined) return bytes;
  return v;
}

/** `[{key, value}]` (OTLP) or a plain object → a flat record. */
export function attributes(v: unknown): Record<string, unknown> {
  if (Array.isArray(v)) {
    const out: Record<string, unknown> = {};
    for (const kv of v) if (isObj(kv) && typeof kv.key === "string") out[kv.key] = anyValue(kv.value);
    return out;
  }
  return isObj(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, anyValue(x)])) : {};
}

const pick = (o: Record<string, unknown>, ...keys: string[]): unknown => {
  for (const k of keys) if (k in o && o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
};

/** Nanoseconds since the epoch (decimal string or number) → ISO time; undefined for 0 or garbage. */
function nanosToIso(v: unknown): string | undefined {
  // a number prints in exponent form past 1e21 (and 1e400 is Infinity): only plain digits go to BigInt
  const s = typeof v === "number" && Number.isFinite(v) && v >= 0 ? BigInt(Math.trunc(v)).toString() : typeof v === "string" && /^\d+$/.test(v) ? v : undefined;
  if (!s || /^0+$/.test(s)) return undefined;
  const ms = Number(BigInt(s) / 1_000_000n);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** Trace/span ids as lower-case hex: protobuf-to-dict exporters write bytes as base64. */
function hexId(v: unknown): string | undefined {
  const s = str(v);
  if (!s) return undefined;
  if (/^[0-9a-fA-F]+$/.test(s) && (s.length === 32 || s.length === 16)) return /^0+$/.test(s) ? undefined : s.toLowerCase();
  const hex = Buffer.from(s, "base64").toString("hex");
  return hex === "" || /^0+$/.test(hex) ? undefined : hex;
}

const resourceLogsOf = (v: unknown): unknown[] | undefined => {
  if (!isObj(v)) return undefined;
  const direct = pick(v, "resource_logs", "resourceLogs");
  if (Array.isArray(direct)) return direct;
  const inner = pick(v, "data", "body");
  if (isObj(inner)) {
    const r = pick(inner, "resource_logs", "resourceLogs");
    if (Array.isArray(r)) return r;
  }
  return undefined;
};

/** Zero's receiver envelope: `{timestamp, path, content_type, content_length, …}`. */
const isEnvelope = (v: unknown): v is Record<string, unknown> =>
  isObj(v) && typeof v.path === "string" && v.path.startsWith("/v1/") && "content_type" in v && "content_length" in v;

export interface LogRecord {
  time?: string;
  attrs: Record<string, unknown>;
  body?: string;
  serviceName?: string;
  line?: number;
  order: number;
  traceId?: string;
  spanId?: string;
}

const CONVERSATION_KEYS = ["conversation.id", "conversation_id", "gen_ai.conversation.id", "thread.id", "thread_id"];

const AGENT = "codex";

/** Maps one conversation's records (in time order) to steps; exported for tests. */
export function logRecordsToSteps(records: LogRecord[]) {
  const steps: StepDraft[] = [];
  const modelCounts = new Map<string, number>();
  const otherEvents: Record<string, number> = {};
  let taskText: string | undefined;
  let lastLlm: number | undefined;
  let conversation: Record<string, unknown> | undefined;
  for (const r of records) {
    const a = r.attrs;
    const name = str(a["event.name"]) ?? (r.body && /^codex\.[a-z_]+$/.test(r.body) ? r.body : undefined) ?? "unknown";
    const model = str(a.model) ?? str(a["gen_ai.request.model"]);
    if (model) modelCounts.set(model, (modelCounts.get(model) ?? 0) + 1);
    const time = r.time ?? str(a["event.timestamp"]);
    const ref = compact({ line: r.line });
    const span = r.traceId && r.spanId ? { traceId: r.traceId, spanId: r.spanId } : undefined;
    const base = { time, ref, span };
    switch (name) {
      case "codex.conversation_starts": {
        conversation ??= a;
        const desc = ["model", "provider_name", "reasoning_effort", "approval_policy", "sandbox_policy", "mcp_servers"]
          .map((k) => (a[k] !== undefined && a[k] !== "" ? `${k}=${String(a[k])}` : undefined))
          .filter(Boolean)
          .join(", ");
        steps.push(compact({ agent: "harness", role: "system", kind: "event", text: `conversation starts${desc ? `: ${desc}` : ""}`, tags: ["conversation-start"], ...base }));
        break;
      }
      case "codex.user_prompt": {
        const prompt = str(a.prompt) ?? r.body ?? "";
        const redacted = prompt === "[REDACTED]";
        if (taskText === undefined && !redacted) taskText = prompt;
        steps.push(compact({ agent: "user", role: "user", kind: "message", text: prompt, tags: redacted ? ["redacted"] : undefined, ...base }));
        break;
      }
      case "codex.api_request": {
        const status = num(pick(a, "http.response.status_code", "http.status_code", "status"));
        const error = str(pick(a, "error.message", "error"));
        const attempt = num(a.attempt);
        const duration = num(a.duration_ms);
        steps.push(
          compact({
            agent: AGENT,
            role: "assistant",
            kind: "llm_call",
            text: `API request${attempt !== undefined ? ` attempt ${attempt}` : ""}${status !== undefined ? ` → HTTP ${status}` : ""}${duration !== undefined ? ` in ${duration} ms` : ""}`,
            model: model ? normalizeModel(model) : undefined,
            ...base,
          }),
        );
        lastLlm = steps.length - 1;
        if (error || (status !== undefined && status >= 400))
          steps.push(compact({ agent: "harness", role: "system", kind: "error", text: error ?? `HTTP ${status}`, tags: ["api-error"], ...base }));
        break;
      }
      case "codex.sse_event": {
        const kind = str(a["event.kind"]);
        const error = str(a["error.message"]);
        if (error) {
          steps.push(compact({ agent: "harness", role: "system", kind: "error", text: `${kind ?? "stream"}: ${error}`, tags: ["stream-error"], ...base }));
        } else if (kind === "response.completed" && lastLlm !== undefined) {
          const usage = compact({
            input: num(pick(a, "input_token_count", "input_tokens")),
            output: num(pick(a, "output_token_count", "output_tokens")),
            cachedInput: num(pick(a, "cached_token_count", "cached_input_tokens")),
            reasoning: num(pick(a, "reasoning_token_count", "reasoning_output_tokens")),
          });
          if (Object.keys(usage).length) steps[lastLlm]!.usage = usage;
        } else {
          const key = `codex.sse_event/${kind ?? "?"}`;
          otherEvents[key] = (otherEvents[key] ?? 0) + 1;
        }
        break;
      }
      case "codex.tool_decision": {
        const tool = str(a.tool_name) ?? "tool";
        steps.push(
          compact({ agent: "harness", role: "system", kind: "event", text: `${tool}: ${str(a.decision) ?? "?"} (${str(a.source) ?? "?"})`, tags: ["tool-decision"], ...base }),
        );
        break;
      }
      case "codex.tool_result": {
        const tool = str(a.tool_name) ?? "unknown";
        const callId = str(a.call_id);
        const rawArgs = a.arguments;
        const output = str(a.output) ?? "";
        const success = bool(a.success);
        const duration = num(a.duration_ms);
        steps.push(
          compact({
            agent: AGENT,
            role: "assistant",
            kind: tool === "update_plan" ? "plan" : "tool_call",
            text: `${tool}(${typeof rawArgs === "string" ? rawArgs : JSON.stringify(rawArgs ?? {})})`,
            tool: compact({ name: tool, callId, args: maybeJson(rawArgs) }),
            ...base,
          }),
        );
        steps.push(
          compact({
            agent: AGENT,
            role: "tool",
            kind: "tool_result",
            text: output,
            tool: compact({ name: tool, callId, output, isError: success === undefined ? undefined : !success, durationMs: duration !== undefined && duration >= 0 ? duration : undefined }),
            ...base,
          }),
        );
        break;
      }
      default: {
        otherEvents[name] = (otherEvents[name] ?? 0) + 1;
      }
    }
  }
  let modelRaw: string | undefined;
  let best = 0;
  for (const [m, n] of modelCounts) if (n > best) [modelRaw, best] = [m, n];
  return { steps, modelRaw, taskText, otherEvents, conversation };
}

function looksLikeCodexLogs(s: Sample): boolean {
  const first = s.records[0];
  if (s.records.length === 0) return false;
  if (s.records.every(isEnvelope) && s.records.some((r) => str((r as Record<string, unknown>).path) === "/v1/logs")) return true;
  return resourceLogsOf(first) !== undefined && /codex[._-]/.test(s.head);
}

export const codexOtlpLogs: FormatAdapter = {
  id: "codex-otlp-logs",
  title: "Codex OTLP log export (ITBench Zero traces/traces.jsonl)",
  detect(s) {
    if (s.kind !== "jsonl" && s.kind !== "json") return false;
    return looksLikeCodexLogs(s);
  },
  async *read(file, ctx: ReadContext) {
    const byConversation = new Map<string, LogRecord[]>();
    const skippedPosts: Record<string, number> = {};
    let order = 0;
    let withoutConversation = 0;
    const stem = basename(file.path).replace(/\.(jsonl|json|ndjson)$/i, "");
    for await (const r of file.records()) {
      const v = r.value;
      if (isEnvelope(v) && v.path !== "/v1/logs") {
        skippedPosts[v.path as string] = (skippedPosts[v.path as string] ?? 0) + 1;
        continue;
      }
      const resourceLogs = resourceLogsOf(v);
      if (!resourceLogs) {
        const undecoded = isObj(v) && ("body_hex" in v || "body_hex_truncated" in v || "decode_error" in v || "body_raw" in v || "extracted_strings" in v);
        ctx.report({
          line: r.line,
          level: "warning",
          message: undecoded
            ? `the receiver could not decode this POST (${str((v as Record<string, unknown>).decode_error) ?? str((v as Record<string, unknown>).content_type) ?? "protobuf"}); its log records are lost`
            : "not an OTLP logs export: expected resource_logs / resourceLogs",
          skipped: "record",
        });
        continue;
      }
      for (const rl of resourceLogs) {
        if (!isObj(rl)) continue;
        const resource = attributes(isObj(rl.resource) ? rl.resource.attributes : undefined);
        const serviceName = str(resource["service.name"]);
        for (const sl of arr(pick(rl, "scope_logs", "scopeLogs", "instrumentation_library_logs"))) {
          if (!isObj(sl)) continue;
          for (const lr of arr(pick(sl, "log_records", "logRecords"))) {
            if (!isObj(lr)) continue;
            try {
              addRecord(lr, serviceName, r.line);
            } catch (e) {
              // one bad value loses its log record only, never the file
              ctx.report({ line: r.line, level: "error", message: `log record not read (${(e as Error).message})`, skipped: "step" });
            }
          }
        }
      }
    }
    /** One log record into its conversation. */
    function addRecord(lr: Record<string, unknown>, serviceName: string | undefined, line: number | undefined): void {
      const attrs = attributes(lr.attributes);
      const bodyValue = anyValue(lr.body);
      const record: LogRecord = {
        time: nanosToIso(pick(lr, "time_unix_nano", "timeUnixNano")) ?? nanosToIso(pick(lr, "observed_time_unix_nano", "observedTimeUnixNano")),
        attrs,
        body: typeof bodyValue === "string" ? bodyValue : undefined,
        serviceName,
        line,
        order: order++,
        traceId: hexId(pick(lr, "trace_id", "traceId")),
        spanId: hexId(pick(lr, "span_id", "spanId")),
      };
      let conv: string | undefined;
      for (const k of CONVERSATION_KEYS) conv ??= str(attrs[k]);
      if (!conv) withoutConversation++;
      const key = conv ?? stem;
      const list = byConversation.get(key) ?? [];
      list.push(record);
      byConversation.set(key, list);
    }
    const posts = Object.entries(skippedPosts);
    if (posts.length)
      ctx.report({ level: "notice", message: `not log exports, not read: ${posts.map(([p, n]) => `${n} × ${p}`).join(", ")}` });
    if (withoutConversation)
      ctx.report({ level: "warning", message: `${withoutConversation} log record(s) carry no conversation.id; they are grouped into one trace named after the file` });

    const run = runFromPath(file.path);
    const sidecars = findRunSidecars(file.path, { deliverableName: "agent_output.json", incident: run?.incident, groundTruthOption: ctx.options.groundTruth });
    const itbench = run !== undefined || sidecars.deliverable !== undefined || sidecars.groundTruth !== undefined;
    // the scenario's ground truth anywhere in the input when none is near the run
    const joined = itbench ? await joinGroundTruthByScenario(ctx, file.path, { run, sidecars }) : undefined;
    const groundTruth = joined?.groundTruth ?? sidecars.groundTruth;
    const sidecarPaths = [sidecars.deliverable, groundTruth].filter((p): p is string => p !== undefined);
    let index = 0;
    for (const [conversationId, records] of byConversation) {
      // stable sort by time; records without a time keep their arrival order
      records.sort((x, y) => (x.time && y.time && x.time !== y.time ? (x.time < y.time ? -1 : 1) : x.order - y.order));
      const built = logRecordsToSteps(records);
      const model = normalizeModel(built.modelRaw);
      const services = [...new Set(records.map((r) => r.serviceName).filter((s): s is string => s !== undefined))];
      try {
        yield buildTrace(
          {
            id: conversationId,
            source: compact({ file: file.path, format: "codex-otlp-logs", index: index++, line: records[0]?.line, sidecars: sidecarPaths.length ? sidecarPaths : undefined }),
            task: compact({ id: run?.incident, text: built.taskText, benchmark: itbench ? "itbench-sre" : undefined }),
            model,
            framework: "codex",
            agents: [AGENT],
            outcome: sidecarPaths.length ? compact({ deliverable: sidecars.deliverable, groundTruth }) : undefined,
            metadata: compact({
              modelRaw: built.modelRaw && built.modelRaw !== model ? built.modelRaw : undefined,
              serviceName: services.length === 1 ? services[0] : services.length ? services : undefined,
              appVersion: str(records.find((r) => r.attrs["app.version"] !== undefined)?.attrs["app.version"]),
              providerName: str(built.conversation?.provider_name),
              reasoningEffort: str(built.conversation?.reasoning_effort),
              contextWindow: num(built.conversation?.context_window),
              logRecords: records.length,
              otherEvents: Object.keys(built.otherEvents).length ? built.otherEvents : undefined,
              itbench: itbench
                ? compact({ incident: run?.incident, trial: run?.trial, scenario: joined?.scenario.id, groundTruthFrom: joined?.groundTruthFrom, groundTruthReason: joined?.reason })
                : undefined,
            }),
          },
          built.steps,
        );
      } catch (e) {
        ctx.report({ line: records[0]?.line, level: "error", message: (e as Error).message, skipped: "trace" });
      }
    }
  },
};
