import { Option, type Command } from "commander";
import {
  DEFAULT_PATTERNS,
  JsonlFileCache,
  loadPriceTable,
  OpenAIChatModel,
  plannedMessages,
  Pool,
  PriceTableError,
  priceFor,
  dryRunRow,
  type DryRunRow,
  type JudgeCache,
  type JudgeMode,
  type JudgeTotals,
  type Price,
  type ProviderConfig,
  type RedactionConfig,
  type RedactionPattern,
} from "../judge/index.js";
import { emptyCounts, judgeAnnotator, judgeRun, NoTracesError, planRun, type JudgeInputOptions, type JudgeRunResult } from "../pipeline/index.js";
import { JUDGE_SPEC_KEYS, type JudgeSpec } from "../distributed/index.js";
import type { ItbenchSuccessRule } from "../outcome/index.js";
import { storeOverviews } from "../server/index.js";
import { DEFAULT_DB, defaultDb } from "../store/index.js";
import { modelTable, outcomeNotes } from "../report/index.js";
import { displayPath, EXIT, table, UsageError, writeJson, printProblems, printRunFooter, problemLine, requireInputs, interruptible, noTracesExit } from "./io.js";

/** Options of `faultline judge`; `analyze --judge` takes the provider and judge ones too. */
export interface JudgeCliOptions {
  baseUrl?: string;
  model?: string;
  apiKeyEnv?: string;
  concurrency?: string;
  out: string;
  db: string;
  cache?: string;
  dryRun?: boolean;
  showPrompts?: boolean;
  json?: boolean;
  mode?: JudgeMode;
  header?: string[];
  temperature?: string;
  timeout?: string;
  windowTokens?: string;
  contextTokens?: string;
  maxOutputTokens?: string;
  maxAttempts?: string;
  maxFieldChars?: string;
  responseFormat?: ProviderConfig["responseFormat"];
  stream?: boolean;
  priceTable?: string;
  hints?: boolean;
  refutedHints?: "keep" | "drop";
  redact?: string[];
  keep?: string[];
  format?: string;
  groundTruth?: string;
  quiet?: boolean;
  /** Delete the store's earlier runs of the same inputs and annotator once this one is complete. */
  replace?: boolean;
}

const DEFAULT_CONCURRENCY = 4;

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive whole number, got "${v}"`);
  return n;
}

function temperatureOf(v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === "none" || v === "omit") return null;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 2) throw new UsageError(`--temperature must be a number from 0 to 2, or "none" to leave it out; got "${v}"`);
  return n;
}

function headersOf(list: string[] | undefined): Record<string, string> | undefined {
  if (!list?.length) return undefined;
  const out: Record<string, string> = {};
  for (const h of list) {
    const i = h.indexOf(":");
    if (i <= 0) throw new UsageError(`--header must look like Name:value, got "${h}"`);
    out[h.slice(0, i).trim()] = h.slice(i + 1).trim();
  }
  return out;
}

/** The variable the API key is read from: the one named, else OPENAI_API_KEY for OpenAI itself, else none. */
function apiKeyEnvFor(baseUrl: string, named: string | undefined): string | undefined {
  if (named) return named;
  try {
    return new URL(baseUrl).hostname === "api.openai.com" ? "OPENAI_API_KEY" : undefined;
  } catch {
    throw new UsageError(`--base-url is not a URL: "${baseUrl}"`);
  }
}

function priceOf(opts: JudgeCliOptions, model: string, warn: (m: string) => void): Price | undefined {
  if (!opts.priceTable) return undefined;
  try {
    const price = priceFor(loadPriceTable(opts.priceTable), model);
    if (!price) warn(`${displayPath(opts.priceTable)} has no price for model "${model}": cost is not computed`);
    return price;
  } catch (e) {
    if (e instanceof PriceTableError) throw new UsageError(e.message);
    throw e;
  }
}

interface BuiltModel {
  model: OpenAIChatModel;
  pool: Pool;
  concurrency: number;
  keyFrom?: string;
}

/** The provider client from the command line; a dry run gets one that cannot be used to call anything. */
function buildModel(opts: JudgeCliOptions, warn: (m: string) => void): BuiltModel {
  const dry = opts.dryRun === true;
  if (!opts.model) {
    if (!dry) throw new UsageError("--model is required (the model name the server expects, e.g. gpt-4o-mini)");
  }
  if (!opts.baseUrl && !dry) throw new UsageError("--base-url is required (an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://localhost:8000/v1)");
  const concurrency = positiveInt("--concurrency", opts.concurrency) ?? DEFAULT_CONCURRENCY;
  const pool = new Pool(concurrency);
  const baseURL = opts.baseUrl ?? "http://dry-run.invalid/v1";
  const modelName = opts.model ?? "dry-run";
  const keyFrom = dry ? undefined : apiKeyEnvFor(baseURL, opts.apiKeyEnv);
  const config: ProviderConfig = {
    baseURL,
    model: modelName,
    apiKeyEnv: keyFrom,
    headers: headersOf(opts.header),
    temperature: temperatureOf(opts.temperature),
    timeoutMs: positiveInt("--timeout", opts.timeout),
    maxAttempts: positiveInt("--max-attempts", opts.maxAttempts),
    responseFormat: opts.responseFormat,
    maxOutputTokens: positiveInt("--max-output-tokens", opts.maxOutputTokens),
    stream: opts.stream,
    price: priceOf(opts, modelName, warn),
  };
  try {
    // Without a named variable no key is sent: a local server needs none, and OPENAI_API_KEY must not reach other hosts.
    const model = new OpenAIChatModel(config, { pool, env: dry ? {} : keyFrom ? process.env : {} });
    return { model, pool, concurrency, keyFrom };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function inputOptions(opts: JudgeCliOptions, built: BuiltModel, itbenchRule?: ItbenchSuccessRule): JudgeInputOptions {
  return {
    format: opts.format,
    groundTruth: opts.groundTruth,
    itbenchRule,
    hints: opts.hints !== false,
    concurrency: built.concurrency,
    judge: {
      model: built.model,
      mode: opts.mode ?? "structured",
      windowTokens: positiveInt("--window-tokens", opts.windowTokens),
      contextTokens: positiveInt("--context-tokens", opts.contextTokens),
      render: opts.maxFieldChars ? { maxFieldChars: positiveInt("--max-field-chars", opts.maxFieldChars) } : undefined,
      refutedHints: opts.refutedHints,
      redaction: redactionConfig(opts),
    },
  };
}

/**
 * The judge a distributed worker runs for a submitted run's judge settings (src/distributed): the same provider client
 * and judge options `faultline judge` builds from these flags, with the worker's concurrency.
 */
export function judgeForWorker(spec: JudgeSpec, concurrency: number): { judge: JudgeInputOptions["judge"]; hints: boolean } {
  const opts: JudgeCliOptions = { ...spec, concurrency: String(concurrency), out: "", db: "" };
  const built = buildModel(opts, (m) => process.stderr.write(`faultline worker: ${m}\n`));
  const input = inputOptions(opts, built);
  return { judge: input.judge, hints: input.hints !== false };
}

/** The judge settings of these options, to store with a submitted run (no API key: only the name of its variable). */
export function judgeSpecOf(opts: Omit<JudgeCliOptions, "out">): JudgeSpec {
  if (!opts.model) throw new UsageError("--model is required with --judge (the model name the server expects, e.g. gpt-4o-mini)");
  if (!opts.baseUrl) throw new UsageError("--base-url is required with --judge (an OpenAI-compatible endpoint)");
  const spec: Record<string, unknown> = {};
  for (const k of JUDGE_SPEC_KEYS) if (opts[k] !== undefined) spec[k] = opts[k];
  return spec as unknown as JudgeSpec;
}

/** `--redact kind=regex` adds a pattern; `--keep kind` switches a built-in kind off. Bad input is a usage error. */
function redactionConfig(opts: JudgeCliOptions): RedactionConfig | undefined {
  if (!opts.redact?.length && !opts.keep?.length) return undefined;
  const builtIn = new Set(DEFAULT_PATTERNS.map((p) => p.kind));
  for (const k of opts.keep ?? []) if (!builtIn.has(k)) throw new UsageError(`--keep ${k}: not a built-in redaction kind (${[...builtIn].join(", ")})`);
  const patterns: RedactionPattern[] = (opts.redact ?? []).map((spec) => {
    const eq = spec.indexOf("=");
    const kind = spec.slice(0, eq).trim();
    const source = spec.slice(eq + 1);
    if (eq <= 0 || !/^[\w-]+$/.test(kind) || !source) throw new UsageError(`--redact ${spec}: expected kind=regex, e.g. --redact 'ticket=TCK-\\d+'`);
    try {
      new RegExp(source);
    } catch (e) {
      throw new UsageError(`--redact ${spec}: invalid regular expression (${(e as Error).message})`);
    }
    return { kind, pattern: source };
  });
  return { disable: opts.keep ?? [], patterns };
}

const n = (x: number) => x.toLocaleString("en-US");
const usd = (x: number | undefined) => (x === undefined ? "not computed (no --price-table entry for the model)" : `$${x.toFixed(x < 1 ? 4 : 2)}`);

function totalsLines(t: JudgeTotals, busy: { concurrency: number; busyFraction: number; elapsedMs: number }): string[] {
  const reported = t.usage.reportedCalls;
  const estimated = t.usage.estimatedCalls;
  return [
    `  calls      ${n(t.calls)} (${n(t.cachedCalls)} from the cache, ${n(t.calls - t.cachedCalls)} sent)`,
    `  tokens     input ${n(t.usage.input)}, output ${n(t.usage.output)}` +
      (reported + estimated ? ` (provider-reported for ${n(reported)} answers, estimated for ${n(estimated)})` : ""),
    `  cost       ${usd(t.costUsd)}`,
    ...(t.cachedCalls ? [`  cache      the cached calls had cost input ${n(t.cachedUsage.input)}, output ${n(t.cachedUsage.output)} tokens: not paid again`] : []),
    `  evidence   ${n(t.rejectedClaims)} claimed mode${t.rejectedClaims === 1 ? "" : "s"} rejected (quotes not found in the cited steps)`,
    `  privacy    ${n(t.redactions)} redaction${t.redactions === 1 ? "" : "s"} before sending; ${n(t.truncatedTraces)} trace${t.truncatedTraces === 1 ? "" : "s"} cut to fit the context`,
    ...(busy.elapsedMs > 0
      ? [`  pool       ${busy.concurrency} at once, busy ${Math.round(busy.busyFraction * 100)}% of ${(busy.elapsedMs / 1000).toFixed(1)} s`]
      : []),
  ];
}

/** `faultline judge`, and `faultline analyze --judge` (combine: rules and judge in one diagnosis). */
export async function runJudge(paths: string[], opts: JudgeCliOptions, how: { combine?: boolean; itbenchRule?: ItbenchSuccessRule } = {}): Promise<number> {
  requireInputs(paths);
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  const built = buildModel(opts, warn);
  const input = inputOptions(opts, built, how.itbenchRule);
  const problems: string[] = [];
  input.onDiagnostic = (d) => {
    if (d.level !== "notice") problems.push(problemLine(d));
  };
  const printWarnings = () => {
    for (const w of warnings) process.stderr.write(`faultline: warning: ${w}\n`);
  };

  if (opts.dryRun) return dryRun(paths, opts, input, problems, printWarnings);

  let cache: JudgeCache | undefined;
  if (opts.cache) {
    const file = await JsonlFileCache.open(opts.cache);
    for (const s of file.skipped) warn(`${displayPath(opts.cache)}:${s.line}: unreadable cache line skipped (${s.reason})`);
    cache = file;
  }
  const tty = !opts.json && !opts.quiet && process.stderr.isTTY;
  let done = 0;
  let failed = 0;
  let result: JudgeRunResult;
  try {
    result = await interruptible((signal) =>
      judgeRun(paths, {
        ...input,
        out: opts.out,
        db: opts.db,
        onRunStored: storeOverviews,
        combine: how.combine,
        cache,
        replace: opts.replace,
        signal,
        onTrace: (d) => {
          done++;
          if (!d.modes) failed++;
          if (tty) process.stderr.write(`\rjudged ${done} traces${failed ? ` (${failed} failed)` : ""} …`);
        },
      }),
    );
  } catch (e) {
    if (tty) process.stderr.write("\r\x1b[K");
    if (!(e instanceof NoTracesError)) throw e;
    printWarnings();
    if (!opts.json) printProblems(problems);
    return noTracesExit(e);
  }
  if (tty) process.stderr.write("\r\x1b[K");
  if (result.unreadableCacheEntries) warn(`${result.unreadableCacheEntries} unreadable cache entries in ${displayPath(opts.db)} were asked again`);
  const { summary, outputs } = result;
  const summaryPath = outputs.summary;
  const reports = outputs.reports;
  const pool = built.pool.stats();
  const failures = result.diagnoses.filter((d) => d.modes === null).map((d) => ({ trace_id: d.trace_id, error: d.error ?? "" }));
  printWarnings();
  if (opts.json) {
    writeJson({
      ...summary,
      judge: {
        model: built.model.model,
        mode: input.judge.mode,
        annotator: result.annotator,
        base_url: opts.baseUrl,
        totals: result.totals,
        concurrency: pool.limit,
        busy_fraction: pool.busyFraction,
        elapsed_ms: Math.round(pool.elapsedMs),
        failed: failures,
      },
      outputs: { findings: result.findingsPath, summary: summaryPath, ...reports, db: opts.db, ...(opts.cache ? { cache: opts.cache } : {}) },
      replaced: result.replaced,
    });
  } else {
    const c = result.counts;
    console.log(modelTable(summary));
    for (const l of outcomeNotes(result.diagnoses)) console.log(l);
    printProblems(problems);
    console.log(`\nJudge ${result.annotator} (${input.judge.mode}) at ${opts.baseUrl}:`);
    for (const l of totalsLines(result.totals, { concurrency: pool.limit, busyFraction: pool.busyFraction, elapsedMs: pool.elapsedMs })) console.log(l);
    if (failures.length) {
      console.log(`\nNot annotated (${failures.length}): "modes": null in findings.jsonl; re-running retries only these (the rest is cached)`);
      for (const f of failures.slice(0, 20)) console.log(`  ${f.trace_id}  ${f.error}`);
      if (failures.length > 20) console.log(`  … ${failures.length - 20} more in findings.jsonl`);
    }
    printRunFooter(c, { findings: result.findingsPath, summary: summaryPath, runId: result.runId, db: opts.db, reports, status: result.status, replaced: result.replaced });
  }
  if (result.status === "incomplete") return EXIT.interrupted;
  return result.counts.errors > 0 || result.counts.failed > 0 ? EXIT.partial : EXIT.ok;
}

async function dryRun(paths: string[], opts: JudgeCliOptions, input: JudgeInputOptions, problems: string[], printWarnings: () => void): Promise<number> {
  const rows: DryRunRow[] = [];
  const counts = emptyCounts();
  const price = input.judge.model.price;
  const prompts: string[] = [];
  for await (const { plan } of planRun(paths, input, counts)) {
    rows.push(dryRunRow(plan));
    if (opts.showPrompts && !opts.json)
      for (const call of plannedMessages(plan)) {
        prompts.push(`===== trace ${plan.traceId}, call ${call.call} (~${n(call.inputTokensEstimate)} input tokens) =====`);
        for (const m of call.messages) prompts.push(`--- ${m.role} ---\n${m.content}`);
      }
  }
  const inputTokens = rows.reduce((a, r) => a + r.input_tokens_estimate, 0);
  const totals = {
    traces: rows.length,
    calls: rows.reduce((a, r) => a + r.calls, 0),
    input_tokens_estimate: inputTokens,
    ...(price ? { input_cost_usd_estimate: (inputTokens * price.inputPerMTok) / 1_000_000 } : {}),
  };
  printWarnings();
  if (opts.json) writeJson({ traces: rows, totals });
  else {
    if (prompts.length) console.log(`${prompts.join("\n")}\n`);
    console.log(
      table(
        ["trace", "windows", "calls", "input tokens (est.)", "cut to fit", "redactions", "problem"],
        rows.map((r) => [r.trace_id, r.windows, r.calls, r.input_tokens_estimate, r.forced_cuts, r.redactions, r.error ?? ""]),
      ),
    );
    printProblems(problems);
    console.log(
      `\nDry run: ${totals.traces} traces would take ${n(totals.calls)} calls and about ${n(inputTokens)} input tokens` +
        `${totals.input_cost_usd_estimate !== undefined ? ` (~$${totals.input_cost_usd_estimate.toFixed(4)} of input)` : ""}, ` +
        `plus the answers (up to ${n(Number(input.judge.model.settings.maxOutputTokens))} tokens each). Nothing was sent.`,
    );
  }
  return counts.errors > 0 || rows.some((r) => r.error) ? EXIT.partial : EXIT.ok;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** Adds the provider and judge options to a command; `hidden` keeps the rarer ones out of its help. */
export function addJudgeOptions(cmd: Command, { hidden = false }: { hidden?: boolean } = {}): Command {
  const opt = (o: Option, rare = true) => cmd.addOption(hidden && rare ? o.hideHelp() : o);
  opt(new Option("--base-url <url>", "OpenAI-compatible endpoint, e.g. https://api.openai.com/v1, http://localhost:8000/v1"), false);
  opt(new Option("--model <name>", "model name as the server knows it"), false);
  opt(new Option("--api-key-env <var>", "environment variable holding the API key (default: OPENAI_API_KEY for api.openai.com, none otherwise)"), false);
  opt(new Option("--concurrency <n>", `traces judged at once = requests in flight (default ${DEFAULT_CONCURRENCY})`));
  opt(new Option("--mode <mode>", "structured: JSON with verified evidence, windows for long traces; mast-compatible: the MAST annotator's answer format, no evidence").choices(["structured", "mast-compatible"]).default("structured"));
  opt(new Option("--header <name:value>", "extra HTTP header for every request (repeatable)").argParser(collect));
  opt(new Option("--temperature <t>", 'sampling temperature (default 0); "none" leaves it out, for models that accept only their default'));
  opt(new Option("--timeout <ms>", "deadline per request, whole answer included (default 120000)"));
  opt(new Option("--max-attempts <n>", "attempts per call, the first included, on 429/5xx/timeouts/unparseable answers (default 4)"));
  opt(new Option("--context-tokens <n>", "the model's context window in tokens (default 128000); windows are sized to fit it"));
  opt(new Option("--window-tokens <n>", "cap on the trace tokens of one call, below what the context allows (smaller, cheaper calls)"));
  opt(new Option("--max-field-chars <n>", "longest step text, tool argument or output shown whole (default: no limit; a step larger than a window is shown across windows in parts); longer ones lose their middle, marked and listed in --dry-run --json"));
  opt(new Option("--max-output-tokens <n>", "answer token limit per call (default 4096)"));
  opt(new Option("--response-format <kind>", "how JSON is requested: json_schema (structured outputs), json_object, or none (prompt only)").choices(["json_schema", "json_object", "none"]));
  opt(new Option("--stream", "stream answers (server-sent events)"));
  opt(new Option("--price-table <file>", 'JSON prices, USD per million tokens: {"<model or glob*>": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}'));
  opt(new Option("--no-hints", "do not show the rule detectors' findings to the judge"));
  opt(new Option("--refuted-hints <what>", "a rule finding the judge refutes: keep it (labelled rules) or drop it").choices(["keep", "drop"]).default("keep"));
  opt(new Option("--cache <file>", "keep the call cache in this JSONL file instead of the --db store"));
  opt(new Option("--redact <kind=regex>", "also redact what this regular expression matches, as [REDACTED:kind] (repeatable)").argParser(collect));
  opt(new Option("--keep <kind>", `do not redact this built-in kind (${DEFAULT_PATTERNS.map((p) => p.kind).join(", ")}) (repeatable)`).argParser(collect));
  return cmd;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  const cmd = program
    .command("judge")
    .description("Label MAST failure modes with an LLM judge (any OpenAI-compatible server), evidence verified against the trace")
    .argument("<paths...>", "trace files or folders (read recursively)");
  addJudgeOptions(cmd);
  cmd
    .option("-o, --out <dir>", "where findings.jsonl, summary.json and the reports (report.html, report.md, CSVs) go", "faultline-out")
    .option("--db <file|url>", "the store: the run (each a new one), and the call cache (a re-run pays nothing twice; a killed run resumes) (a SQLite file or a postgres:// URL; default: $FAULTLINE_DB, else " + DEFAULT_DB + ")", defaultDb())
    .option("--replace", "once this run is complete, delete the store's earlier runs of the same inputs by the same judge")
    .option("--dry-run", "plan the calls and estimate input tokens without sending anything")
    .option("--show-prompts", "with --dry-run: print every message exactly as it would be sent (after redaction)")
    .option("--json", "print JSON instead of tables")
    .option("--format <id>", "skip detection and read every file with this format")
    .option("--ground-truth <file>", "ITBench ground-truth YAML (or folder) for rollouts that have none beside them")
    .option("-q, --quiet", "no progress line")
    .addHelpText(
      "after",
      `
Examples:
  # OpenAI (the key is read from OPENAI_API_KEY)
  faultline judge runs/ --base-url https://api.openai.com/v1 --model gpt-4o-mini --price-table prices.json

  # vLLM (vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len 32768): no key needed
  faultline judge runs/ --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-32B-Instruct --context-tokens 32768

  # Ollama: its context is what the model was loaded with (num_ctx), often small; say so
  faultline judge runs/ --base-url http://localhost:11434/v1 --model llama3.1:8b --context-tokens 8192 --concurrency 1

  # LiteLLM proxy in front of any provider; its key in LITELLM_API_KEY
  faultline judge runs/ --base-url http://localhost:4000/v1 --model claude-sonnet --api-key-env LITELLM_API_KEY

  # How much would it cost, and what exactly would be sent? (sends nothing)
  faultline judge runs/ --model gpt-4o-mini --dry-run --json | jq .totals
  faultline judge runs/chat.jsonl --model gpt-4o-mini --dry-run --show-prompts | less

The API key:
  read from the environment variable named by --api-key-env; for https://api.openai.com without it, from
  OPENAI_API_KEY. Other hosts get no key unless you name a variable (a local server needs none, and your OpenAI key
  is not sent elsewhere). The key is never taken on the command line and never written anywhere.

What leaves the machine (and nothing else):
  per call, the taxonomy definitions and instructions, the trace id (for some formats derived from the file name),
  the task statement, agent names, and each step's text, tool name, arguments, output and exit code; the rule
  detectors' findings as hints (unless --no-hints). Before sending, secrets are replaced by [REDACTED:<kind>]
  (private keys, bearer tokens, passwords in URLs, API keys of common providers, "password=…"-style assignments,
  e-mail addresses); with --max-field-chars, longer fields lose their middle to a visible marker (by default nothing is cut).
  File paths, the dataset's own labels and outcomes are not sent. --dry-run --show-prompts prints it all, sending
  nothing.

Results:
  findings.jsonl has one line per trace, as \`faultline analyze\` writes it, with annotator "${judgeAnnotator("<model>")}". A judge
  finding is kept only when its quote is found in a step it cites; rejected claims are counted in signals.judge. A
  trace that could not be judged has "modes": null and an "error" (exit status 2); re-running retries only those,
  because every completed call is cached in --db (or --cache FILE). \`faultline analyze --judge …\` runs the rules and
  the judge together: annotator "${judgeAnnotator("<model>", true)}", signals.provenance says per mode rules/judge/both.`,
    )
    .action((paths: string[], opts: JudgeCliOptions) => run(runJudge(paths, opts)));
}
