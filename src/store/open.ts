import { existsSync } from "node:fs";
import { isPostgresUrl, PgStore } from "./pg/store.js";
import { SqliteStore } from "./sqlite.js";
import { DEFAULT_DB } from "./store.js";
import type { FaultlineStore } from "./types.js";

/** The environment variable that names the store when `--db` is not given. */
export const DB_ENV = "FAULTLINE_DB";

/** The store a command uses unless `--db` says otherwise: `FAULTLINE_DB`, else the embedded SQLite file. */
export const defaultDb = (): string => process.env[DB_ENV] || DEFAULT_DB;

/** Opens the store `db` names: a `postgres://` URL (connected on first use) or a SQLite file (created if missing). */
export function openStore(db: string): FaultlineStore {
  return isPostgresUrl(db) ? new PgStore(db) : new SqliteStore(db);
}

/** Whether there may be runs to read in `db`: a SQLite file that exists, or any PostgreSQL URL (the server says). */
export const storeExists = (db: string): boolean => isPostgresUrl(db) || existsSync(db);

/** `db` for messages: a path as given, a postgres URL without its password. */
export { displayUrl, isPostgresUrl } from "./pg/store.js";
