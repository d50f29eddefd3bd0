import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** The test run's PostgreSQL server (src/testing/pg-global-setup.ts); throws, failing the test, when there is none. */
export function pgServerUrl(): string {
  const url = inject("pgUrl");
  if (!url) throw new Error(`no PostgreSQL server for the tests: ${inject("pgError") || "the global setup did not run"}`);
  return url;
}

/** A new, empty database on the test server, for one test file or test: its URL. */
export async function freshDatabase(prefix = "t"): Promise<string> {
  const base = pgServerUrl();
  const name = `faultline_${prefix}_${randomBytes(5).toString("hex")}`.toLowerCase();
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}
