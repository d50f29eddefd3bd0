import { endsWithQuestion, INTENT_RE } from "../trace/claims.js";
import { normalizeArgs } from "./equivalence.js";
import { intervene, isAgentAction, proceed, type Guard, type GuardContext, type GuardDecision, type GuardEvent, type PlanItem, type ToolCallInfo } from "./types.js";

/** A fact the run must keep straight, e.g. the namespace or the incident id given in the task. */
export interface FactRule {
  name: string;
  /** A regular expression whose first capture group is the value, e.g. `namespace[=: ]+([\w-]+)`. */
  pattern?: string | RegExp;
  /** Tool-call argument keys (at any depth) that carry this fact; a different value there is a contradiction. */
  argKeys?: string[];
  /** Where the fact is established (default: user messages only — tool listings mention many values). */
  from?: ("user" | "tool")[];
  /** Words naming the fact in a question, for "asks again for what it was told" (default: the name). */
  aliases?: string[];
}

export interface ContextState {
  task?: string;
  facts: { name: string; value: string; source: "user" | "tool"; seq: number }[];
  plan?: PlanItem[] | string;
  actions: number;
  recentResults: { tool: string; ok: boolean; seq: number }[];
}

export interface ContextGuardOptions {
  facts?: FactRule[];
  /** Tool names to recognise in stated intentions; every called tool is learned as well. */
  tools?: string[];
  /** Also compare values the assistant states in its messages with established facts (default false). */
  checkAssistantText?: boolean;
  /** Emit a state summary to inject every this many agent actions (default 0: never; call `stateSummary()` instead). */
  summaryEvery?: number;
  renderSummary?: (state: ContextState) => string;
}

export const CONTEXT_GUARD = "context-guard";

/** Phrases announcing what the agent does next; the clause after one is searched for tool names. */
export const INTENT_PATTERN = new RegExp(`(?:${INTENT_RE.source})([^.!?\\n]{0,160})`, "gi");

interface Fact {
  value: string;
  source: "user" | "tool";
  seq: number;
}

const norm = (v: unknown) => String(v).trim().toLowerCase();
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function valuesAtKeys(args: unknown, keys: Set<string>): unknown[] {
  const out: unknown[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        if (keys.has(k.toLowerCase()) && (typeof x === "string" || typeof x === "number")) out.push(x);
        else walk(x);
      }
  };
  walk(normalizeArgs(args ?? {}, { ignoreKeys: [] }));
  return out;
}

export function defaultSummary(s: ContextState): string {
  const lines = ["State summary (kept by faultline's context guard):"];
  if (s.task) lines.push(`- Task: ${s.task.replace(/\s+/g, " ").slice(0, 300)}`);
  for (const f of s.facts) lines.push(`- Established: ${f.name} = ${f.value} (from ${f.source}, event ${f.seq})`);
  if (Array.isArray(s.plan)) lines.push(`- Plan: ${s.plan.map((p) => `[${p.status ?? "pending"}] ${p.text}`).join("; ")}`);
  else if (s.plan) lines.push(`- Plan: ${s.plan.slice(0, 300)}`);
  const failed = s.recentResults.filter((r) => !r.ok).length;
  lines.push(`- ${s.actions} actions so far; last ${s.recentResults.length} tool results: ${s.recentResults.map((r) => `${r.tool}${r.ok ? "" : " (failed)"}`).join(", ") || "none"}${failed ? ` — ${failed} failed` : ""}`);
  return lines.join("\n");
}

/**
 * Context hygiene (FM-1.4, FM-2.6).
 * - Pins facts established by the user (or by tools, if declared) and flags a later tool call or question that
 *   contradicts or re-asks one of them (loss of conversation history, 1.4).
 * - Compares what the agent says it will do next ("I'll call get_logs …") with the next tool call; a different tool,
 *   or ending the run instead, is a reasoning-action mismatch (2.6). An announcement lapses when the user speaks.
 *   Tools named by a plain word (`calculate`) count only when quoted or written as a call (`calculate(`).
 * - Keeps a state summary (task, facts, plan, recent results) for the loop to inject, on demand or every N actions.
 */
export class ContextGuard implements Guard {
  readonly name = CONTEXT_GUARD;
  readonly modes = ["1.4", "2.6"] as const;
  private readonly rules: { rule: FactRule; re?: RegExp; argKeys: Set<string>; from: Set<string>; ask?: RegExp }[];
  private readonly known = new Set<string>();
  private facts = new Map<string, Fact>();
  private task?: string;
  private plan?: PlanItem[] | string;
  private actions = 0;
  private recent: ContextState["recentResults"] = [];
  private intent?: { tools: string[]; text: string; seq: number };
  /** Per known tool, the regex that finds it in a stated intention: built once, not per message. */
  private readonly toolPatterns = new Map<string, RegExp>();

  constructor(private readonly opts: ContextGuardOptions = {}) {
    this.rules = (opts.facts ?? []).map((rule) => {
      const aliases = rule.aliases ?? [rule.name.replace(/[_-]+/g, " ")];
      return {
        rule,
        re: rule.pattern === undefined ? undefined : new RegExp(typeof rule.pattern === "string" ? rule.pattern : rule.pattern.source, "gi"),
        argKeys: new Set((rule.argKeys ?? []).map((k) => k.toLowerCase())),
        from: new Set(rule.from ?? ["user"]),
        ask: aliases.length ? new RegExp(`\\b(?:${aliases.map(escapeRe).join("|")})\\b`, "i") : undefined,
      };
    });
    for (const t of opts.tools ?? []) this.known.add(t);
  }

  reset(): void {
    this.facts.clear();
    this.task = undefined;
    this.plan = undefined;
    this.actions = 0;
    this.recent = [];
    this.intent = undefined;
    this.known.clear();
    this.toolPatterns.clear();
    for (const t of this.opts.tools ?? []) this.known.add(t);
  }

  /** Pins a fact from code (e.g. the incident id the harness knows). */
  pin(name: string, value: string, seq = -1): void {
    this.facts.set(name, { value, source: "user", seq });
  }

  state(): ContextState {
    const s: ContextState = {
      facts: [...this.facts].map(([name, f]) => ({ name, ...f })),
      actions: this.actions,
      recentResults: [...this.recent],
    };
    if (this.task !== undefined) s.task = this.task;
    if (this.plan !== undefined) s.plan = this.plan;
    return s;
  }

  /** The summary to inject (e.g. before compacting the conversation). */
  stateSummary(): string {
    return (this.opts.renderSummary ?? defaultSummary)(this.state());
  }

  observe(event: GuardEvent, ctx: GuardContext): GuardDecision {
    if (isAgentAction(event)) this.actions++;
    const decision = this.decide(event, ctx);
    const every = this.opts.summaryEvery ?? 0;
    if (decision.action === "continue" && every > 0 && isAgentAction(event) && this.actions % every === 0)
      return proceed(this.name, `periodic state summary after ${this.actions} actions`, { message: this.stateSummary() });
    return decision;
  }

  private decide(event: GuardEvent, ctx: GuardContext): GuardDecision {
    switch (event.type) {
      case "message":
        if (event.role === "user") {
          this.intent = undefined; // the turn went to the user; what was announced to them is not a promise about the next call
          this.task ??= event.text;
          this.establish(event.text, "user", ctx.seq);
          return proceed(this.name, "user message");
        }
        if (event.role !== "assistant") return proceed(this.name, "system message");
        return this.onAssistantText(event.text, ctx, event.reasoning ?? false, event.calls);
      case "plan":
        this.plan = event.items ?? event.text;
        return proceed(this.name, "plan recorded");
      case "tool_call":
        return this.onCall(event.call);
      case "tool_result": {
        const ok = event.result.isError !== true && (event.result.exitCode ?? 0) === 0;
        this.recent = [...this.recent, { tool: event.result.name, ok, seq: ctx.seq }].slice(-5);
        if (event.result.output) this.establish(event.result.output, "tool", ctx.seq);
        return proceed(this.name, "result recorded");
      }
      case "completion": {
        const pending = this.intent;
        this.intent = undefined;
        if (pending)
          return intervene(
            "warn",
            this.name,
            "2.6",
            `announced ${pending.tools.join("/")} at event ${pending.seq} but ended the run instead`,
            `You said you would ${pending.tools.length > 1 ? "use" : "call"} ${pending.tools.join(" / ")} ("${pending.text}") but you are ending without doing it. Do it, or say why not.`,
          );
        return proceed(this.name, "completion");
      }
      default:
        return proceed(this.name, "not watched");
    }
  }

  private establish(text: string, source: "user" | "tool", seq: number): void {
    for (const r of this.rules) {
      if (!r.re || !r.from.has(source)) continue;
      for (const m of text.matchAll(r.re)) {
        const v = m[1] ?? m[0];
        if (v.trim()) this.facts.set(r.rule.name, { value: v.trim(), source, seq });
      }
    }
  }

  private onAssistantText(text: string, ctx: GuardContext, reasoning: boolean, sameTurnCalls?: ToolCallInfo[]): GuardDecision {
    if (!reasoning && endsWithQuestion(text)) {
      const lastQuestion = text.split(/(?<=[.!?])\s+/).filter((s) => s.includes("?")).at(-1) ?? text;
      for (const r of this.rules) {
        const f = this.facts.get(r.rule.name);
        if (f && r.ask?.test(lastQuestion))
          return intervene(
            "warn",
            this.name,
            "1.4",
            `asks about ${r.rule.name}, established as "${f.value}" at event ${f.seq}`,
            `You already know ${r.rule.name} = ${f.value} (given at event ${f.seq}). Use it instead of asking again.`,
          );
      }
    }
    if (this.opts.checkAssistantText) {
      for (const r of this.rules) {
        const f = this.facts.get(r.rule.name);
        if (!f || !r.re) continue;
        for (const m of text.matchAll(r.re)) {
          const v = (m[1] ?? m[0]).trim();
          if (v && norm(v) !== norm(f.value)) return this.contradiction(r.rule.name, f, v, "your message");
        }
      }
    }
    const tools = this.intendedTools(text);
    if (tools.length === 0) return proceed(this.name, "no stated intention");
    const said = text.replace(/\s+/g, " ").trim().slice(0, 160);
    if (sameTurnCalls) {
      // The loop reported this turn's calls before its text: compare right away.
      if (sameTurnCalls.length === 0 || sameTurnCalls.some((c) => tools.includes(c.name))) return proceed(this.name, "intention matches this turn's calls");
      return this.mismatch(tools, sameTurnCalls[0]!.name, said, ctx.seq);
    }
    this.intent = { tools, text: said, seq: ctx.seq };
    return proceed(this.name, `intends ${tools.join("/")}`);
  }

  private onCall(call: ToolCallInfo): GuardDecision {
    const pending = this.intent;
    this.intent = undefined;
    this.known.add(call.name);
    for (const r of this.rules) {
      const f = this.facts.get(r.rule.name);
      if (!f || r.argKeys.size === 0) continue;
      const clash = valuesAtKeys(call.args, r.argKeys).find((v) => norm(v) !== norm(f.value));
      if (clash !== undefined) return this.contradiction(r.rule.name, f, String(clash), `${call.name}`);
    }
    if (pending && !pending.tools.includes(call.name)) return this.mismatch(pending.tools, call.name, pending.text, pending.seq);
    return proceed(this.name, pending ? "call matches the stated intention" : "call");
  }

  private intendedTools(text: string): string[] {
    if (this.known.size === 0) return [];
    const found = new Set<string>();
    for (const m of text.matchAll(INTENT_PATTERN)) {
      const clause = m[1] ?? "";
      if (/^\s*(?:not|never)\b/i.test(clause)) continue;
      for (const t of this.known) if (this.toolPattern(t).test(clause)) found.add(t);
    }
    return [...found];
  }

  private toolPattern(t: string): RegExp {
    let re = this.toolPatterns.get(t);
    if (!re) {
      // A tool named by a plain word ("calculate", "search") is only recognised quoted, or as `name(`, since the
      // word itself is ordinary prose; identifier-like names (get_logs, kubectl.apply, getLogs) are recognised bare.
      const identifierLike = /[_.\-\d]|[a-z][A-Z]/.test(t);
      const name = escapeRe(t);
      re = identifierLike ? new RegExp(`(?<![\\w.-])${name}(?![\\w-])`) : new RegExp(`[\`'"]${name}[\`'"]|(?<![\\w.-])${name}\\(`);
      this.toolPatterns.set(t, re);
    }
    return re;
  }

  private contradiction(fact: string, f: Fact, value: string, where: string): GuardDecision {
    return intervene(
      "warn",
      this.name,
      "1.4",
      `${where} uses ${fact} = "${value}", but "${f.value}" was established by the ${f.source} at event ${f.seq}`,
      `Check your context: ${fact} was established as "${f.value}" (event ${f.seq}), but ${where} uses "${value}".`,
    );
  }

  private mismatch(tools: string[], actual: string, said: string, seq: number): GuardDecision {
    return intervene(
      "warn",
      this.name,
      "2.6",
      `said it would use ${tools.join("/")} (event ${seq}) but called ${actual}`,
      `You said: "${said}", but you called ${actual}. Make your actions match your stated plan, or state the new plan.`,
    );
  }
}
