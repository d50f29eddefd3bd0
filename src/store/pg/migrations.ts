/**
 * The PostgreSQL store's tables, as numbered migrations applied in order (each once, in a transaction, under an
 * advisory lock so that many workers starting together migrate once). The layout mirrors the SQLite schema
 * (src/store/schema.sql.ts, STORE_VERSION 3 since migration 4) column for column, so one set of queries answers both;
 * the differences are PostgreSQL's: text columns compare bytewise (COLLATE "C", as SQLite does), numbers are double
 * precision, and SQLite's FTS5 word index (trace_text) has no table here: the text search matches the same words with
 * a regular expression over the trace row (src/store/pg/store.ts, whereFor).
 * Append a migration, never edit one that shipped.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "the SQLite store's layout (its version 2): runs, traces, diagnoses, findings, cache",
    sql: `
CREATE TABLE runs (
  id TEXT COLLATE "C" PRIMARY KEY,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  inputs TEXT NOT NULL,
  annotator TEXT COLLATE "C" NOT NULL,
  taxonomy TEXT NOT NULL,
  trace_count INTEGER NOT NULL DEFAULT 0,
  diagnostics TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'complete',
  input_key TEXT
);
CREATE INDEX runs_by_input ON runs (input_key, annotator);

CREATE TABLE traces (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT COLLATE "C" NOT NULL,
  file TEXT COLLATE "C" NOT NULL,
  format TEXT COLLATE "C" NOT NULL,
  idx INTEGER NOT NULL,
  model TEXT COLLATE "C",
  framework TEXT COLLATE "C",
  steps INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  trace TEXT NOT NULL,
  PRIMARY KEY (run_id, trace_id)
);
CREATE INDEX traces_by_model ON traces (run_id, model);
CREATE INDEX traces_by_id ON traces (trace_id);

CREATE TABLE diagnoses (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT COLLATE "C" NOT NULL,
  annotator TEXT COLLATE "C" NOT NULL,
  success SMALLINT,
  score DOUBLE PRECISION,
  modes TEXT,
  mode_count INTEGER,
  diagnosis TEXT NOT NULL,
  error TEXT,
  PRIMARY KEY (run_id, trace_id, annotator)
);

CREATE TABLE findings (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT COLLATE "C" NOT NULL,
  annotator TEXT COLLATE "C" NOT NULL,
  mode TEXT COLLATE "C" NOT NULL,
  confidence DOUBLE PRECISION NOT NULL,
  first_step INTEGER,
  steps TEXT NOT NULL,
  agent TEXT,
  evidence TEXT NOT NULL,
  detector TEXT NOT NULL
);
CREATE INDEX findings_by_mode ON findings (run_id, mode);
CREATE INDEX findings_by_trace ON findings (run_id, trace_id);

CREATE TABLE cache (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`,
  },
  {
    version: 2,
    name: "distributed runs: what the workers do for a run submitted to the queue",
    sql: `
CREATE TABLE distributed_runs (
  run_id TEXT COLLATE "C" PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  spec TEXT NOT NULL,                 -- JSON WorkSpec: the annotator, and the judge's settings (never its API key)
  submitted INTEGER NOT NULL DEFAULT 0,
  sealed BOOLEAN NOT NULL DEFAULT false -- every job of the run is enqueued: the run completes when they are done
);
`,
  },
  {
    version: 3,
    name: "live OTLP ingest: spans as they arrive, and their traces until complete",
    sql: `
CREATE TABLE collected_traces (
  trace_id TEXT COLLATE "C" PRIMARY KEY,
  first_seen TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_seen TIMESTAMPTZ NOT NULL DEFAULT now(),
  root_ended BOOLEAN NOT NULL DEFAULT false, -- a span without a parent arrived (OTLP exports a span once it ended)
  spans INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'open',        -- open: collecting; submitted: stored in run_id and queued for the workers
  run_id TEXT COLLATE "C"
);
CREATE INDEX collected_open ON collected_traces (last_seen) WHERE state = 'open';
CREATE TABLE collected_spans (
  trace_id TEXT COLLATE "C" NOT NULL,
  span_id TEXT COLLATE "C" NOT NULL,
  request TEXT NOT NULL,                     -- the span as a one-span OTLP/JSON export request (its resource and scope kept)
  PRIMARY KEY (trace_id, span_id)
);
`,
  },
  {
    version: 4,
    name: "the SQLite store's version 3: stored dashboard aggregates; runs in the order they were begun (for --resume)",
    sql: `
CREATE TABLE aggregates (
  run_id TEXT COLLATE "C" NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  annotator TEXT COLLATE "C" NOT NULL,
  kind TEXT NOT NULL,            -- e.g. 'overview'
  version TEXT NOT NULL,         -- the run's updated_at when computed: a row of an older version is stale and ignored
  value TEXT NOT NULL,           -- JSON
  PRIMARY KEY (run_id, annotator, kind)
);
-- SQLite's rowid: which of two runs begun in the same millisecond is the later (existing runs are numbered in table order)
ALTER TABLE runs ADD COLUMN seq BIGSERIAL;
CREATE INDEX runs_by_input_latest ON runs (input_key, annotator, created_at DESC, seq DESC);
`,
  },
];

/** The newest migration: a database past it was written by a newer faultline. */
export const PG_STORE_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
