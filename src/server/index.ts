import { serve, type ServerType } from "@hono/node-server";
import type { AddressInfo } from "node:net";
import type { FaultlineStore, Store } from "../store/index.js";
import { createApp, type AppOptions } from "./app.js";
import { loadUiAssets, type UiAssets } from "./assets.js";
import { isLoopback } from "./security.js";

export { createApp, type AppOptions } from "./app.js";
export { loadUiAssets, bundleWeb, type UiAssets } from "./assets.js";
export { CONTENT_SECURITY_POLICY, isLoopback } from "./security.js";
export type * from "./api-types.js";
// the dashboard overview of a run, stored when the run is written (the CLI hands it to the pipeline as a hook)
export { storeOverviews } from "./overview.js";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 4477;
/** The environment variable that can carry the access token instead of --token. */
export const TOKEN_ENV = "FAULTLINE_TOKEN";

export interface ServeOptions extends Omit<AppOptions, "assets"> {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  assets?: UiAssets;
}

export interface RunningServer {
  /** The address to open, e.g. http://127.0.0.1:4477 (without the token). */
  url: string;
  port: number;
  host: string;
  assets: UiAssets["origin"];
  close(): Promise<void>;
}

/** Starts the dashboard over an open store. Refuses a non-loopback host without a token. */
export async function startServer(store: FaultlineStore | Store, opts: ServeOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? DEFAULT_HOST;
  if (!isLoopback(host) && !opts.token)
    throw new Error(`listening on ${host} exposes the traces beyond this machine: give an access token with --token or ${TOKEN_ENV}`);
  const assets = opts.assets ?? (await loadUiAssets());
  const app = createApp(store, { ...opts, assets });
  const server = await new Promise<ServerType>((resolveServer, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? DEFAULT_PORT }, () => resolveServer(s));
    s.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    host,
    assets: assets.origin,
    close: () =>
      new Promise<void>((done) => {
        // Open keep-alive connections (a browser's) would otherwise hold close() until they time out.
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
