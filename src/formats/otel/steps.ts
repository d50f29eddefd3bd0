import type { OutcomeInput, StepDraft, Usage } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { asText, normalizeModel, str } from "../common/index.js";
import { explicitAgentName, frameworkOfScope, interpretSpan } from "./interpret.js";
import { hasContent, type ChatMessage, type ToolCallPart } from "./messages.js";
import { evaluationOutcome } from "./outcome.js";
import type { OtelSpan, SpanView } from "./span.js";
import { nanosToIso } from "./values.js";

/**
 * The shared span-to-steps mapper of every OTel-family adapter (trace-formats.md §4.4):
 * - the span tree is flattened depth-first, children by start time (file order breaks ties);
 * - an LLM span becomes one `llm_call` step plus message / reasoning / tool_call steps rebuilt from its output
 *   messages; an LLM span with LLM spans below it is a wrapper (Vercel `ai.generateText`, Langfuse generations around
 *   `doStream`) and only contributes output text its children did not already produce;
 * - a TOOL / execute_tool span becomes a tool_call + tool_result pair; when an earlier LLM output already holds the
 *   call (same id, or else the first unanswered call of that name) only the result is added, linked to it;
 * - RETRIEVER spans become tool pairs tagged `retrieval`; embeddings, judges, guardrails and events become `event`s;
 * - `status.code = 2` or an `exception` event becomes an `error` step; an error repeated unchanged by an ancestor
 *   span is kept once;
 * - every step keeps its span's ids.
 * Prompts repeat the whole conversation on every call, so an LLM span's input messages only add what is new: unseen
 * system/user messages, and — before the trace's first LLM call — the earlier conversation it was given. A user
 * message that only wraps a tool output already shown ("Observation: …") is a mirror and is kept once.
 * Two instrumentations of one call (LangChain `ChatOpenAI` around OpenAI `ChatCompletion`) are mirrors too: the
 * inner span is merged into the outer one (see `mergeMirror`).
 */
export interface SpanMapOptions {
  /** Agent name when no span names one and no AGENT span encloses the step (framework-specific). */
  defaultAgent?: string;
}

export interface MappedSpans {
  steps: StepDraft[];
  /** Most frequent model of the LLM calls (normalised), and its raw form. */
  model?: string;
  modelRaw?: string;
  /** Every distinct raw model seen, requested and reported. */
  models: string[];
  framework?: string;
  /** Text of the first user message, a natural task statement. */
  taskText?: string;
  /** Inner spans merged into an outer mirror span: `{kept, dropped}` span ids. */
  mirrors: { kept: string; dropped: string }[];
  /** Span ids that appeared more than once (kept once). */
  duplicateSpans: string[];
  spanCount: number;
  /** The run's verdict from `gen_ai.evaluation.result` events on a root span, and every evaluation (see outcome.ts). */
  outcome?: OutcomeInput;
}

interface Node {
  span: OtelSpan;
  view: SpanView;
  order: number;
  parent?: Node;
  children: Node[];
  /** An LLM span with LLM spans below it. */
  wrapper: boolean;
  /** Some LLM span below carries input messages. */
  inputBelow: boolean;
  /** Merged into a mirror span: contributes no steps of its own. */
  merged: boolean;
}

const byStart = (a: Node, b: Node) => {
  const sa = a.span.start;
  const sb = b.span.start;
  if (sa !== undefined && sb !== undefined && sa !== sb) return sa < sb ? -1 : 1;
  return a.order - b.order;
};

const key = (role: string, text: string) => `${role}\u0000${text.trim()}`;

/** Name of the agent an AGENT span stands for. */
function agentSpanName(n: Node): string {
  return (
    explicitAgentName(n.span.attributes) ??
    n.view.agentName ??
    n.span.name.replace(/^(invoke_agent|create_agent)\s+/, "").replace(/\.(run|arun|invoke|ainvoke|call|__call__|execute|stream)$/, "")
  );
}

export function spansToSteps(spans: OtelSpan[], opts: SpanMapOptions = {}): MappedSpans {
  const nodes: Node[] = [];
  const byId = new Map<string, Node>();
  const duplicateSpans: string[] = [];
  spans.forEach((span, order) => {
    if (byId.has(span.spanId)) {
      duplicateSpans.push(span.spanId);
      return;
    }
    const n: Node = { span, view: interpretSpan(span), order, children: [], wrapper: false, inputBelow: false, merged: false };
    byId.set(span.spanId, n);
    nodes.push(n);
  });
  const roots: Node[] = [];
  for (const n of nodes) {
    const parent = n.span.parentSpanId !== undefined ? byId.get(n.span.parentSpanId) : undefined;
    if (parent && parent !== n && !isAncestor(n, parent)) {
      n.parent = parent;
      parent.children.push(n);
    } else roots.push(n); // a missing parent (partial export, or a dump without links) makes a root
  }
  for (const n of nodes) n.children.sort(byStart);
  roots.sort(byStart);
  markWrappers(roots);
  const mirrors = mergeMirrors(nodes);

  const firstAgent = nodes.find((n) => n.view.category === "agent");
  const defaultAgent =
    opts.defaultAgent ?? (firstAgent ? agentSpanName(firstAgent) : undefined) ?? nodes.find((n) => n.view.fallbackAgent)?.view.fallbackAgent ?? serviceName(nodes) ?? "agent";

  const w = new StepWriter(defaultAgent);
  const visit = (n: Node) => {
    w.enter(n);
    for (const c of n.children) visit(c);
    w.exit(n);
  };
  roots.forEach(visit);

  const counts = new Map<string, { n: number; raw: string }>();
  const models = new Set<string>();
  for (const n of nodes) {
    if (n.view.model) models.add(n.view.model);
    if (n.view.responseModel) models.add(n.view.responseModel);
  }
  const llmModels = nodes.filter((n) => n.view.category === "llm" && !n.wrapper && !n.merged && n.view.model);
  const modelSources = llmModels.length ? llmModels : nodes.filter((n) => n.view.model && !n.merged);
  for (const n of modelSources) {
    const norm = normalizeModel(n.view.model)!;
    const c = counts.get(norm) ?? { n: 0, raw: n.view.model! };
    c.n++;
    counts.set(norm, c);
  }
  let best: [string, { n: number; raw: string }] | undefined;
  for (const e of counts) if (!best || e[1].n > best[1].n) best = e;

  const frameworks = nodes.map((n) => n.view.framework ?? frameworkOfScope(n.span.scope)).filter((f): f is string => !!f);
  return {
    steps: w.steps,
    model: best?.[0],
    modelRaw: best?.[1].raw,
    models: [...models],
    framework: frameworks[0],
    taskText: w.steps.find((s) => s.role === "user" && s.kind === "message" && s.text)?.text,
    mirrors,
    duplicateSpans,
    spanCount: nodes.length,
    outcome: evaluationOutcome(
      nodes.map((n) => n.span),
      new Set(roots.map((n) => n.span.spanId)),
    ),
  };
}

function isAncestor(candidate: Node, of: Node): boolean {
  for (let p: Node | undefined = of; p; p = p.parent) if (p === candidate) return true;
  return false;
}

function serviceName(nodes: Node[]): string | undefined {
  for (const n of nodes) {
    const s = str(n.span.resource?.["service.name"]);
    if (s && !s.startsWith("unknown_service")) return s;
  }
  return undefined;
}

/** Marks LLM wrappers and whether input messages exist below; returns whether the subtree holds an LLM span. */
function markWrappers(list: Node[]): { llm: boolean; input: boolean } {
  let llm = false;
  let input = false;
  for (const n of list) {
    const below = markWrappers(n.children);
    n.wrapper = n.view.category === "llm" && below.llm;
    n.inputBelow = below.input;
    llm ||= below.llm || n.view.category === "llm";
    input ||= below.input || (n.view.category === "llm" && n.view.input.length > 0);
  }
  return { llm, input };
}

const signature = (msgs: ChatMessage[]) =>
  msgs
    .map((m) => `${m.role}|${(m.text ?? "").trim()}|${m.toolCalls.map((c) => c.name).join(",")}`)
    .filter((s) => !s.endsWith("||"))
    .join("\n");

/**
 * Leaf LLM spans whose interval lies within another leaf LLM span of the same output are the same call seen by two
 * instrumentations. The outer span keeps its place in the tree (the framework's view); the inner one lends what the
 * outer lacks: tool-call ids, usage, the model, and the reported model.
 */
function mergeMirrors(nodes: Node[]): { kept: string; dropped: string }[] {
  const leaves = nodes.filter((n) => n.view.category === "llm" && !n.wrapper && n.span.start !== undefined && n.span.end !== undefined);
  const sigs = new Map(leaves.map((n) => [n, signature(n.view.output)]));
  const out: { kept: string; dropped: string }[] = [];
  for (const inner of leaves) {
    const sig = sigs.get(inner)!;
    if (!sig) continue;
    const outer = leaves.find(
      (o) =>
        o !== inner &&
        !o.merged &&
        sigs.get(o) === sig &&
        o.span.start! <= inner.span.start! &&
        inner.span.end! <= o.span.end! &&
        // identical intervals: the earlier span in the file is the outer one
        (o.span.start! < inner.span.start! || inner.span.end! < o.span.end! || o.order < inner.order),
    );
    if (!outer) continue;
    mergeMirror(outer.view, inner.view);
    inner.merged = true;
    out.push({ kept: outer.span.spanId, dropped: inner.span.spanId });
  }
  return out;
}

function mergeMirror(keep: SpanView, from: SpanView): void {
  keep.output.forEach((m, i) => {
    const other = from.output[i];
    m.toolCalls.forEach((c, j) => {
      const oc = other?.toolCalls[j];
      if (oc && oc.name === c.name && c.id === undefined && oc.id !== undefined) c.id = oc.id;
    });
  });
  keep.usage ??= from.usage;
  keep.model ??= from.model;
  const reported = from.responseModel ?? from.model;
  if (!keep.responseModel && reported && reported !== keep.model) keep.responseModel = reported;
}

interface PendingCall {
  name: string;
  callId: string;
  answered: boolean;
}

/** Accumulates steps during the depth-first walk, with the state that dedupes repeated context. */
class StepWriter {
  readonly steps: StepDraft[] = [];
  private seen = new Set<string>();
  private llmCalls = 0;
  private pending: PendingCall[] = [];
  private toolOutputs: string[] = [];
  /** Error texts already emitted, with the span that emitted them. */
  private errors = new Map<string, Node>();

  constructor(private readonly defaultAgent: string) {}

  private agentOf(n: Node): string {
    const own = explicitAgentName(n.span.attributes) ?? n.view.agentName;
    if (own) return own;
    for (let p: Node | undefined = n; p; p = p.parent) if (p.view.category === "agent") return agentSpanName(p);
    return this.defaultAgent;
  }

  private base(n: Node, agent: string, time?: bigint) {
    const s = n.span;
    return compact({
      agent,
      time: nanosToIso(time ?? s.start),
      span: compact({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId }),
      ref: Object.keys(s.ref).length ? compact({ ...s.ref }) : undefined,
    });
  }

  enter(n: Node): void {
    if (n.merged) return;
    const v = n.view;
    const agent = this.agentOf(n);
    switch (v.category) {
      case "llm":
        if (!n.wrapper || !n.inputBelow) this.inputs(n, agent);
        if (!n.wrapper) this.llmCall(n, agent);
        break;
      case "tool":
      case "retrieval":
        this.tool(n, agent);
        break;
      case "embedding":
      case "judge":
      case "guardrail":
      case "event": {
        const text = v.category === "embedding" ? v.inputText : v.outputText ?? v.inputText;
        this.steps.push(
          compact({
            ...this.base(n, agent),
            role: "assistant" as const,
            kind: "event" as const,
            text: text !== undefined ? `${n.span.name}: ${text}` : n.span.name,
            model: v.category === "embedding" ? normalizeModel(v.model) : undefined,
            usage: v.usage,
            tags: v.category === "event" ? undefined : [v.category],
          }),
        );
        break;
      }
      default:
        break;
    }
    for (const e of n.span.events) {
      if (e.name !== "gen_ai.evaluation.result") continue;
      const a = e.attributes;
      const parts = [str(a["gen_ai.evaluation.name"]), str(a["gen_ai.evaluation.score.label"]) ?? str(a["gen_ai.evaluation.score.value"]), str(a["gen_ai.evaluation.explanation"])];
      this.steps.push(compact({ ...this.base(n, agent, e.time), role: "assistant" as const, kind: "event" as const, text: parts.filter(Boolean).join(": "), tags: ["judge"] }));
    }
  }

  exit(n: Node): void {
    const agent = this.agentOf(n);
    if (!n.merged && n.wrapper) {
      for (const m of n.view.output) {
        if (m.role !== "assistant" || !m.text || this.seen.has(key("assistant", m.text))) continue;
        this.message({ ...m, toolCalls: [] }, n, agent, n.span.end);
      }
    }
    this.errorsOf(n, agent);
  }

  private inputs(n: Node, agent: string): void {
    for (const m of n.view.input) {
      if (!hasContent(m)) continue;
      if (m.role === "system" || m.role === "user") {
        if (this.seen.has(key(m.role, m.text ?? ""))) continue;
        if (m.role === "user" && this.wrapsToolOutput(m.text ?? "")) continue;
      } else if (this.llmCalls > 0) continue; // assistant/tool history after the first call was produced by this trace
      this.message(m, n, agent, n.span.start);
    }
  }

  /** A user message that only wraps a tool output already shown, e.g. smolagents' "Observation:\n<output>". */
  private wrapsToolOutput(text: string): boolean {
    const t = text.trim();
    return this.toolOutputs.some((o) => o.length > 0 && t.includes(o) && t.length - o.length <= 40);
  }

  private llmCall(n: Node, agent: string): void {
    const v = n.view;
    const model = normalizeModel(v.model);
    this.llmCalls++;
    this.steps.push(
      compact({
        ...this.base(n, agent),
        role: "assistant" as const,
        kind: "llm_call" as const,
        text: model ? `${n.span.name} (${v.model})` : n.span.name,
        model,
        usage: v.usage as Usage | undefined,
      }),
    );
    v.output.forEach((m, i) => this.message(m, n, agent, n.span.end, i));
  }

  /** One message as steps: system/user messages, assistant reasoning + text + tool calls, tool results. */
  private message(m: ChatMessage, n: Node, agent: string, time: bigint | undefined, index = 0): void {
    const base = this.base(n, agent, time);
    if (m.role === "system" || m.role === "user") {
      if (!m.text) return;
      this.seen.add(key(m.role, m.text));
      this.steps.push(compact({ ...base, agent: m.name ?? m.role, role: m.role, kind: "message" as const, text: m.text }));
      return;
    }
    if (m.role === "tool") {
      const call = m.toolCallId ? this.pending.find((p) => p.callId === m.toolCallId) : undefined;
      if (call) call.answered = true;
      const name = m.name ?? call?.name ?? "tool";
      this.steps.push(
        compact({ ...base, role: "tool" as const, kind: "tool_result" as const, text: m.text, tool: compact({ name, callId: m.toolCallId, output: m.text }) }),
      );
      if (m.text) this.toolOutputs.push(m.text.trim());
      return;
    }
    const who = m.name ?? agent;
    if (m.reasoning) this.steps.push(compact({ ...base, agent: who, role: "assistant" as const, kind: "reasoning" as const, text: m.reasoning }));
    if (m.text !== undefined && m.text.trim() !== "") {
      this.seen.add(key("assistant", m.text));
      this.steps.push(compact({ ...base, agent: who, role: "assistant" as const, kind: "message" as const, text: m.text }));
    }
    m.toolCalls.forEach((c, j) => this.toolCallStep(c, base, who, `${n.span.spanId}:${index}:${j}`));
  }

  private toolCallStep(c: ToolCallPart, base: Partial<StepDraft>, agent: string, syntheticId: string): string {
    const callId = c.id ?? syntheticId;
    this.pending.push({ name: c.name, callId, answered: false });
    const argsText = typeof c.args === "string" ? c.args : c.args === undefined ? "" : asText(c.args) ?? "";
    this.steps.push(
      compact({
        ...base,
        agent,
        role: "assistant" as const,
        kind: "tool_call" as const,
        text: `${c.name}(${argsText})`,
        tool: compact({ name: c.name, callId, args: c.args }),
      }) as StepDraft,
    );
    return callId;
  }

  private tool(n: Node, agent: string): void {
    const t = n.view.tool ?? { name: n.span.name };
    const tags = n.view.category === "retrieval" ? ["retrieval"] : undefined;
    const open = this.pending.filter((p) => !p.answered);
    const match = (t.callId !== undefined ? open.find((p) => p.callId === t.callId) : undefined) ?? open.find((p) => p.name === t.name);
    let callId: string;
    if (match) {
      match.answered = true;
      callId = match.callId;
    } else {
      const base = { ...this.base(n, agent), tags };
      callId = this.toolCallStep({ name: t.name, id: t.callId ?? n.span.spanId, args: t.args }, base, agent, n.span.spanId);
      this.pending[this.pending.length - 1]!.answered = true;
    }
    const failed = n.span.status.code === 2 || n.span.events.some((e) => e.name === "exception");
    const s = n.span;
    const durationMs = s.start !== undefined && s.end !== undefined && s.end >= s.start ? Number(s.end - s.start) / 1e6 : undefined;
    this.steps.push(
      compact({
        ...this.base(n, agent, s.end),
        role: "tool" as const,
        kind: "tool_result" as const,
        text: t.output,
        tool: compact({ name: t.name, callId, output: t.output, isError: failed ? true : undefined, durationMs }),
        tags,
      }),
    );
    if (t.output) this.toolOutputs.push(t.output.trim());
  }

  private errorsOf(n: Node, agent: string): void {
    const s = n.span;
    const found: { text: string; time?: bigint }[] = [];
    for (const e of s.events) {
      if (e.name !== "exception") continue;
      const type = str(e.attributes["exception.type"]);
      const msg = str(e.attributes["exception.message"]);
      found.push({ text: [type, msg].filter(Boolean).join(": ") || "exception", time: e.time });
    }
    if (found.length === 0 && s.status.code === 2) found.push({ text: s.status.message || "span status ERROR", time: s.end });
    for (const f of found) {
      const prior = this.errors.get(f.text);
      if (prior && isAncestor(n, prior)) continue; // the same error re-raised by an enclosing span
      this.errors.set(f.text, n);
      this.steps.push(
        compact({
          ...this.base(n, agent, f.time ?? s.end),
          role: n.view.category === "tool" || n.view.category === "retrieval" ? ("tool" as const) : ("assistant" as const),
          kind: "error" as const,
          text: f.text,
        }),
      );
    }
  }
}
