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
   * Built-in patterns may give a function instead, which sees the match and its groups and returns the replacement, or
   * `null` to leave that match alone (it is then not counted).
   */
  replacement?: string | RedactionReplacer;
}

export type RedactionReplacer = (match: string, groups: (string | undefined)[], named: Record<string, string | undefined>) => string | null;

export interface RedactionConfig {
  /** Use the built-in patterns (default true). */
  defaults?: boolean;
  /** Built-in kinds to switch off, e.g. `["email"]`. */
  disable?: string[];
  /** Extra patterns, applied after the built-in ones. */
  patterns?: RedactionPattern[];
}

export const placeholder = (kind: string): string => `[REDACTED:${kind}]`;

/** Bump when the built-in redaction logic changes beyond the pattern sources (it is part of the cache signature). */
const BUILTIN_REVISION = 2;

// ---------------------------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------------------------

/** A line break, raw or JSON-escaped once or more (`\n`, `\\n`), as in a key pasted into a JSON string. */
const NL = String.raw`(?:\r?\n|(?:\\+r)?\\+n)`;
const PEM_BEGIN = String.raw`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`;
const PEM_END = String.raw`-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`;
/**
 * The body of a key whose END line is missing (the field was cut): whole lines of base64 or PEM headers, or — for a
 * key flattened onto one line — space-separated base64 runs of 16+ characters or ending in padding; then possibly the
 * start of the END line. Prose after the body is not taken.
 */
const PEM_TRUNCATED_BODY =
  String.raw`(?:${NL}[ \t]*(?:[A-Za-z0-9+/=]+(?=[ \t]*(?:${NL}|\\*["'` + "`" + String.raw`]|$))|(?:Proc-Type|DEK-Info|Comment):[^\r\n\\]*)` +
  String.raw`|[ \t]+(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]*={1,2})(?![A-Za-z0-9+/=]))*` +
  String.raw`(?:${NL}[ \t]*-{2,5}(?:END[ A-Z0-9]*-{0,5})?)?`;

/** Characters of an identifier-like key: `AWS_SECRET_ACCESS_KEY`, `x-api-key`, `spring.datasource.password`. */
const ID = String.raw`[A-Za-z0-9_.\-]`;
/**
 * Key names whose value is a secret. The key must END with one of these words — any prefix is allowed (`DB_PASSWORD`,
 * `clientSecret`, `x-api-key`, `GITHUB_TOKEN`) — so `password_field_label`, `max_tokens` or `token_count` are not.
 */
const secretWords = (sep: string) =>
  String.raw`pass(?:word|wd|phrase)(?:${sep}?(?:confirm(?:ation)?|again|repeat|\d))?|secret|token|` +
  String.raw`(?:api|access|secret|private|signing|encryption|master|account|auth|app|consumer|session)${sep}?key`;
/** Header-like keys whose whole value is a credential (an auth scheme word in front of it is kept). */
const HEADER_WORDS = String.raw`(?:proxy[_\-])?authorization|(?:set[_\-])?cookie`;
const AUTH_SCHEME = /^(\s*)((?:bearer|basic|digest|token|negotiate|ntlm|hoba|mutual|apikey|sso-key|aws4-hmac-sha256)\s+)?/i;

/** A structured key (JSON object, tool argument) naming a secret, or a credential header. */
const SECRET_KEY_RE = new RegExp(String.raw`^[\w.\- ]*?(?:${secretWords(String.raw`[_\- ]`)})$`, "i");
const HEADER_KEY_RE = new RegExp(String.raw`^[\w.\- ]*?(?:${HEADER_WORDS})$`, "i");
/** Keys whose number value is a secret too (a PIN-like password); a number under `…token` or `…key` is a count or an id. */
const NUMERIC_SECRET_KEY_RE = /(?:pass(?:word|wd|phrase)|secret)[\w ]{0,12}$/i;

/**
 * Values that name a type, a flag or a placeholder rather than hold a secret: `password: str`, `token: null`,
 * `"api_key": "<your key>"`, `token = 'YOUR_ACCESS_TOKEN'`, `f"Bearer {token}"`, `"****"`.
 */
const NOT_A_SECRET =
  /^(?:true|false|null|nil|none|undefined|yes|no|on|off|required|optional|str|string|int|integer|number|float|bool|boolean|bytes|any|object|secretstr|\*+|x{3,}|\.{2,}|…|<[^<>]*>|\{[^{}]*\}|\{\{[^{}]*\}\}|%s|%\([^)]*\)s|\?|your[_\- ].*|.*(?:_HERE|CHANGE_?ME|PLACEHOLDER|REPLACE_?ME).*)$/i;
/** Unquoted words that start an expression, not a literal: `token = try tokens.shift()`, `password = input(…)`. */
const CODE_WORD = /^(?:try|await|new|yield|lambda|function|fn|if|not|match|input|getpass|self|this|cls|args|kwargs|params|options|opts|config|settings|env|data|request|req|response|res|result|get|read|prompt)$/i;
/** A reference to an environment variable or a template, not its value: `$DB_PASSWORD`, `${API_TOKEN}`, `${{ secrets.X }}`, `$(cat f)`. */
const ENV_REF = /^\$(?:\{|\(|[A-Z_][A-Z0-9_]*$)/;
/** Unquoted code that reads a secret from elsewhere: `os.environ[…]`, `getpass(…)`, `args.api_key`, `self.password`. */
const CODE_CALL = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[[(]/;
const CODE_MEMBER = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;
const SECRETISH_NAME = /pass|secret|token|key|auth|cred/i;

/** Whether `value` (assigned to a secret-named key) looks like a secret worth removing. */
function secretValue(value: string, key: string | undefined, quoted: boolean, minLength = 1): boolean {
  const v = value.trim();
  if (v.length < minLength || NOT_A_SECRET.test(v) || ENV_REF.test(v) || v.startsWith("[REDACTED:")) return false;
  if (!quoted) {
    const type = v.replace(/[[(<].*$/, "");
    if (type && NOT_A_SECRET.test(type) && type !== v) return false; // Optional[str], List<string>
    if (CODE_CALL.test(v) || CODE_WORD.test(v)) return false;
    if (CODE_MEMBER.test(v) && SECRETISH_NAME.test(v.slice(v.lastIndexOf(".") + 1))) return false;
    if (key && v.toLowerCase() === key.toLowerCase().replace(/^-+/, "")) return false; // password=password (a pass-through)
  }
  return true;
}

/**
 * `key <sep> value` in text, in four shapes: a quoted key that is closed (`"password": …`, `\"password\": …` inside a
 * JSON string, at any escaping depth), a bare key (`DB_PASSWORD=…`, `password: …`, `?password=…&`), a key just after an
 * opening quote that is not closed (`"Password: hunter2"`: only an unquoted value, so `"Password: "` is left alone),
 * and a command-line flag (`--password hunter2`). The value is quoted (up to its closing quote, at the same escaping
 * depth) or bare; it always ends the match, so a replacer can swap it out.
 */
function keyValueSource(words: string, bareValue: (g: string) => string): string {
  const key = `${ID}*?(?:${words})(?!${ID})`;
  // `=`, `:`, `=>`, `:=` — not `==` (a comparison) nor `::` (a path).
  const sep = String.raw`[ \t]*(?:=>|:=|=(?!=)|:(?!:))[ \t]*`;
  const q = "[\"'`]";
  // A quoted value, after an optional string prefix (f"…", r'…', b"…").
  const quotedValue = (g: string) => String.raw`(?:[rbfuRBFU]{1,2}(?=\\*${q}))?(?<${g}o>\\*${q})(?<${g}q>(?:(?!\[REDACTED)[^\r\n])*?)(?=(?<!\\)\k<${g}o>|[\r\n]|$)`;
  const value = (g: string) => `(?:${quotedValue(g)}|${bareValue(g)})`;
  return [
    String.raw`(?<![A-Za-z0-9_.\-\\])(?<ak>\\*${q})(?<akn>${key})\k<ak>${sep}${value("a")}`,
    String.raw`(?<![A-Za-z0-9_.\-"'` + "`" + String.raw`\\])(?<bkn>${key})${sep}${value("b")}`,
    String.raw`(?<=${q})(?<ckn>${key})${sep}${bareValue("c")}`,
    String.raw`(?<![A-Za-z0-9_.\-])(?<dkn>--?[A-Za-z0-9\-]*?(?:${words}))(?![A-Za-z0-9_.\-=])[ \t]+(?!-)${bareValue("d")}`,
  ].join("|");
}
/** A bare value: up to whitespace, a quote, a backslash or a separator (`&`, `,`, `;`, closing brackets). */
const bareToken = (g: string) => String.raw`(?<${g}u>(?![[{(])(?!\[REDACTED)[^\s"'` + "`" + String.raw`\\,;&)}\]]+)`;
/** A bare header value: the rest of the line (up to a quote or a backslash). */
const bareLine = (g: string) => String.raw`(?<${g}u>(?:(?!\[REDACTED)[^\r\n"'` + "`" + String.raw`\\])+)(?=[\r\n"'` + "`" + String.raw`\\]|$)`;

function namedValue(n: Record<string, string | undefined>): { key?: string; value?: string; quoted: boolean } {
  const key = n.akn ?? n.bkn ?? n.ckn ?? n.dkn;
  const q = n.aq ?? n.bq;
  if (q !== undefined) return { key, value: q, quoted: true };
  return { key, value: n.au ?? n.bu ?? n.cu ?? n.du, quoted: false };
}

const assignmentReplacer: RedactionReplacer = (m, _g, n) => {
  const { key, value, quoted } = namedValue(n);
  if (!value) return null;
  // `KEY=v` (env, query string, flag) takes any length; `key: v` or `key = v` needs three characters, and after a
  // colon a single capitalised word is prose ("API Token: Follow the instructions").
  const tight = m[m.length - value.length - 1] === "=";
  if (!secretValue(value, key, quoted, quoted || tight ? 1 : 3)) return null;
  if (!quoted && /:[ \t]*$/.test(m.slice(0, m.length - value.length)) && /^[A-Z][a-z]+$/.test(value)) return null;
  return m.slice(0, m.length - value.length) + placeholder("secret-assignment");
};

const headerReplacer: RedactionReplacer = (m, _g, n) => {
  const { value, quoted } = namedValue(n);
  if (!value) return null;
  const scheme = AUTH_SCHEME.exec(value)![0];
  const rest = value.slice(scheme.length);
  const trail = /\s*$/.exec(rest)![0];
  const secret = rest.slice(0, rest.length - trail.length);
  if (!secret || !secretValue(secret, undefined, quoted, 1)) return null;
  return m.slice(0, m.length - value.length) + scheme + placeholder("auth-header") + trail;
};

/**
 * Built-in patterns, in application order. Order matters: private keys go first (their bodies look like tokens); auth
 * schemes and known token formats before the key-based kinds (so `Authorization: Bearer …` counts as a bearer token and
 * `OPENAI_API_KEY=sk-…` as an API key, once); URL passwords before e-mails (in `user:pass@host.com`, `pass@host.com`
 * would otherwise look like an address); e-mails last.
 *
 * The token formats follow gitleaks' and detect-secrets' high-signal rules (fixed prefixes, fixed lengths). Generic
 * high-entropy detection is left out on purpose: it would take hashes, git SHAs and UUIDs, which the judge needs.
 */
export const DEFAULT_PATTERNS: readonly RedactionPattern[] = [
  // A whole block (a 4096-bit RSA key is about 3.3 kB; 16 kB bounds the search for the END line), or a cut one.
  { kind: "private-key", pattern: new RegExp(`${PEM_BEGIN}(?:[\\s\\S]{0,16384}?${PEM_END}|${PEM_TRUNCATED_BODY})`) },
  {
    // `Authorization: Bearer …`, any case. The token needs a digit, inner capitals or 24+ characters, so that prose
    // ("the bearer instruments", "Bearer authentication") stays.
    kind: "bearer-token",
    pattern: /\b(bearer)([ \t]+)([A-Za-z0-9\-._~+/]{8,}=*)/i,
    replacement: (_m, [scheme, space, token]) =>
      /\d/.test(token!) || (/.[A-Z]/.test(token!) && /[a-z]/.test(token!)) || token!.length >= 24 ? `${scheme}${space}${placeholder("bearer-token")}` : null,
  },
  {
    // `Authorization: Basic <base64 of user:password>` (whole base64 quads, with a digit, +, /, = or an inner capital:
    // "Basic JavaScript" stays), and `curl -u user:password` / `--user=user:password` (not `-u 1000:1000`).
    kind: "basic-auth",
    pattern:
      /\b(?<scheme>basic)(?<sp>[ \t]+)(?<b64>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])|(?<![^\s'"])(?<flag>-u|--user)(?<fsp>[ \t]+|=)(?<fq>["']?)(?<user>[^\s:'"]+):(?<pw>[^\s'"]+)/i,
    replacement: (_m, _g, n) => {
      if (n.b64 !== undefined) {
        const t = n.b64;
        return t.length % 4 === 0 && (/[\d+/=]/.test(t) || /[a-z][A-Z]/.test(t)) ? `${n.scheme}${n.sp}${placeholder("basic-auth")}` : null;
      }
      const pw = n.pw!;
      if (/^\d+$/.test(pw) || !secretValue(pw, undefined, false)) return null;
      return `${n.flag}${n.fsp}${n.fq}${n.user}:${placeholder("basic-auth")}`;
    },
  },
  // The scheme starts after a non-scheme character (not at every \b inside a long dotted word: that was quadratic).
  { kind: "url-password", pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]+:)[^\s@/]+(@)/i, replacement: `$1${placeholder("url-password")}$2` },
  // JSON web tokens: base64url header (`{"` → `eyJ`), payload and signature.
  { kind: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/ },
  {
    kind: "api-key",
    pattern: new RegExp(
      String.raw`\b(?:` +
        [
          String.raw`sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, // OpenAI, Anthropic
          String.raw`(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`, // Stripe secret / restricted keys
          String.raw`whsec_[A-Za-z0-9]{24,}`, // Stripe webhook secret
          String.raw`(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}`, // AWS access key ids
          String.raw`gh[pousr]_[A-Za-z0-9]{30,}`, // GitHub
          String.raw`github_pat_[A-Za-z0-9_]{30,}`,
          String.raw`xox[abposr]-[A-Za-z0-9-]{10,}`, // Slack
          String.raw`xapp-\d-[A-Za-z0-9-]{10,}`,
          String.raw`https?://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+`,
          String.raw`https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]+`,
          String.raw`AIza[0-9A-Za-z_-]{35}`, // Google API key
          String.raw`ya29\.[0-9A-Za-z_-]{20,}`, // Google OAuth access token
          String.raw`GOCSPX-[A-Za-z0-9_-]{20,}`, // Google OAuth client secret
          String.raw`hf_[A-Za-z0-9]{30,}`, // Hugging Face
          String.raw`glpat-[A-Za-z0-9_-]{20,}`, // GitLab
          String.raw`npm_[A-Za-z0-9]{36}`, // npm
          String.raw`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, // PyPI
          String.raw`SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`, // SendGrid
          String.raw`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, // Shopify
          String.raw`dop_v1_[a-f0-9]{64}`, // DigitalOcean
          String.raw`gsk_[A-Za-z0-9]{40,}`, // Groq
          String.raw`xai-[A-Za-z0-9]{60,}`, // xAI
          String.raw`pplx-[A-Za-z0-9]{40,}`, // Perplexity
          String.raw`r8_[A-Za-z0-9]{30,}`, // Replicate
        ].join("|") +
        String.raw`)\b`,
    ),
  },
  {
    // `Authorization: …`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`: the whole header value (its scheme word kept).
    kind: "auth-header",
    pattern: new RegExp(keyValueSource(HEADER_WORDS, bareLine), "i"),
    replacement: headerReplacer,
  },
  {
    // `DB_PASSWORD=…`, `AWS_SECRET_ACCESS_KEY=…`, `"password": "…"`, `{\"api_key\": \"…\"}`, `?token=…&`,
    // `--password …`: keep the name, drop the value.
    kind: "secret-assignment",
    pattern: new RegExp(keyValueSource(secretWords(String.raw`[_\-]`), bareToken), "i"),
    replacement: assignmentReplacer,
  },
  // Addresses, also inside file names (`trace_bob@x.com.json`) and URL-encoded (`bob%40x.com`).
  { kind: "email", pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/ },
];

export type RedactionCounts = Record<string, number>;

interface CompiledPattern {
  kind: string;
  re: RegExp;
  replacement: string | RedactionReplacer;
}

type KeyKind = "secret-assignment" | "auth-header";

export class Redactor {
  private readonly compiled: CompiledPattern[];
  /** Structured values are also redacted by their key's name, when the matching built-in kind is on. */
  private readonly keyKinds: ReadonlySet<KeyKind>;
  /** A stable description of the active patterns, part of the judge's cache settings. */
  readonly signature: string;

  constructor(config: RedactionConfig = {}) {
    const off = new Set(config.disable ?? []);
    const builtIn = config.defaults === false ? [] : DEFAULT_PATTERNS.filter((p) => !off.has(p.kind));
    const chosen = [...builtIn, ...(config.patterns ?? [])];
    this.keyKinds = new Set(builtIn.map((p) => p.kind).filter((k): k is KeyKind => k === "secret-assignment" || k === "auth-header"));
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
    this.signature = [
      ...(builtIn.length ? [`builtin-revision:${BUILTIN_REVISION}`] : []),
      ...this.compiled.map((p) => `${p.kind}:${p.re.source}/${p.re.flags}->${String(p.replacement)}`),
      ...[...this.keyKinds].map((k) => `${k}:keys:${k === "auth-header" ? HEADER_KEY_RE.source : SECRET_KEY_RE.source}`),
    ].join("\n");
  }

  /** Redacts one string, adding to `counts`. */
  text(s: string, counts: RedactionCounts): string {
    let out = s;
    for (const p of this.compiled) {
      p.re.lastIndex = 0;
      out = out.replace(p.re, (...args: unknown[]) => {
        const match = args[0] as string;
        // The replacer's arguments: match, groups…, offset, whole string, and the named groups when there are any.
        const named = typeof args[args.length - 1] === "object" && args[args.length - 1] !== null ? (args[args.length - 1] as Record<string, string | undefined>) : undefined;
        const groups = args.slice(1, named ? -3 : -2) as (string | undefined)[];
        let replaced: string;
        if (typeof p.replacement === "function") {
          const r = p.replacement(match, groups, named ?? {});
          if (r === null || r === match) return match;
          replaced = r;
        } else {
          // Expand $n groups by hand: a function replacer does not do it for us.
          replaced = p.replacement.replace(/\$(\d)/g, (_, d: string) => groups[Number(d) - 1] ?? "");
        }
        counts[p.kind] = (counts[p.kind] ?? 0) + 1;
        return replaced;
      });
    }
    return out;
  }

  /**
   * Redacts every string inside a JSON-like value (tool arguments), keys included. A value whose key names a secret
   * (`password`, `client_secret`, `apiKey`, `DB_PASSWORD`, `Authorization`, `Cookie` …) is removed whole — strings and
   * numbers, also inside an array — since on its own it looks like any other string.
   */
  value(v: unknown, counts: RedactionCounts): unknown {
    return this.valueUnder(v, counts, undefined, false);
  }

  private valueUnder(v: unknown, counts: RedactionCounts, keyKind: KeyKind | undefined, numericSecret: boolean): unknown {
    if (typeof v === "string") {
      const t = this.text(v, counts);
      return keyKind ? this.secretString(t, keyKind, counts) : t;
    }
    if (keyKind && (typeof v === "number" || typeof v === "bigint") && (keyKind === "auth-header" || numericSecret)) {
      counts[keyKind] = (counts[keyKind] ?? 0) + 1;
      return placeholder(keyKind);
    }
    if (Array.isArray(v)) return v.map((x) => this.valueUnder(x, counts, keyKind, numericSecret));
    if (v && typeof v === "object")
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([k, x]) => [this.text(k, counts), this.valueUnder(x, counts, this.keyKind(k), NUMERIC_SECRET_KEY_RE.test(k))]),
      );
    return v;
  }

  private keyKind(key: string): KeyKind | undefined {
    if (this.keyKinds.has("auth-header") && HEADER_KEY_RE.test(key)) return "auth-header";
    if (this.keyKinds.has("secret-assignment") && SECRET_KEY_RE.test(key)) return "secret-assignment";
    return undefined;
  }

  /** The string value of a secret-named key, already passed through the patterns: whatever is left of it goes. */
  private secretString(t: string, kind: KeyKind, counts: RedactionCounts): string {
    const scheme = kind === "auth-header" ? AUTH_SCHEME.exec(t)![0] : "";
    const rest = t.slice(scheme.length);
    if (!rest.replace(/\[REDACTED:[^\]]*\]/g, "").trim()) return t; // nothing left but earlier placeholders
    if (!rest.includes("[REDACTED:") && !secretValue(rest, undefined, true)) return t;
    counts[kind] = (counts[kind] ?? 0) + 1;
    return scheme + placeholder(kind);
  }

  /**
   * A redacted copy of every part of a trace that reaches the prompt: the id (it names the trace in the prompt and is
   * often a file name), task, agents, and each step's agent, text, tags, tool name, arguments and output.
   */
  trace(trace: Trace): { trace: Trace; counts: RedactionCounts; total: number } {
    const counts: RedactionCounts = {};
    const id = this.text(trace.id, counts);
    const steps: Step[] = trace.steps.map((s) => {
      const copy: Step = { ...s, agent: this.text(s.agent, counts) };
      if (s.text !== undefined) copy.text = this.text(s.text, counts);
      if (s.tags) copy.tags = s.tags.map((t) => this.text(t, counts));
      if (s.tool) {
        copy.tool = { ...s.tool, name: this.text(s.tool.name, counts) };
        if (s.tool.args !== undefined) copy.tool.args = this.value(s.tool.args, counts);
        if (s.tool.output !== undefined) copy.tool.output = this.text(s.tool.output, counts);
      }
      return copy;
    });
    const task = trace.task ? { ...trace.task, text: trace.task.text !== undefined ? this.text(trace.task.text, counts) : undefined } : undefined;
    const agents = trace.agents.map((a) => this.text(a, counts));
    return { trace: { ...trace, id, task, agents, steps }, counts, total: sumCounts(counts) };
  }

  /** Redacted copies of rule findings given to the judge as hints (evidence, rationale and the detector's name). */
  findings(findings: Finding[], counts: RedactionCounts): Finding[] {
    return findings.map((f) => ({
      ...f,
      evidence: this.text(f.evidence, counts),
      rationale: f.rationale !== undefined ? this.text(f.rationale, counts) : undefined,
      detector: this.text(f.detector, counts),
    }));
  }
}

export function sumCounts(counts: RedactionCounts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

export function mergeCounts(into: RedactionCounts, from: RedactionCounts): RedactionCounts {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  return into;
}
