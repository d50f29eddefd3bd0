import type { Finding, Step, Trace } from "../trace/index.js";
import { normalizeWhitespace, stepContent } from "../trace/index.js";

/** Stable JSON with sorted keys and folded whitespace: equal arguments give equal strings. */
export function canonicalArgs(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (typeof x === "string") return normalizeWhitespace(x);
    if (Array.isArray(x)) return x.map(norm);
    if (x && typeof x === "object")
      return Object.fromEntries(Object.keys(x as object).sort().map((k) => [k, norm((x as Record<string, unknown>)[k])]));
    return x;
  };
  return JSON.stringify(norm(v) ?? null);
}

export const toolCalls = (t: Trace) => t.steps.filter((s) => s.kind === "tool_call" && s.tool);
export const resultOf = (t: Trace, call: Step): Step | undefined =>
  call.tool?.resultIndex !== undefined ? t.steps[call.tool.resultIndex] : undefined;

/** Assistant steps that say something (not empty turns). */
export const assistantTexts = (t: Trace) =>
  t.steps.filter((s) => s.role === "assistant" && (s.kind === "message" || s.kind === "reasoning") && (s.text ?? "").trim() !== "");

/** The command line of a shell-like call, as text, or undefined for other tools. */
export function commandOf(s: Step): string | undefined {
  const a = s.tool?.args;
  if (!a) return undefined;
  if (typeof a === "string") return a;
  if (typeof a === "object") {
    const o = a as Record<string, unknown>;
    const c = o.command ?? o.cmd ?? o.code ?? o.script;
    if (Array.isArray(c)) return c.map(String).join(" ");
    if (typeof c === "string") return c;
  }
  return undefined;
}

/** A tool result that reports failure: error flag, non-zero exit code, or output that opens with an error. */
export function isFailedResult(s: Step | undefined): boolean {
  if (!s) return false;
  if (s.tool?.isError === true) return true;
  if (s.tool?.exitCode !== undefined) return s.tool.exitCode !== 0;
  return /^\s*(error|exception|traceback \(most recent call last\)|failed|fatal)\b/i.test(s.tool?.output ?? s.text ?? "");
}

/** Domain tools named by a verb that changes state (tau-bench `update_reservation`, `cancel_order`, …). */
const MUTATING_VERB = /^(update|create|delete|remove|cancel|book|modify|set|add|write|send|exchange|return|post|put|insert|edit|apply|upload|move|rename|restart|scale|deploy)_/i;
/** Domain tools named by a verb that reads state. */
const READING_VERB = /^(get|find|list|search|check|read|view|describe|query|fetch|lookup|show|inspect|verify|validate|test)_/i;

/** A quote of at most `max` characters from a step's own content, around the first match of `re` if given. */
export function quote(step: Step, re?: RegExp, max = 160): string {
  const content = stepContent(step);
  if (!content) return "";
  let start = 0;
  if (re) {
    const m = re.exec(content);
    // start at the beginning of the sentence that holds the match, so the quote reads as a claim
    if (m) {
      const before = content.slice(Math.max(0, m.index - max / 2), m.index);
      const b = Math.max(before.lastIndexOf(". "), before.lastIndexOf("\n"), before.lastIndexOf("! "), before.lastIndexOf("? "));
      start = b >= 0 ? m.index - before.length + b + 1 : Math.max(0, m.index - before.length);
      while (start < m.index && /\s/.test(content[start]!)) start++;
    }
  }
  let q = content.slice(start, start + max);
  // quotes end at a whitespace boundary so they read well; they stay verbatim substrings
  if (start + max < content.length) {
    const cut = q.lastIndexOf(" ");
    if (cut > max / 2) q = q.slice(0, cut);
  }
  q = q.trim();
  // a quote of punctuation only ("{") says nothing: take the first line with words instead
  if (!/\w{3}/.test(q)) {
    const line = content.split("\n").find((l) => /\w{3}/.test(l));
    if (line) q = line.trim().slice(0, max);
  }
  return q;
}

export function finding(
  detector: string,
  mode: string,
  steps: Step[],
  evidence: string,
  rationale: string,
  confidence: number,
): Finding {
  const agent = steps.find((s) => s.role === "assistant")?.agent ?? steps[0]?.agent;
  return {
    mode,
    confidence: Math.round(confidence * 100) / 100,
    steps: [...new Set(steps.map((s) => s.index))].sort((a, b) => a - b),
    agent,
    evidence,
    detector: `rules/${detector}`,
    rationale,
  };
}

/** Tools that change the world (write files, apply patches, mutate a cluster) as opposed to reading it. */
export function isMutating(s: Step): boolean {
  const name = (s.tool?.name ?? "").toLowerCase();
  if (/^(apply_patch|write|write_file|edit|str_replace|str_replace_editor|create|create_file|insert|file_change|edit_file|replace|patch)$/.test(name)) {
    const cmd = JSON.stringify(s.tool?.args ?? "");
    return !/"command":\s*"view"/.test(cmd);
  }
  if (MUTATING_VERB.test(name)) return true;
  const cmd = commandOf(s) ?? "";
  return /\b(kubectl\s+(apply|patch|delete|edit|scale|rollout\s+restart|set)|sed\s+-i|tee\s|>\s*[\w./-]+|git\s+(commit|apply|checkout)|rm\s+-|mv\s|cp\s|pip\s+install|npm\s+install|cat\s*>\s*)/.test(cmd);
}

/** Actions that check a result: tests, builds, validation, reading back, status queries. */
export function isVerification(s: Step): boolean {
  const name = (s.tool?.name ?? "").toLowerCase();
  if (READING_VERB.test(name)) return true;
  const cmd = `${commandOf(s) ?? ""} ${name}`.toLowerCase();
  return /\b(pytest|py\.test|unittest|npm\s+(run\s+)?test|go\s+test|cargo\s+test|make\s+test|tox|jest|vitest|mocha|python[0-9.]*\s+[\w./-]*(test|repro|reproduce|check|verify)\w*\.py|python[0-9.]*\s+-c|jq\b|json\.tool|json\.load|kubectl\s+(get|describe|logs|rollout\s+status)|curl\b|diff\b|git\s+diff|cat\b|head\b|tail\b|grep\b|ls\b|validate|verify|check|open\b|view\b)/.test(cmd);
}

/** The agent-side steps of a trace in order (assistant and tool), skipping injected and harness context. */
export const agentSteps = (t: Trace) => t.steps.filter((s) => s.role === "assistant" || s.role === "tool");

export const hasTag = (s: Step, tag: string) => s.tags?.includes(tag) ?? false;
