import type { Usage } from "../../trace/index.js";
import { asText, isObj, num, str } from "../common/index.js";
import { messageFrom, messagesFrom, toolCallFrom, type ChatMessage } from "./messages.js";
import { emptyView, type OtelSpan, type SpanCategory, type SpanView } from "./span.js";
import { decodeJsonish, unflatten } from "./values.js";

/**
 * Attribute dialects of OTel-family instrumentations, and how to read each into a `SpanView`
 * (trace-formats.md §4.2–4.4): OpenInference, OpenTelemetry GenAI (current and deprecated names, OpenLLMetry
 * variants), and the Vercel AI SDK's own `ai.*` keys.
 */
export type Dialect = "openinference" | "genai" | "vercel" | "none";

/** The dialect is chosen by the instrumentation scope when it says; otherwise by the attribute prefixes present. */
export function dialectOf(span: Pick<OtelSpan, "scope" | "attributes">): Dialect {
  const scope = span.scope ?? "";
  if (/^openinference\./.test(scope)) return "openinference";
  if (scope === "ai" || scope.startsWith("ai.")) return "vercel";
  if (/^(opentelemetry\.instrumentation\.|opentelemetry\.util\.genai|strands\.telemetry|gcp\.vertex\.agent)/.test(scope)) return "genai";
  const keys = Object.keys(span.attributes);
  if ("openinference.span.kind" in span.attributes) return "openinference";
  if ("ai.operationId" in span.attributes) return "vercel";
  if (keys.some((k) => k.startsWith("gen_ai.") || k.startsWith("traceloop.") || k === "llm.request.type")) return "genai";
  if (keys.some((k) => k.startsWith("llm.") || k === "input.value" || k === "output.value")) return "openinference";
  return "none";
}

export function interpretSpan(span: OtelSpan): SpanView {
  if (span.view) return span.view;
  switch (dialectOf(span)) {
    case "openinference":
      return fromOpenInference(span);
    case "vercel":
      return fromVercel(span);
    case "genai":
      return fromGenAi(span);
    default:
      return emptyView("other");
  }
}

const text = (v: unknown): string | undefined => {
  const d = decodeJsonish(v);
  return typeof d === "string" ? d : asText(d);
};

const usageOf = (u: { input?: unknown; output?: unknown; cachedInput?: unknown; reasoning?: unknown }): Usage | undefined => {
  const out: Usage = {};
  for (const [k, v] of Object.entries(u)) {
    const n = num(v);
    if (n !== undefined && n >= 0) out[k as keyof Usage] = n;
  }
  return Object.keys(out).length ? out : undefined;
};

const first = (a: Record<string, unknown>, ...keys: string[]): unknown => {
  for (const k of keys) if (a[k] !== undefined && a[k] !== null && a[k] !== "") return a[k];
  return undefined;
};

/** Names a span gives its agent (priority 1 and 2 of §4.4 agent attribution). */
export function explicitAgentName(a: Record<string, unknown>): string | undefined {
  return str(first(a, "gen_ai.agent.name", "agent.name", "graph.node.name"));
}

/** smolagents' `kwargs`-wrapped tool inputs are unwrapped to the arguments the model gave. */
function toolArgs(v: unknown): unknown {
  const d = decodeJsonish(v);
  if (isObj(d) && isObj(d.kwargs) && Array.isArray(d.args) && d.args.length === 0) return d.kwargs;
  return d;
}

// ---------------------------------------------------------------- OpenInference

const OI_KINDS: Record<string, SpanCategory> = {
  LLM: "llm",
  TOOL: "tool",
  AGENT: "agent",
  CHAIN: "chain",
  RETRIEVER: "retrieval",
  RERANKER: "retrieval",
  EMBEDDING: "embedding",
  EVALUATOR: "judge",
  GUARDRAIL: "guardrail",
  PROMPT: "chain",
};

const OI_FRAMEWORKS: Record<string, string> = {
  langchain: "langchain",
  llama_index: "llama-index",
  smolagents: "smolagents",
  crewai: "crewai",
  autogen: "autogen",
  autogen_agentchat: "autogen",
  dspy: "dspy",
  haystack: "haystack",
  openai_agents: "openai-agents",
  agno: "agno",
  beeai: "beeai",
  google_adk: "google-adk",
  pydantic_ai: "pydantic-ai",
  mcp: "mcp",
};

/** Agent framework named by an instrumentation scope (`openinference.instrumentation.langchain` → `langchain`). */
export function frameworkOfScope(scope: string | undefined): string | undefined {
  if (!scope) return undefined;
  const m = scope.match(/^(?:openinference|opentelemetry)\.instrumentation\.([a-z0-9_]+)/);
  if (m) return OI_FRAMEWORKS[m[1]!];
  if (scope.startsWith("strands")) return "strands";
  if (scope === "gcp.vertex.agent") return "google-adk";
  if (scope === "ai") return "vercel-ai-sdk";
  return undefined;
}

function fromOpenInference(span: OtelSpan): SpanView {
  const a = span.attributes;
  const kind = (str(a["openinference.span.kind"]) ?? "").toUpperCase();
  const category: SpanCategory = OI_KINDS[kind] ?? (kind ? "other" : "chain");
  const view = emptyView(category);
  view.framework = frameworkOfScope(span.scope) ?? (Object.keys(a).some((k) => k.startsWith("smolagents.")) ? "smolagents" : undefined);
  view.agentName = explicitAgentName(a);
  const inputValue = a["input.value"];
  const outputValue = a["output.value"];
  if (category === "llm") {
    view.model = str(a["llm.model_name"]);
    view.provider = str(first(a, "llm.provider", "llm.system"));
    const inMsgs = unflatten(a, "llm.input_messages");
    view.input = Array.isArray(inMsgs) ? messagesFrom(inMsgs, "user") : messagesFrom(inputValue, "user").filter(isChatLike);
    const outMsgs = unflatten(a, "llm.output_messages");
    view.output = Array.isArray(outMsgs) ? messagesFrom(outMsgs, "assistant") : outputValue !== undefined ? messagesFrom(outputValue, "assistant") : [];
    view.usage = usageOf({
      input: a["llm.token_count.prompt"],
      output: a["llm.token_count.completion"],
      cachedInput: a["llm.token_count.prompt_details.cache_read"],
      reasoning: a["llm.token_count.completion_details.reasoning"],
    });
  } else if (category === "tool") {
    view.tool = {
      name: str(a["tool.name"]) ?? span.name,
      callId: str(first(a, "tool_call.id", "tool.id", "tool.call_id")),
      args: toolArgs(first(a, "tool_call.function.arguments", "input.value", "tool.parameters_value")),
      output: text(outputValue),
    };
  } else if (category === "retrieval") {
    const docs = unflatten(a, "retrieval.documents");
    const docTexts = Array.isArray(docs)
      ? docs.map((d) => (isObj(d) && isObj(d.document) ? str(d.document.content) ?? asText(d.document) : asText(d))).filter((t): t is string => !!t)
      : [];
    view.tool = { name: span.name, args: decodeJsonish(inputValue), output: docTexts.length ? docTexts.join("\n\n") : text(outputValue) };
  } else if (category === "embedding") {
    view.model = str(a["embedding.model_name"]);
    const emb = unflatten(a, "embedding.embeddings");
    const texts = Array.isArray(emb) ? emb.map((e) => (isObj(e) && isObj(e.embedding) ? str(e.embedding.text) : undefined)).filter((t): t is string => !!t) : [];
    view.inputText = texts.length ? texts.join("\n") : text(inputValue);
  } else {
    view.inputText = text(inputValue);
    view.outputText = text(outputValue);
  }
  return view;
}

/** Drops non-message values that a raw `input.value` may decode into. */
const isChatLike = (m: ChatMessage) => m.text !== undefined || m.toolCalls.length > 0;

// ---------------------------------------------------------------- OpenTelemetry GenAI (+ OpenLLMetry)

const GENAI_OPS: Record<string, SpanCategory> = {
  chat: "llm",
  text_completion: "llm",
  generate_content: "llm",
  completion: "llm",
  execute_tool: "tool",
  invoke_agent: "agent",
  create_agent: "agent",
  retrieval: "retrieval",
  embeddings: "embedding",
  invoke_workflow: "chain",
};

const TRACELOOP_KINDS: Record<string, SpanCategory> = { workflow: "chain", task: "chain", agent: "agent", tool: "tool" };

/** Deprecated per-message span events and the inference-details event carry content too. */
function genAiEventMessages(span: OtelSpan): { input: ChatMessage[]; output: ChatMessage[] } {
  const input: ChatMessage[] = [];
  const output: ChatMessage[] = [];
  for (const e of span.events) {
    const ea = e.attributes;
    if (e.name === "gen_ai.client.inference.operation.details") {
      input.push(...messagesFrom(ea["gen_ai.system_instructions"], "system").map(asSystem));
      input.push(...messagesFrom(ea["gen_ai.input.messages"], "user"));
      output.push(...messagesFrom(ea["gen_ai.output.messages"], "assistant"));
      continue;
    }
    const m = e.name.match(/^gen_ai\.(system|user|assistant|tool)\.message$/);
    if (m) {
      const msg = messageFrom({ role: m[1], ...ea, content: decodeJsonish(first(ea, "content", "gen_ai.event.content")) }, m[1] as ChatMessage["role"]);
      if (msg) input.push(msg);
    } else if (e.name === "gen_ai.choice") {
      const body = decodeJsonish(first(ea, "message", "content", "gen_ai.event.content"));
      output.push(...messagesFrom(isObj(body) && !("role" in body) ? { role: "assistant", ...body } : body, "assistant"));
    } else if (e.name === "gen_ai.content.prompt") {
      input.push(...messagesFrom(ea["gen_ai.prompt"], "user"));
    } else if (e.name === "gen_ai.content.completion") {
      output.push(...messagesFrom(ea["gen_ai.completion"], "assistant"));
    }
  }
  return { input, output };
}

const asSystem = (m: ChatMessage): ChatMessage => ({ ...m, role: "system" });

function fromGenAi(span: OtelSpan): SpanView {
  const a = span.attributes;
  const op = str(a["gen_ai.operation.name"])?.toLowerCase();
  const tlKind = str(a["traceloop.span.kind"])?.toLowerCase();
  const reqType = str(a["llm.request.type"])?.toLowerCase();
  let category: SpanCategory =
    (op && GENAI_OPS[op]) ||
    (tlKind && TRACELOOP_KINDS[tlKind]) ||
    (reqType === "chat" || reqType === "completion" ? "llm" : undefined) ||
    (first(a, "gen_ai.request.model", "gen_ai.response.model", "gen_ai.system", "gen_ai.provider.name") !== undefined ? "llm" : "chain");
  if (category === "chain" && (span.name.startsWith("execute_tool ") || a["gen_ai.tool.name"] !== undefined)) category = "tool";
  const view = emptyView(category);
  view.framework = frameworkOfScope(span.scope);
  view.agentName = explicitAgentName(a) ?? (category === "agent" ? str(a["traceloop.entity.name"]) : undefined);
  if (category === "llm") {
    view.model = str(first(a, "gen_ai.request.model", "gen_ai.response.model"));
    const resp = str(a["gen_ai.response.model"]);
    if (resp && resp !== view.model) view.responseModel = resp;
    view.provider = str(first(a, "gen_ai.provider.name", "gen_ai.system"));
    const events = genAiEventMessages(span);
    const prompt = unflatten(a, "gen_ai.prompt");
    const completion = unflatten(a, "gen_ai.completion");
    view.input = [
      ...messagesFrom(a["gen_ai.system_instructions"], "system").map(asSystem),
      ...messagesFrom(a["gen_ai.input.messages"], "user"),
      ...(Array.isArray(prompt) ? messagesFrom(prompt, "user") : []),
      ...events.input,
    ];
    view.output = [
      ...messagesFrom(a["gen_ai.output.messages"], "assistant"),
      ...(Array.isArray(completion) ? completion.flatMap((c) => openLlmetryCompletion(c)) : []),
      ...events.output,
    ];
    view.usage = usageOf({
      input: first(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
      output: first(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
      cachedInput: a["gen_ai.usage.cache_read.input_tokens"],
      reasoning: a["gen_ai.usage.reasoning.output_tokens"],
    });
  } else if (category === "tool" || category === "retrieval") {
    view.tool = {
      name: str(first(a, "gen_ai.tool.name", "traceloop.entity.name")) ?? span.name.replace(/^(execute_tool|retrieval)\s+/, ""),
      callId: str(a["gen_ai.tool.call.id"]),
      args: decodeJsonish(first(a, "gen_ai.tool.call.arguments", "traceloop.entity.input")),
      output: text(first(a, "gen_ai.tool.call.result", "traceloop.entity.output")),
    };
  } else {
    view.inputText = text(a["traceloop.entity.input"]);
    view.outputText = text(a["traceloop.entity.output"]);
  }
  return view;
}

/** OpenLLMetry's `gen_ai.completion.{i}` carries `tool_calls.{j}.{id,name,arguments}` beside role and content. */
function openLlmetryCompletion(c: unknown): ChatMessage[] {
  if (!isObj(c)) return [];
  const msg = messageFrom({ role: c.role ?? "assistant", content: c.content }, "assistant");
  if (!msg) return [];
  for (const t of Array.isArray(c.tool_calls) ? c.tool_calls : []) {
    const call = toolCallFrom(t);
    if (call && !msg.toolCalls.some((x) => x.id !== undefined && x.id === call.id)) msg.toolCalls.push(call);
  }
  return [msg];
}

// ---------------------------------------------------------------- Vercel AI SDK

const VERCEL_CALLS = /^ai\.(generateText|streamText|generateObject|streamObject)$/;

function fromVercel(span: OtelSpan): SpanView {
  const a = span.attributes;
  const op = str(a["ai.operationId"]) ?? span.name;
  const category: SpanCategory =
    op === "ai.toolCall"
      ? "tool"
      : /\.(doGenerate|doStream)$/.test(op) || VERCEL_CALLS.test(op)
        ? "llm"
        : /^ai\.embed/.test(op)
          ? "embedding"
          : "chain";
  const view = emptyView(category);
  view.framework = "vercel-ai-sdk";
  view.agentName = explicitAgentName(a);
  view.fallbackAgent = str(a["ai.telemetry.functionId"]);
  if (category === "llm") {
    view.model = str(first(a, "gen_ai.request.model", "ai.model.id"));
    const resp = str(first(a, "ai.response.model", "gen_ai.response.model"));
    if (resp && resp !== view.model) view.responseModel = resp;
    view.provider = str(first(a, "ai.model.provider", "gen_ai.system"));
    view.input = a["ai.prompt.messages"] !== undefined ? messagesFrom(a["ai.prompt.messages"], "user") : messagesFrom(a["ai.prompt"], "user");
    const out: ChatMessage = { role: "assistant", toolCalls: [] };
    const t = str(first(a, "ai.response.text", "ai.result.text")) ?? text(first(a, "ai.response.object", "ai.result.object"));
    if (t !== undefined) out.text = t;
    const reasoning = str(first(a, "ai.response.reasoning", "ai.result.reasoning"));
    if (reasoning) out.reasoning = reasoning;
    const calls = decodeJsonish(first(a, "ai.response.toolCalls", "ai.result.toolCalls"));
    for (const c of Array.isArray(calls) ? calls : []) {
      const call = toolCallFrom(c);
      if (call) out.toolCalls.push(call);
    }
    view.output = out.text !== undefined || out.reasoning || out.toolCalls.length ? [out] : [];
    view.usage = usageOf({
      input: first(a, "ai.usage.inputTokens", "ai.usage.promptTokens", "gen_ai.usage.input_tokens"),
      output: first(a, "ai.usage.outputTokens", "ai.usage.completionTokens", "gen_ai.usage.output_tokens"),
      cachedInput: a["ai.usage.cachedInputTokens"],
      reasoning: a["ai.usage.reasoningTokens"],
    });
  } else if (category === "tool") {
    view.tool = {
      name: str(a["ai.toolCall.name"]) ?? span.name,
      callId: str(a["ai.toolCall.id"]),
      args: decodeJsonish(first(a, "ai.toolCall.args", "ai.toolCall.input")),
      output: text(first(a, "ai.toolCall.result", "ai.toolCall.output")),
    };
  } else if (category === "embedding") {
    view.model = str(a["ai.model.id"]);
    const values = first(a, "ai.values", "ai.value");
    view.inputText = Array.isArray(values) ? values.map((v) => text(v) ?? "").join("\n") : text(values);
    view.usage = usageOf({ input: a["ai.usage.tokens"] });
  }
  return view;
}
