import type { Usage } from "../../trace/index.js";
import type { ChatMessage } from "./messages.js";

/**
 * The one span shape every OTel-family adapter produces before the shared span-to-steps mapper runs: OTLP spans,
 * OTel-JS / Python span dumps, and Langfuse observations all become `OtelSpan`s.
 */
export interface OtelEvent {
  name: string;
  time?: bigint;
  attributes: Record<string, unknown>;
}

export interface OtelSpan {
  /** Lower-case hex (see `normalizeOtelId`), or the source's own id when it is not an OTel id. */
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** Nanoseconds since the epoch. */
  start?: bigint;
  end?: bigint;
  attributes: Record<string, unknown>;
  events: OtelEvent[];
  status: { code: 0 | 1 | 2; message?: string };
  /** Instrumentation scope name (OTLP `scopeSpans[].scope.name`). */
  scope?: string;
  resource?: Record<string, unknown>;
  /** Where the span is in its file. */
  ref: { line?: number; pointer?: string };
  /** A view built by the adapter itself (Langfuse); otherwise `interpretSpan` derives it from the attributes. */
  view?: SpanView;
}

/** Canonical span kinds of trace-formats.md §4.4, plus `event` (Langfuse EVENT) and `other` (no step of its own). */
export type SpanCategory = "agent" | "llm" | "tool" | "retrieval" | "embedding" | "chain" | "judge" | "guardrail" | "event" | "other";

/** What a span means, whatever attribute dialect it was written in. */
export interface SpanView {
  category: SpanCategory;
  /** The agent the span names itself (`gen_ai.agent.name`, `agent.name`, `graph.node.name`). */
  agentName?: string;
  /** A framework-specific agent name to fall back on when no span names an agent (e.g. Vercel `ai.telemetry.functionId`). */
  fallbackAgent?: string;
  /** The requested model when known (grouping-friendly), else the one reported. */
  model?: string;
  /** The model the provider reports having used, when it differs in form (e.g. a dated snapshot). */
  responseModel?: string;
  provider?: string;
  input: ChatMessage[];
  output: ChatMessage[];
  usage?: Usage;
  tool?: { name: string; callId?: string; args?: unknown; output?: string };
  /** Plain input/output text for spans that are not chat calls (judge, guardrail, embedding, event). */
  inputText?: string;
  outputText?: string;
  /** The agent framework the span's instrumentation reveals (`langchain`, `smolagents`, `vercel-ai-sdk` …). */
  framework?: string;
}

export const emptyView = (category: SpanCategory): SpanView => ({ category, input: [], output: [] });
