import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type PgBoss from "pg-boss";
import { openQueue, type WorkSpec } from "../distributed/index.js";
import { PgStore } from "../store/index.js";
import { isLoopback } from "../server/index.js";
import { ensureLiveRun, sweep, type LiveRun } from "./assemble.js";
import { createReceiver } from "./receiver.js";

export const DEFAULT_COLLECT_PORT = 4318; // the OTLP/HTTP port collectors and SDK exporters use by default

export interface CollectorOptions {
  /** The PostgreSQL store (`postgres://…`): spans, traces, the queue. */
  db: string;
  host?: string;
  port?: number;
  /** Required off loopback. */
  token?: string;
  /** The live run collected traces go to (default `live`). */
  name?: string;
  spec: WorkSpec;
  /** Seconds without a new span after the root span arrived before a trace is complete (default 5). */
  idleSeconds?: number;
  /** Seconds after its first span when a trace without a root span is taken as it is (default 600). */
  maxAgeSeconds?: number;
  /** How often complete traces are handed to the workers, in ms (default 1000). */
  sweepMs?: number;
  maxBodyBytes?: number;
  maxDecompressedBytes?: number;
}

export interface RunningCollector {
  url: string;
  port: number;
  runId: string;
  /** Hands complete traces to the workers now (also done every `sweepMs`); returns how many. */
  sweepNow(): Promise<number>;
  close(): Promise<void>;
}

/**
 * `faultline collect`: an OTLP/HTTP receiver that an OpenTelemetry Collector (otlphttp exporter) or an SDK's OTLP
 * exporter can point at. Spans are stored as they arrive; a trace whose root span arrived and which has been quiet for
 * `idleSeconds` is built, stored in the live run and queued for `faultline worker`.
 */
export async function startCollector(opts: CollectorOptions): Promise<RunningCollector> {
  const host = opts.host ?? "127.0.0.1";
  if (!isLoopback(host) && !opts.token) throw new Error(`listening on ${host} accepts traces from beyond this machine: give a token with --token or FAULTLINE_TOKEN`);
  const store = new PgStore(opts.db, { max: 8 });
  let boss: PgBoss | undefined;
  let server: ServerType | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    await store.init();
    boss = await openQueue(opts.db, {}, { supervise: false });
    const live: LiveRun = await ensureLiveRun(store, opts.name ?? "live", opts.spec);
    const app = createReceiver({
      token: opts.token,
      maxBodyBytes: opts.maxBodyBytes,
      maxDecompressedBytes: opts.maxDecompressedBytes ?? (opts.maxBodyBytes ? opts.maxBodyBytes * 8 : undefined),
      store: async (spans) => {
        const r = await store.collectSpans(spans);
        return { refused: r.refused, reason: r.refused ? `their trace was already complete and handed to the workers (${r.refusedTraces.slice(0, 3).join(", ")})` : undefined };
      },
    });
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? DEFAULT_COLLECT_PORT }, () => resolve(s));
      s.once("error", reject);
    });
    const port = (server.address() as AddressInfo).port;
    let sweeping: Promise<number> | undefined;
    const sweepNow = () => {
      sweeping ??= (async () => {
        let total = 0;
        for (let n = -1; n !== 0; total += n) n = await sweep(store, boss!, live, { idleSeconds: opts.idleSeconds ?? 5, maxAgeSeconds: opts.maxAgeSeconds ?? 600 });
        return total;
      })().finally(() => (sweeping = undefined));
      return sweeping;
    };
    timer = setInterval(() => void sweepNow().catch((e: Error) => process.stderr.write(`faultline collect: handing traces to the workers failed: ${e.message}\n`)), opts.sweepMs ?? 1000);
    const shown = host.includes(":") ? `[${host}]` : host;
    const s = server;
    return {
      url: `http://${shown}:${port}`,
      port,
      runId: live.runId,
      sweepNow,
      close: async () => {
        clearInterval(timer);
        await sweeping?.catch(() => 0);
        await new Promise<void>((r) => {
          if ("closeAllConnections" in s) s.closeAllConnections();
          s.close(() => r());
        });
        await boss!.stop({ graceful: false, wait: true, close: true }).catch(() => {});
        await store.close();
      },
    };
  } catch (e) {
    clearInterval(timer);
    server?.close();
    await boss?.stop({ graceful: false, wait: false }).catch(() => {});
    await store.close();
    throw e;
  }
}
