import { readFileSync } from "node:fs";
import { z } from "zod";
import { ClarifyGate } from "./clarify-gate.js";
import { ContextGuard } from "./context-guard.js";
import { LoopDetector } from "./loop-detector.js";
import { GuardSet, type GuardSetOptions } from "./pipeline.js";
import { DEFAULT_MUTATING, EvidenceRuleSpecSchema, ToolSelectorConfigSchema, type ToolSelector } from "./predicates.js";
import { TerminationController, type BenchmarkProfile } from "./termination-controller.js";
import type { Guard } from "./types.js";
import { VerificationGate } from "./verification-gate.js";

/**
 * The guard configuration file (JSON), as read by `faultline replay --guards CONFIG`: one optional section per guard.
 * A section is `false` or absent (guard off), `true` (guard on with its defaults; not for `clarify`, which needs
 * rules), or an object of settings. `"extends": "default"` takes every absent section from the built-in `default`.
 * `mutating` (top level, or per gate) says which calls change state, for the verification and clarify gates; it
 * defaults to `"default"`, the built-in classifier (mutating verbs in tool names, mutating shell commands). `{}` makes
 * every call count as mutating.
 */

const regexString = z.string().superRefine((s, ctx) => {
  try {
    new RegExp(s);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: `invalid regular expression: ${(e as Error).message}` });
  }
});
const count = z.number().int().nonnegative();
const positive = z.number().int().positive();
const MutatingSchema = z.union([z.literal("default"), ToolSelectorConfigSchema]);

export const LoopConfigSchema = z
  .object({
    ignoreKeys: z.array(z.string()).optional(),
    collapseWhitespace: z.boolean().optional(),
    repeatWarnAt: count.optional(),
    repeatBlockAt: count.optional(),
    perTool: z.record(z.string(), z.object({ warnAt: count.optional(), blockAt: count.optional() }).strict()).optional(),
    volatileOutput: z.array(regexString).optional(),
    failureRepeatWarnAt: count.optional(),
    messageRepeatWarnAt: count.optional(),
    messageSimilarity: z.number().min(0).max(1).optional(),
    nudgeRepeatWarnAt: count.optional(),
    nudgeMinWords: count.optional(),
    window: positive.optional(),
    noProgressWindow: count.optional(),
    noProgressStopAfter: count.optional(),
  })
  .strict();

export const BenchmarkProfileSchema = z
  .object({
    exitConditions: z.array(EvidenceRuleSpecSchema).optional(),
    asksForWork: z.boolean().optional(),
  })
  .strict();

export const TerminationConfigSchema = z
  .object({
    maxSteps: positive.optional(),
    maxDurationMs: positive.optional(),
    maxTokens: positive.optional(),
    warnAtFraction: z.number().min(0).max(1).optional(),
    exitConditions: z.array(EvidenceRuleSpecSchema).optional(),
    graceSteps: count.optional(),
    /**
     * Per-benchmark exit conditions and work requirement, by benchmark name (the trace's `task.benchmark`), added to
     * the built-in BENCHMARK_PROFILES (absent: the built-in ones; `false`: none).
     */
    benchmarks: z.union([z.literal(false), z.record(z.string(), BenchmarkProfileSchema)]).optional(),
    /** Refuse a completion before any action: `"task"` (default) when the task asks for work, `true` always, `false` never. */
    requireAction: z.union([z.boolean(), z.literal("task")]).optional(),
  })
  .strict();

export const VerificationConfigSchema = z
  .object({
    evidence: z.array(EvidenceRuleSpecSchema).optional(),
    mutating: MutatingSchema.optional(),
    requireCheckAfterChange: z.boolean().optional(),
    /** Which calls count as a check after a change; `"default"` is the built-in classifier. */
    check: z.union([z.literal("default"), ToolSelectorConfigSchema]).optional(),
    stateResultIsCheck: z.boolean().optional(),
    userReplyIsCheck: z.boolean().optional(),
    onlyExplicitClaims: z.boolean().optional(),
  })
  .strict();

export const AmbiguityRuleSpecSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    matches: regexString.optional(),
    missing: regexString.optional(),
    multiple: regexString.optional(),
  })
  .strict()
  .refine((r) => [r.matches, r.missing, r.multiple].filter((x) => x !== undefined).length === 1, {
    message: "give exactly one of matches, missing, multiple",
  });

export const ClarifyConfigSchema = z
  .object({
    rules: z.array(AmbiguityRuleSpecSchema).min(1),
    mutating: MutatingSchema.optional(),
    readOnly: ToolSelectorConfigSchema.optional(),
    clarifyTools: z.array(z.string()).optional(),
    ignoreCase: z.boolean().optional(),
  })
  .strict();

export const ContextConfigSchema = z
  .object({
    facts: z
      .array(
        z
          .object({
            name: z.string().min(1),
            pattern: regexString.optional(),
            argKeys: z.array(z.string()).optional(),
            from: z.array(z.enum(["user", "tool"])).min(1).optional(),
            aliases: z.array(z.string()).optional(),
          })
          .strict(),
      )
      .optional(),
    tools: z.array(z.string()).optional(),
    checkAssistantText: z.boolean().optional(),
    summaryEvery: count.optional(),
  })
  .strict();

const section = <T extends z.ZodType>(s: T) => z.union([z.boolean(), s]).optional();

export const GuardConfigSchema = z
  .object({
    $schema: z.string().optional(),
    extends: z.enum(["default", "none"]).optional(),
    mutating: MutatingSchema.optional(),
    loop: section(LoopConfigSchema),
    termination: section(TerminationConfigSchema),
    verification: section(VerificationConfigSchema),
    clarify: z.union([z.literal(false), ClarifyConfigSchema], { error: "expected false or settings with `rules` (the clarify gate has no defaults)" }).optional(),
    context: section(ContextConfigSchema),
  })
  .strict();

export type GuardConfig = z.infer<typeof GuardConfigSchema>;

/**
 * ITBench's deliverable as an exit condition: the agent must leave a readable `agent_output.json` (diagnosis task) or
 * `agent_remediation.json` (remediation task): a successful shell call that reads or validates it (`jq .
 * agent_output.json`, `cat …`, a Python `json.load`) is the evidence, since a write can fail (sandbox errors) while the
 * agent believes it worked.
 */
export const ITBENCH_DELIVERABLE = {
  name: "agent_output.json readable",
  description: "write the diagnosis to agent_output.json (agent_remediation.json for a remediation task), then check it (e.g. jq . agent_output.json)",
  match: { argsPattern: String.raw`\b(?:jq|cat|head|python3?|json\.load)\b[^\n]*agent_(?:output|remediation)\.json` },
  pass: { ok: true, output: { matches: String.raw`\S` } },
} as const satisfies z.infer<typeof EvidenceRuleSpecSchema>;

/**
 * What every configuration knows of benchmarks (the trace's `task.benchmark`; a live loop tells it with
 * `GuardSet.begin`): ITBench SRE tasks must leave their deliverable; ITBench and SWE-bench tasks always ask for work, so
 * a run that ends without a single action is refused (FM-3.1). Add or override entries with `termination.benchmarks`.
 */
export const BENCHMARK_PROFILES: Readonly<Record<string, z.infer<typeof BenchmarkProfileSchema>>> = {
  "itbench-sre": { exitConditions: [ITBENCH_DELIVERABLE], asksForWork: true },
  "swe-bench": { asksForWork: true },
};

/**
 * The built-in `default`: loop detection with its defaults; a 200-step budget, with exit conditions only where the
 * run's benchmark brings its own (BENCHMARK_PROFILES: ITBench's deliverable) and no completion before any action on a
 * task that asks for work; a check required after the last change before a completion is accepted; context hygiene
 * (stated-vs-executed). The clarify gate is off because ambiguity rules are task-specific.
 */
export const DEFAULT_GUARD_CONFIG: GuardConfig = {
  mutating: "default",
  loop: true,
  termination: { maxSteps: 200 },
  verification: { requireCheckAfterChange: true },
  context: true,
};

/**
 * `itbench-sre`: the default with ITBench's deliverable (ITBENCH_DELIVERABLE) declared for every run, whatever the
 * trace says its benchmark is — for ITBench runs whose traces do not name the benchmark, and for live ITBench agents.
 */
export const ITBENCH_SRE_GUARD_CONFIG: GuardConfig = {
  ...DEFAULT_GUARD_CONFIG,
  termination: {
    maxSteps: 200,
    exitConditions: [ITBENCH_DELIVERABLE],
  },
};

export const GUARD_PRESETS: Readonly<Record<string, GuardConfig>> = { default: DEFAULT_GUARD_CONFIG, "itbench-sre": ITBENCH_SRE_GUARD_CONFIG };

type Issue = { code: string; path: PropertyKey[]; message: string; errors?: Issue[][] };

/**
 * Flattens zod issues into "path: message" lines. For a union (`true` or a settings object, a selector or a list) the
 * branch that got furthest into the value explains the mistake, rather than zod's bare "Invalid input".
 */
function describeIssues(list: readonly Issue[], prefix: PropertyKey[] = []): string[] {
  return list.flatMap((i) => {
    const path = [...prefix, ...i.path];
    if (i.code === "invalid_union" && i.errors?.length) {
      const depth = (b: Issue[]) => Math.max(...b.map((x) => x.path.length + (x.code === "invalid_union" ? 1 : 0)));
      const best = [...i.errors].sort((a, b) => depth(b) - depth(a) || a.length - b.length)[0]!;
      if (depth(best) > 0) return describeIssues(best, path);
    }
    return [`${path.map(String).join(".") || "(root)"}: ${i.message}`];
  });
}

function issues(error: z.ZodError): string {
  return describeIssues(error.issues as unknown as Issue[]).join("; ");
}

/** Validates a config value; errors name the origin (file) and each offending field. */
export function parseGuardConfig(raw: unknown, origin = "guard config"): GuardConfig {
  const r = GuardConfigSchema.safeParse(raw);
  if (!r.success) throw new Error(`${origin}: invalid guard config — ${issues(r.error)}`);
  const cfg = r.data;
  if (cfg.extends !== "default") return cfg;
  const merged: GuardConfig = { ...DEFAULT_GUARD_CONFIG };
  for (const [k, v] of Object.entries(cfg)) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  return merged;
}

/** Where a JSON.parse error points, as `line L, column C`, when the engine reports a position. */
function jsonErrorPlace(text: string, message: string): string {
  const pos = /position (\d+)/.exec(message)?.[1];
  if (pos === undefined) return "";
  const before = text.slice(0, Number(pos));
  const line = before.split("\n").length;
  return ` at line ${line}, column ${Number(pos) - before.lastIndexOf("\n")}`;
}

/** Reads a guard config: a preset name (`default`) or a JSON file path. */
export function loadGuardConfig(nameOrPath: string): GuardConfig {
  const preset = GUARD_PRESETS[nameOrPath];
  if (preset) return preset;
  let text: string;
  try {
    text = readFileSync(nameOrPath, "utf8");
  } catch (e) {
    throw new Error(`${nameOrPath}: cannot read guard config (${(e as Error).message}); presets: ${Object.keys(GUARD_PRESETS).join(", ")}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${nameOrPath}${jsonErrorPlace(text, (e as Error).message)}: not valid JSON (${(e as Error).message})`);
  }
  return parseGuardConfig(raw, nameOrPath);
}

type Mutating = z.infer<typeof MutatingSchema>;
/** A guard's own `mutating`, else the top-level one, else the built-in classifier. */
const selector = (m: Mutating | undefined, fallback: Mutating | undefined): ToolSelector => {
  const v = m ?? fallback ?? "default";
  return v === "default" ? DEFAULT_MUTATING : v;
};
const settings = <T>(v: boolean | T | undefined): T | undefined => (v === true ? ({} as T) : v === false || v === undefined ? undefined : v);

/** Builds the guards a config describes, in a fixed order: termination, verification, clarify, loop, context. */
export function guardsFromConfig(config: GuardConfig): Guard[] {
  const guards: Guard[] = [];
  const termination = settings(config.termination);
  if (termination) {
    const { benchmarks, ...rest } = termination;
    const profiles: Record<string, BenchmarkProfile> = benchmarks === false ? {} : { ...BENCHMARK_PROFILES, ...(benchmarks ?? {}) };
    guards.push(new TerminationController({ ...rest, benchmarks: profiles }));
  }
  const verification = settings(config.verification);
  if (verification) {
    const { mutating: own, check, ...rest } = verification;
    guards.push(new VerificationGate({ ...rest, mutating: selector(own, config.mutating), ...(check !== undefined && check !== "default" ? { check } : {}) }));
  }
  if (config.clarify) {
    const { mutating, ...rest } = config.clarify;
    guards.push(new ClarifyGate({ ...rest, mutating: selector(mutating, config.mutating) }));
  }
  const loop = settings(config.loop);
  if (loop) {
    const { ignoreKeys, collapseWhitespace, ...rest } = loop;
    const equivalence = { ...(ignoreKeys ? { ignoreKeys } : {}), ...(collapseWhitespace !== undefined ? { collapseWhitespace } : {}) };
    guards.push(new LoopDetector({ ...rest, equivalence }));
  }
  const context = settings(config.context);
  if (context) guards.push(new ContextGuard(context));
  return guards;
}

export function guardSetFromConfig(config: GuardConfig, opts: GuardSetOptions = {}): GuardSet {
  return new GuardSet(guardsFromConfig(config), opts);
}
