import { z } from "zod";
import { argsText, isFailedOutcome, isMutatingCall, isVerifyingCall, nameWords } from "../trace/actions.js";
import { canonicalJson, normalizeArgs } from "./equivalence.js";

// The action vocabulary lives in src/trace/actions.ts (shared with the rule detectors); re-exported for guard users.
export { argsText, nameWords, BOOKKEEPING_TOOLS, MUTATING_VERBS, READING_VERBS, SHELL_TOOLS, MUTATING_COMMAND_PATTERN, VERIFYING_COMMAND_PATTERN } from "../trace/actions.js";
import type { ToolCallInfo, ToolResultInfo } from "./types.js";

/**
 * Declarative predicates over tool calls and tool results, shared by the guards and the JSON config.
 * Code users may pass plain functions wherever a spec is accepted.
 */

const regexString = z.string().superRefine((s, ctx) => {
  try {
    new RegExp(s);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: `invalid regular expression: ${(e as Error).message}` });
  }
});

/** A value test: a literal means equality; an object combines comparisons (all must hold). */
export const ValueMatcherSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z
    .object({
      equals: z.unknown().optional(),
      in: z.array(z.unknown()).optional(),
      lt: z.number().optional(),
      lte: z.number().optional(),
      gt: z.number().optional(),
      gte: z.number().optional(),
      matches: regexString.optional(),
      exists: z.boolean().optional(),
    })
    .strict(),
]);

/** Which calls a rule is about. Every field given must match; an empty selector matches every call. */
export const ToolSelectorSpecSchema = z
  .object({
    /** Exact tool name(s). */
    tool: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
    /** Regular expression on the tool name. */
    toolPattern: regexString.optional(),
    /** Tool names this selector never matches, whatever else holds (e.g. plan bookkeeping like `update_plan`). */
    notTool: z.array(z.string()).min(1).optional(),
    /** Matches when a word of the tool name (split on `_`, `-`, `.`, camelCase) is one of these, e.g. `delete`. */
    toolVerbs: z.array(z.string()).min(1).optional(),
    /** Values at dotted paths of the (normalised) arguments, e.g. `{"namespace": "otel-demo"}`. */
    args: z.record(z.string(), ValueMatcherSchema).optional(),
    /** Regular expression on the arguments' text (all string and number values joined by spaces). */
    argsPattern: regexString.optional(),
  })
  .strict();

/** One selector, or several of which any may match. */
export const ToolSelectorConfigSchema = z.union([ToolSelectorSpecSchema, z.array(ToolSelectorSpecSchema).min(1)]);

export const TextMatcherSchema = z.union([
  z.string(),
  z
    .object({
      includes: z.string().optional(),
      excludes: z.string().optional(),
      matches: regexString.optional(),
      notMatches: regexString.optional(),
      ignoreCase: z.boolean().optional(),
    })
    .strict(),
]);

/** What a passing result looks like. All fields given must hold; an empty check means "the call succeeded". */
export const ResultCheckSpecSchema = z
  .object({
    /** Not an error and exit code 0 (or none). Defaults to true unless `exitCode` or `isError` is given. */
    ok: z.boolean().optional(),
    exitCode: z.number().int().optional(),
    isError: z.boolean().optional(),
    /** Text tests on the output (a plain string means "includes"). */
    output: z.union([TextMatcherSchema, z.array(TextMatcherSchema).min(1)]).optional(),
    /** Values at dotted paths of the output parsed as JSON, e.g. `{"alerts.length": 0}`; fails if not JSON. */
    json: z.record(z.string(), ValueMatcherSchema).optional(),
  })
  .strict();

export const EvidenceRuleSpecSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    /** Which tool results count as evidence for this rule (default: every result). */
    match: ToolSelectorConfigSchema.optional(),
    /** What the most recent such result must show. */
    pass: ResultCheckSpecSchema.optional(),
  })
  .strict();

export type ValueMatcher = z.infer<typeof ValueMatcherSchema>;
export type ToolSelectorSpec = z.infer<typeof ToolSelectorSpecSchema>;
export type TextMatcher = z.infer<typeof TextMatcherSchema>;
export type ResultCheckSpec = z.infer<typeof ResultCheckSpecSchema>;

export type ToolSelector = ToolSelectorSpec | readonly ToolSelectorSpec[] | ((call: ToolCallInfo) => boolean);
export type ResultCheck = ResultCheckSpec | ((result: ToolResultInfo) => boolean);

/** Evidence the user declares: the most recent result of a matching call must pass the check. */
export interface EvidenceRule {
  name: string;
  description?: string;
  match?: ToolSelector;
  pass?: ResultCheck;
}

/** Reads a dotted path (`a.b.0.length`) from a value; undefined when any part is missing. */
export function getPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const part of path.split(".")) {
    if (cur === null || cur === undefined) return undefined;
    if (typeof cur === "string" && part === "length") return cur.length;
    if (typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function matchValue(actual: unknown, m: ValueMatcher): boolean {
  if (m === null || typeof m !== "object") return actual === m || (typeof m === "string" && actual !== undefined && actual !== null && typeof actual !== "object" && String(actual) === m);
  if (m.exists !== undefined && (actual !== undefined) !== m.exists) return false;
  if (m.equals !== undefined && canonicalJson(normalizeArgs(actual)) !== canonicalJson(normalizeArgs(m.equals))) return false;
  if (m.in !== undefined && !m.in.some((x) => canonicalJson(x) === canonicalJson(actual))) return false;
  const n = typeof actual === "number" ? actual : typeof actual === "string" && actual.trim() !== "" ? Number(actual) : NaN;
  if (m.lt !== undefined && !(n < m.lt)) return false;
  if (m.lte !== undefined && !(n <= m.lte)) return false;
  if (m.gt !== undefined && !(n > m.gt)) return false;
  if (m.gte !== undefined && !(n >= m.gte)) return false;
  if (m.matches !== undefined && (actual === undefined || !new RegExp(m.matches).test(typeof actual === "string" ? actual : canonicalJson(actual)))) return false;
  return true;
}

function specMatches(spec: ToolSelectorSpec, call: ToolCallInfo): boolean {
  if (spec.tool !== undefined && !(Array.isArray(spec.tool) ? spec.tool : [spec.tool]).includes(call.name)) return false;
  if (spec.toolPattern !== undefined && !new RegExp(spec.toolPattern).test(call.name)) return false;
  if (spec.notTool?.includes(call.name)) return false;
  if (spec.toolVerbs !== undefined) {
    const verbs = new Set(spec.toolVerbs.map((v) => v.toLowerCase()));
    if (!nameWords(call.name).some((w) => verbs.has(w))) return false;
  }
  if (spec.args !== undefined) {
    const args = normalizeArgs(call.args ?? {}, { ignoreKeys: [] });
    for (const [path, m] of Object.entries(spec.args)) if (!matchValue(getPath(args, path), m)) return false;
  }
  if (spec.argsPattern !== undefined && !new RegExp(spec.argsPattern).test(argsText(call.args))) return false;
  return true;
}

/** Compiles a selector (spec, list of specs, or function) into a call predicate. */
export function toCallMatcher(selector: ToolSelector | undefined): (call: ToolCallInfo) => boolean {
  if (selector === undefined) return () => true;
  if (typeof selector === "function") return selector;
  const specs: readonly ToolSelectorSpec[] = Array.isArray(selector) ? selector : [selector as ToolSelectorSpec];
  return (call) => specs.some((s) => specMatches(s, call));
}

/**
 * A result is ok when it does not report failure: not flagged as an error, exit code 0 if it has one, and — without
 * either — output that does not open with an error (`Error: user not found`). Shared with the rule detectors.
 */
export function resultOk(r: ToolResultInfo): boolean {
  return !isFailedOutcome(r);
}

function textMatches(text: string, m: TextMatcher): boolean {
  if (typeof m === "string") return text.includes(m);
  const flags = m.ignoreCase ? "i" : "";
  const t = m.ignoreCase ? text.toLowerCase() : text;
  if (m.includes !== undefined && !t.includes(m.ignoreCase ? m.includes.toLowerCase() : m.includes)) return false;
  if (m.excludes !== undefined && t.includes(m.ignoreCase ? m.excludes.toLowerCase() : m.excludes)) return false;
  if (m.matches !== undefined && !new RegExp(m.matches, flags).test(text)) return false;
  if (m.notMatches !== undefined && new RegExp(m.notMatches, flags).test(text)) return false;
  return true;
}

/** Compiles a result check (spec or function) into a predicate; no check means "the call succeeded". */
export function toResultCheck(check: ResultCheck | undefined): (r: ToolResultInfo) => boolean {
  if (check === undefined) return resultOk;
  if (typeof check === "function") return check;
  return (r) => {
    const wantOk = check.ok ?? (check.exitCode === undefined && check.isError === undefined);
    if (wantOk && !resultOk(r)) return false;
    if (check.ok === false && resultOk(r)) return false;
    if (check.exitCode !== undefined && r.exitCode !== check.exitCode) return false;
    if (check.isError !== undefined && (r.isError ?? false) !== check.isError) return false;
    const out = r.output ?? "";
    if (check.output !== undefined) {
      const list = Array.isArray(check.output) ? check.output : [check.output];
      if (!list.every((m) => textMatches(out, m))) return false;
    }
    if (check.json !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(out);
      } catch {
        return false;
      }
      for (const [path, m] of Object.entries(check.json)) if (!matchValue(getPath(parsed, path), m)) return false;
    }
    return true;
  };
}

/** A short human description of a selector, for messages ("get_alerts", "tools matching /restart/"). */
export function describeSelector(selector: ToolSelector | undefined): string {
  if (selector === undefined) return "any tool";
  if (typeof selector === "function") return "a matching tool";
  const specs: readonly ToolSelectorSpec[] = Array.isArray(selector) ? selector : [selector as ToolSelectorSpec];
  const one = (s: ToolSelectorSpec) => {
    const parts: string[] = [];
    if (s.tool !== undefined) parts.push(Array.isArray(s.tool) ? s.tool.join("|") : (s.tool as string));
    if (s.toolPattern !== undefined) parts.push(`tool /${s.toolPattern}/`);
    if (s.notTool !== undefined) parts.push(`not ${s.notTool.join("|")}`);
    if (s.toolVerbs !== undefined) parts.push(`a ${s.toolVerbs.slice(0, 4).join("/")}… tool`);
    if (s.args !== undefined) parts.push(`args ${Object.entries(s.args).map(([k, v]) => `${k}=${canonicalJson(v)}`).join(", ")}`);
    if (s.argsPattern !== undefined) parts.push(`args /${s.argsPattern}/`);
    return parts.join(" with ") || "any tool";
  };
  return specs.map(one).join(" or ");
}

export type EvidenceState = "satisfied" | "missing" | "failing" | "stale";

export interface EvidenceStatus {
  rule: string;
  description?: string;
  state: EvidenceState;
  /** Sequence number and source step of the result the state rests on. */
  seq?: number;
  step?: number;
  /** One line saying what was (not) seen. */
  detail: string;
}

interface Observation {
  passed: boolean;
  seq: number;
  step?: number;
  tool: string;
  summary: string;
}

function summarizeResult(r: ToolResultInfo): string {
  const head = (r.output ?? "").replace(/\s+/g, " ").trim().slice(0, 80);
  const code = r.exitCode !== undefined ? ` exit ${r.exitCode}` : "";
  return `${r.name}${code}${r.isError ? " (error)" : ""}${head ? `: "${head}"` : ""}`;
}

/**
 * Tracks declared evidence over a run: for each rule, the most recent result of a matching call decides.
 * With `invalidatedBy`, evidence older than the latest matching call (a change) is stale.
 */
export class EvidenceTracker {
  private readonly compiled: { rule: EvidenceRule; match: (c: ToolCallInfo) => boolean; pass: (r: ToolResultInfo) => boolean }[];
  private readonly invalidates?: (c: ToolCallInfo) => boolean;
  private readonly latest = new Map<string, Observation>();
  private lastChange?: { seq: number; tool: string };

  constructor(readonly rules: readonly EvidenceRule[], invalidatedBy?: ToolSelector) {
    this.compiled = rules.map((rule) => ({ rule, match: toCallMatcher(rule.match), pass: toResultCheck(rule.pass) }));
    if (invalidatedBy !== undefined) this.invalidates = toCallMatcher(invalidatedBy);
  }

  onCall(call: ToolCallInfo, seq: number): void {
    if (this.invalidates?.(call)) this.lastChange = { seq, tool: call.name };
  }

  onResult(result: ToolResultInfo, seq: number, step?: number): void {
    const asCall: ToolCallInfo = { name: result.name, args: result.args, id: result.callId };
    for (const c of this.compiled) {
      if (!c.match(asCall)) continue;
      this.latest.set(c.rule.name, { passed: c.pass(result), seq, step, tool: result.name, summary: summarizeResult(result) });
    }
  }

  status(): EvidenceStatus[] {
    return this.compiled.map(({ rule }) => {
      const o = this.latest.get(rule.name);
      const base = { rule: rule.name, ...(rule.description ? { description: rule.description } : {}) };
      if (!o) return { ...base, state: "missing", detail: `no result from ${describeSelector(rule.match)} yet` };
      const at = { seq: o.seq, ...(o.step !== undefined ? { step: o.step } : {}) };
      // Evidence older than the latest change says nothing about the present, whether it passed or not.
      if (this.lastChange && o.seq < this.lastChange.seq)
        return { ...base, ...at, state: "stale", detail: `${o.passed ? "passed" : "checked"} before the latest change (${this.lastChange.tool}); check again` };
      if (!o.passed) return { ...base, ...at, state: "failing", detail: `latest result does not pass: ${o.summary}` };
      return { ...base, ...at, state: "satisfied", detail: o.summary };
    });
  }

  satisfied(): boolean {
    return this.status().every((s) => s.state === "satisfied");
  }

  reset(): void {
    this.latest.clear();
    this.lastChange = undefined;
  }
}

/**
 * The built-in idea of a mutating call, shared with the rule detectors (src/trace/actions.ts `isMutatingCall`): file
 * edits (not views), mutating shell commands, and domain tools named by a mutating verb — never plan bookkeeping,
 * handoffs or tools whose name says they read (`get_…`, `can_…`) or analyse (`…_analysis`).
 */
export const DEFAULT_MUTATING = (call: ToolCallInfo): boolean => isMutatingCall(call);

/**
 * The built-in idea of a check: a call that reads, tests or validates (`get_…`, `jq .`, `pytest`, `kubectl get`) and
 * does not itself change anything (src/trace/actions.ts `isVerifyingCall`).
 */
export const DEFAULT_CHECK = (call: ToolCallInfo): boolean => isVerifyingCall(call) && !isMutatingCall(call);
