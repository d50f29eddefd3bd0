import type { Finding, Step, Trace } from "../trace/index.js";

/**
 * Redaction applied to everything that leaves the machine (trace text, tool arguments and outputs, the task, rule
 * hints). Secrets are replaced by `[REDACTED:<kind>]`, and the number of replacements is counted per kind so each
 * trace's record says how much was removed.
 */

export interface RedactionPattern {
  /** Short name used in the placeholder and in the counts, e.g. `email`. */
  kind: string;
  /** A regular expression source (string) or RegExp; it is always applied globally. */
  pattern: string | RegExp;
  /**
   * Replacement text; `$1`-style groups are allowed to keep a non-secret prefix. Defaults to `[REDACTED:<kind>]`.
   */
  replacement?: string;
}

export interface RedactionConfig {
  /** Use the built-in patterns (default true). */
  defaults?: boolean;
  /** Built-in kinds to switch off, e.g. `["email"]`. */
  disable?: string[];
  /** Extra patterns, applied after the built-in ones. */
  patterns?: RedactionPattern[];
}

export const placeholder = (kind: string): string => `[REDACTED:${kind}]`;

/**
 * Built-in patterns, in application order. Order matters: private keys go first (their bodies look like tokens), and
 * URL passwords before e-mails (in `user:pass@host.com`, `pass@host.com` would otherwise look like an address).
 */
export const DEFAULT_PATTERNS: readonly RedactionPattern[] = [
  { kind: "private-key", pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: "bearer-token", pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*/, replacement: `$1 ${placeholder("bearer-token")}` },
  { kind: "url-password", pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+(@)/i, replacement: `$1${placeholder("url-password")}$2` },
  {
    kind: "api-key",
    pattern:
      /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_-]{20,})\b/,
  },
  {
    // `api_key = "…"`, `"password": "…"`: keep the name, drop the value.
    kind: "secret-assignment",
    pattern: /\b((?:api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*["']?)(?!\[REDACTED)[^\s"',;]{6,}/i,
    replacement: `$1${placeholder("secret-assignment")}`,
  },
  { kind: "email", pattern: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/ },
];

export type RedactionCounts = Record<string, number>;

interface CompiledPattern {
  kind: string;
  re: RegExp;
  replacement: string;
}

export class Redactor {
  private readonly compiled: CompiledPattern[];
  /** A stable description of the active patterns, part of the judge's cache settings. */
  readonly signature: string;

  constructor(config: RedactionConfig = {}) {
    const off = new Set(config.disable ?? []);
    const chosen = [...(config.defaults === false ? [] : DEFAULT_PATTERNS.filter((p) => !off.has(p.kind))), ...(config.patterns ?? [])];
    this.compiled = chosen.map((p) => {
      let re: RegExp;
      try {
        re = typeof p.pattern === "string" ? new RegExp(p.pattern, "g") : new RegExp(p.pattern.source, p.pattern.flags.includes("g") ? p.pattern.flags : `${p.pattern.flags}g`);
      } catch (e) {
        throw new Error(`redaction pattern "${p.kind}" is not a valid regular expression: ${(e as Error).message}`);
      }
      if (re.test("")) throw new Error(`redaction pattern "${p.kind}" matches the empty string`);
      return { kind: p.kind, re, replacement: p.replacement ?? placeholder(p.kind) };
    });
    this.signature = this.compiled.map((p) => `${p.kind}:${p.re.source}/${p.re.flags}->${p.replacement}`).join("\n");
  }

  /** Redacts one string, adding to `counts`. */
  text(s: string, counts: RedactionCounts): string {
    let out = s;
    for (const p of this.compiled) {
      p.re.lastIndex = 0;
      out = out.replace(p.re, (...args: unknown[]) => {
        counts[p.kind] = (counts[p.kind] ?? 0) + 1;
        // Expand $n groups by hand: a function replacer does not do it for us.
        const groups = args.slice(1, -2) as (string | undefined)[];
        return p.replacement.replace(/\$(\d)/g, (_, d: string) => groups[Number(d) - 1] ?? "");
      });
    }
    return out;
  }

  /** Redacts every string inside a JSON-like value (tool arguments), keys included. */
  value(v: unknown, counts: RedactionCounts): unknown {
    if (typeof v === "string") return this.text(v, counts);
    if (Array.isArray(v)) return v.map((x) => this.value(x, counts));
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [this.text(k, counts), this.value(x, counts)]));
    return v;
  }

  /** A redacted copy of the parts of a trace that reach the prompt: task, agents and step contents. */
  trace(trace: Trace): { trace: Trace; counts: RedactionCounts; total: number } {
    const counts: RedactionCounts = {};
    const steps: Step[] = trace.steps.map((s) => {
      const copy: Step = { ...s, agent: this.text(s.agent, counts) };
      if (s.text !== undefined) copy.text = this.text(s.text, counts);
      if (s.tool) {
        copy.tool = { ...s.tool, name: this.text(s.tool.name, counts) };
        if (s.tool.args !== undefined) copy.tool.args = this.value(s.tool.args, counts);
        if (s.tool.output !== undefined) copy.tool.output = this.text(s.tool.output, counts);
      }
      return copy;
    });
    const task = trace.task ? { ...trace.task, text: trace.task.text !== undefined ? this.text(trace.task.text, counts) : undefined } : undefined;
    const agents = trace.agents.map((a) => this.text(a, counts));
    return { trace: { ...trace, task, agents, steps }, counts, total: sumCounts(counts) };
  }

  /** Redacted copies of rule findings given to the judge as hints. */
  findings(findings: Finding[], counts: RedactionCounts): Finding[] {
    return findings.map((f) => ({ ...f, evidence: this.text(f.evidence, counts), rationale: f.rationale !== undefined ? this.text(f.rationale, counts) : undefined }));
  }
}

export function sumCounts(counts: RedactionCounts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

export function mergeCounts(into: RedactionCounts, from: RedactionCounts): RedactionCounts {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  return into;
}
