import { endsWithQuestion } from "../trace/claims.js";
import { toCallMatcher, type ToolSelector } from "./predicates.js";
import { intervene, proceed, type Guard, type GuardContext, type GuardDecision, type GuardEvent, type ToolCallInfo } from "./types.js";

/**
 * A declared ambiguity rule over the task's user text. Exactly one of `matches`, `missing`, `multiple`, `test`:
 * - `matches`: ambiguous when the text matches (a vague phrase: "the service", "fix it").
 * - `missing`: ambiguous when the text does not match (a needed detail is absent: no namespace given).
 * - `multiple`: ambiguous when the pattern finds two or more distinct values (two services named).
 */
export interface AmbiguityRule {
  name: string;
  /** What to ask about; shown to the model. */
  description?: string;
  matches?: string | RegExp;
  missing?: string | RegExp;
  multiple?: string | RegExp;
  test?: (text: string) => boolean;
}

export interface ClarifyOptions {
  rules: AmbiguityRule[];
  /** Tools blocked while ambiguous. When neither `mutating` nor `readOnly` is given, every tool counts as mutating. */
  mutating?: ToolSelector;
  /** Tools always allowed while ambiguous (they only read). */
  readOnly?: ToolSelector;
  /** Tools that ask the user (e.g. `ask_user`): calling one is a clarification request, its result the answer. */
  clarifyTools?: string[];
  /** Patterns are case-insensitive unless this is false. */
  ignoreCase?: boolean;
}

export const CLARIFY_GATE = "clarify-gate";

interface CompiledRule {
  rule: AmbiguityRule;
  ambiguous: (text: string) => boolean;
}

function compile(rule: AmbiguityRule, ignoreCase: boolean): CompiledRule {
  const re = (p: string | RegExp, global = false) => {
    const flags = (typeof p === "string" ? "" : p.flags.replace("g", "")) + (ignoreCase ? "i" : "") + (global ? "g" : "");
    return new RegExp(typeof p === "string" ? p : p.source, [...new Set(flags)].join(""));
  };
  const given = [rule.matches, rule.missing, rule.multiple, rule.test].filter((x) => x !== undefined).length;
  if (given !== 1) throw new Error(`ambiguity rule "${rule.name}": give exactly one of matches, missing, multiple, test`);
  if (rule.test) return { rule, ambiguous: rule.test };
  if (rule.matches !== undefined) {
    const r = re(rule.matches);
    return { rule, ambiguous: (t) => r.test(t) };
  }
  if (rule.missing !== undefined) {
    const r = re(rule.missing);
    return { rule, ambiguous: (t) => !r.test(t) };
  }
  const r = re(rule.multiple!, true);
  return {
    rule,
    ambiguous: (t) => {
      const values = new Set([...t.matchAll(r)].map((m) => (m[1] ?? m[0]).toLowerCase()));
      return values.size >= 2;
    },
  };
}

/**
 * Make ambiguity an explicit branch (FM-2.2): when the task's user text trips a declared ambiguity rule, the run goes
 * read-only — mutating tool calls are blocked — until a clarification is obtained: the agent asks (a message ending
 * in a question, or a call to a clarify tool) and an answer arrives (the next user message, or that tool's result).
 * Answers are not re-checked against the rules they resolve; later task messages can raise new rules.
 */
export class ClarifyGate implements Guard {
  readonly name = CLARIFY_GATE;
  readonly modes = ["2.2"] as const;
  private readonly rules: CompiledRule[];
  private readonly isMutating: (c: ToolCallInfo) => boolean;
  private readonly isReadOnly: (c: ToolCallInfo) => boolean;
  private readonly clarifyTools: Set<string>;
  private taskText = "";
  private raised = new Map<string, AmbiguityRule>();
  private resolved = new Set<string>();
  private awaitingAnswer = false;

  constructor(opts: ClarifyOptions) {
    const ignoreCase = opts.ignoreCase ?? true;
    this.rules = opts.rules.map((r) => compile(r, ignoreCase));
    const neither = opts.mutating === undefined && opts.readOnly === undefined;
    this.isMutating = neither ? () => true : opts.mutating !== undefined ? toCallMatcher(opts.mutating) : () => true;
    this.isReadOnly = opts.readOnly !== undefined ? toCallMatcher(opts.readOnly) : () => false;
    this.clarifyTools = new Set(opts.clarifyTools ?? []);
  }

  /** True while mutating tools are blocked. */
  get readOnlyMode(): boolean {
    return this.raised.size > 0;
  }

  /** The rules currently unresolved. */
  get ambiguities(): AmbiguityRule[] {
    return [...this.raised.values()];
  }

  /** Declares ambiguity from code (e.g. a tool found two matching resources). */
  raise(rule: Pick<AmbiguityRule, "name" | "description">): void {
    this.raised.set(rule.name, rule);
  }

  /** Records a clarification obtained outside the conversation. */
  resolve(): void {
    for (const name of this.raised.keys()) this.resolved.add(name);
    this.raised.clear();
    this.awaitingAnswer = false;
  }

  reset(): void {
    this.taskText = "";
    this.raised.clear();
    this.resolved.clear();
    this.awaitingAnswer = false;
  }

  observe(event: GuardEvent, _ctx: GuardContext): GuardDecision {
    switch (event.type) {
      case "message":
        if (event.role === "user") return this.onUser(event.text);
        if (event.role === "assistant" && !event.reasoning && this.readOnlyMode && endsWithQuestion(event.text)) {
          this.awaitingAnswer = true;
          return proceed(this.name, "clarification requested");
        }
        return proceed(this.name, "message");
      case "tool_call":
        return this.onCall(event.call);
      case "tool_result":
        if (this.clarifyTools.has(event.result.name) && this.awaitingAnswer) return this.answered(`answer from ${event.result.name}`);
        return proceed(this.name, "result");
      default:
        return proceed(this.name, "not watched");
    }
  }

  private onUser(text: string): GuardDecision {
    if (this.awaitingAnswer && this.readOnlyMode) return this.answered("user answered the clarifying question");
    this.taskText += `${text}\n`;
    const fresh = this.rules.filter((c) => !this.resolved.has(c.rule.name) && !this.raised.has(c.rule.name) && c.ambiguous(this.taskText));
    if (fresh.length === 0) return proceed(this.name, this.readOnlyMode ? "still ambiguous" : "no ambiguity rule applies");
    for (const c of fresh) this.raised.set(c.rule.name, c.rule);
    const what = fresh.map((c) => `- ${c.rule.name}${c.rule.description ? `: ${c.rule.description}` : ""}`).join("\n");
    return intervene(
      "warn",
      this.name,
      "2.2",
      `ambiguous input by rule ${fresh.map((c) => `"${c.rule.name}"`).join(", ")}; read-only until clarified`,
      `The request is ambiguous:\n${what}\nAsk a clarifying question before changing anything. Until it is answered, only read-only tools are allowed.`,
    );
  }

  private onCall(call: ToolCallInfo): GuardDecision {
    if (this.clarifyTools.has(call.name)) {
      if (this.readOnlyMode) this.awaitingAnswer = true;
      return proceed(this.name, "clarification requested through a tool");
    }
    if (!this.readOnlyMode) return proceed(this.name, "inputs unambiguous");
    if (this.isReadOnly(call) || !this.isMutating(call)) return proceed(this.name, `${call.name} is read-only`);
    const names = [...this.raised.keys()].map((n) => `"${n}"`).join(", ");
    return intervene(
      "block",
      this.name,
      "2.2",
      `mutating call ${call.name} while ambiguity ${names} is unresolved`,
      `${call.name} changes state and the request is still ambiguous (${names}). It was not executed. Ask for clarification first; read-only tools remain available.`,
    );
  }

  private answered(reason: string): GuardDecision {
    this.resolve();
    return proceed(this.name, `${reason}; read-only mode lifted`);
  }
}
