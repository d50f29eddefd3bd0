import type { Command } from "commander";
import { DEFAULT_COLLECT_PORT, startCollector } from "../collect/index.js";
import { DEFAULT_RULES_SPEC, type WorkSpec } from "../distributed/index.js";
import { RULES_ANNOTATOR } from "../detectors/index.js";
import { judgeAnnotator } from "../pipeline/index.js";
import { defaultDb, isPostgresUrl } from "../store/index.js";
import { TOKEN_ENV } from "../server/index.js";
import { displayPath, EXIT, UsageError } from "./io.js";
import { addJudgeOptions, judgeSpecOf, type JudgeCliOptions } from "./judge.js";

interface CollectCliOptions extends Omit<JudgeCliOptions, "out"> {
  host: string;
  port: string;
  token?: string;
  name: string;
  idle: string;
  maxAge: string;
  maxBody: string;
  judge?: boolean;
}

const seconds = (flag: string, v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number of seconds, got "${v}"`);
  return n;
};

const signalled = () =>
  new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });

export async function runCollect(opts: CollectCliOptions, io: { until?: (url: string) => Promise<void> } = {}): Promise<number> {
  if (!isPostgresUrl(opts.db)) throw new UsageError(`collect needs a PostgreSQL store (--db postgres://… or FAULTLINE_DB): collected traces are diagnosed by \`faultline worker\`s; "${displayPath(opts.db)}" is not one`);
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0–65535, got "${opts.port}"`);
  const maxBody = Number(opts.maxBody);
  if (!Number.isInteger(maxBody) || maxBody < 1024) throw new UsageError(`--max-body must be a whole number of bytes ≥ 1024`);
  let spec: WorkSpec = DEFAULT_RULES_SPEC;
  if (opts.judge) {
    const judge = judgeSpecOf(opts);
    spec = { annotator: judgeAnnotator(judge.model), rulesAnnotator: RULES_ANNOTATOR, judge };
  }
  const token = opts.token ?? process.env[TOKEN_ENV];
  const c = await startCollector({
    db: opts.db,
    host: opts.host,
    port,
    token,
    name: opts.name,
    spec,
    idleSeconds: seconds("--idle", opts.idle),
    maxAgeSeconds: seconds("--max-age", opts.maxAge),
    maxBodyBytes: maxBody,
  }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "EADDRINUSE") throw new UsageError(`port ${port} on ${opts.host} is in use: choose another with --port`);
    throw new UsageError(e.message);
  });
  process.stderr.write(`faultline collect: OTLP/HTTP on ${c.url}/v1/traces (protobuf or JSON, gzip) → run ${c.runId} in ${displayPath(opts.db)}${token ? " · token required" : ""} · Ctrl-C stops\n`);
  try {
    await (io.until ? io.until(c.url) : signalled());
  } finally {
    await c.close();
  }
  return EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  const cmd = program
    .command("collect")
    .description("Receive traces live over OTLP/HTTP (POST /v1/traces) from an OpenTelemetry Collector or SDK exporter; complete traces are queued for `faultline worker`")
    .option("--db <url>", "the PostgreSQL store and queue, postgres://user:pass@host/db (default: $FAULTLINE_DB)", defaultDb())
    .option("--host <host>", "interface to listen on (a non-loopback one needs --token)", "127.0.0.1")
    .option("--port <n>", "port (4318 is OTLP/HTTP's own)", String(DEFAULT_COLLECT_PORT))
    .option("--token <token>", `bearer token every request must carry (default: $${TOKEN_ENV}); required off loopback`)
    .option("--name <run>", "the live run collected traces go to", "live")
    .option("--idle <s>", "seconds without a new span, after the root span arrived, before a trace is complete", "5")
    .option("--max-age <s>", "seconds after its first span when a trace whose root never arrived is taken as it is", "600")
    .option("--max-body <bytes>", "largest request body as sent (compressed); decompressed bodies may be 8× that", String(4 * 1024 * 1024))
    .option("--judge", "also run the LLM judge on collected traces (the provider options of `faultline judge` apply)");
  addJudgeOptions(cmd, { hidden: true });
  cmd.action((opts: CollectCliOptions) => run(runCollect(opts)));
}
