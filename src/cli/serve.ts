import type { Command } from "commander";
import { analyze, NoTracesError } from "../pipeline/index.js";
import { DEFAULT_HOST, DEFAULT_PORT, isLoopback, startServer, TOKEN_ENV } from "../server/index.js";
import { DEFAULT_DB, defaultDb, openStore, storeExists } from "../store/index.js";
import { displayPath, EXIT, requireInputs, UsageError } from "./io.js";

export interface ServeCliOptions {
  db: string;
  port: string;
  host: string;
  token?: string;
  out: string;
  format?: string;
  groundTruth?: string;
  replace?: boolean;
}

function portOf(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new UsageError(`--port must be a number from 0 to 65535, got "${v}"`);
  return Number(v);
}

/** Resolves on Ctrl-C or SIGTERM. */
function signalled(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export interface ServeIo {
  /** Stops the server when it resolves (default: Ctrl-C or SIGTERM). */
  until?: (url: string) => Promise<void>;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

export async function runServe(paths: string[], opts: ServeCliOptions, io: ServeIo = {}): Promise<number> {
  const out = io.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = io.err ?? ((l: string) => process.stderr.write(`${l}\n`));
  const port = portOf(opts.port);
  const token = opts.token ?? (process.env[TOKEN_ENV] || undefined);
  if (!isLoopback(opts.host) && !token)
    throw new UsageError(`--host ${opts.host} makes the dashboard reachable from other machines: give an access token with --token <secret> or ${TOKEN_ENV}=<secret>`);
  let runId: string | undefined;
  if (paths.length) {
    requireInputs(paths);
    err(`Analysing ${paths.map(displayPath).join(", ")} …`);
    let errors = 0;
    const result = await analyze(paths, {
      out: opts.out,
      db: opts.db,
      format: opts.format,
      groundTruth: opts.groundTruth,
      replace: opts.replace,
      onDiagnostic: (d) => {
        if (d.level === "error") errors++;
      },
    }).catch((e: unknown) => {
      if (e instanceof NoTracesError) throw new UsageError(`${e.message}${errors ? ` — \`faultline inspect\` lists the ${errors} errors` : ""}`);
      throw e;
    });
    runId = result.runId;
    const c = result.counts;
    err(
      `${c.traces} traces from ${c.files} files (${c.annotated} annotated${c.failed ? `, ${c.failed} could not be annotated` : ""}; ${errors} errors — \`faultline inspect\` lists them); run ${runId} stored in ${displayPath(opts.db)}`,
    );
  } else if (!storeExists(opts.db)) {
    throw new UsageError(`no store at ${opts.db}: run \`faultline analyze <paths>\` first, or \`faultline serve <paths>\` to analyse and serve in one go`);
  }
  const store = openStore(opts.db);
  const server = await startServer(store, { host: opts.host, port, token }).catch(async (e: NodeJS.ErrnoException) => {
    await store.close();
    if (e.code === "EADDRINUSE") throw new UsageError(`port ${port} on ${opts.host} is in use: choose another with --port (0 = any free port)`);
    throw e;
  });
  const path = runId ? `/runs/${runId}` : "/";
  // The token travels in the fragment, which the browser never sends to the server or to a referrer.
  const open = `${server.url}${path}${token ? `#token=${encodeURIComponent(token)}` : ""}`;
  out(`faultline dashboard: ${open}`);
  out(`  store ${displayPath(opts.db)} · UI from ${server.assets === "source" ? "source (web/)" : "the built package"} · Ctrl-C stops`);
  try {
    await (io.until ? io.until(open) : signalled());
  } finally {
    await server.close();
    await store.close();
  }
  return EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("serve")
    .description("Open the dashboard: which model fails how, with the steps that show it (optionally analysing traces first)")
    .argument("[paths...]", "trace files or folders to analyse before serving (else the store's existing runs are shown)")
    .option("--db <file|url>", "store written by `faultline analyze`: a SQLite file or a postgres:// URL (default: $FAULTLINE_DB, else .faultline/faultline.db)", defaultDb())
    .option("--port <n>", "port to listen on (0 = any free port)", String(DEFAULT_PORT))
    .option("--host <h>", "address to listen on; anything but loopback needs --token", DEFAULT_HOST)
    .option("--token <secret>", `access token every API call must carry (or set ${TOKEN_ENV})`)
    .option("-o, --out <dir>", "with paths: where findings.jsonl, summary.json and the reports go", "faultline-out")
    .option("--replace", "with paths: delete the store's earlier runs of the same inputs once the new one is complete")
    .option("--format <id>", "with paths: read every file with this format")
    .option("--ground-truth <file>", "with paths: ITBench ground-truth YAML for rollouts that have none beside them")
    .addHelpText(
      "after",
      `
The dashboard listens on ${DEFAULT_HOST} by default. On any other host it refuses to start without an access token;
open the printed address (it carries the token after '#', which is never sent over the network).

Examples:
  faultline serve                                  the runs already in ${DEFAULT_DB}
  faultline serve ../shared/corpus/tau-bench       analyse, then open the run
  ${TOKEN_ENV}=s3cret faultline serve --host 0.0.0.0 --port 8080`,
    )
    .action((paths: string[], opts: ServeCliOptions) => run(runServe(paths, opts)));
}
