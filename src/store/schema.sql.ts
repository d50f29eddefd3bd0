/**
 * The store's tables. Bump STORE_VERSION and add a migration step (src/store/store.ts, `migrate`) when this changes.
 * 1: the first layout. 2: runs gain `status` (incomplete until the run finished) and `input_key` (what was analysed and
 * how, for `--replace`); every analysis is a new run with its own name instead of replacing the run of the same inputs.
 * 3: `aggregates`, a run's dashboard statistics computed when the run is written (version 2 stores gain the empty
 * table; their runs' statistics are computed on first view and kept); `trace_text`, an FTS5 word index of each stored
 * trace (id, file, model, canonical JSON) kept by triggers, for the dashboard's text search (the migration indexes
 * the traces a version 2 store holds).
 */
export const STORE_VERSION = 3;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,           -- the run's name: <first input>-<YYYYMMDD-HHMMSS>[-n] (version 1 stores: a hash)
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  inputs TEXT NOT NULL,          -- JSON array of input paths as given
  annotator TEXT NOT NULL,
  taxonomy TEXT NOT NULL,
  trace_count INTEGER NOT NULL DEFAULT 0,
  diagnostics TEXT NOT NULL DEFAULT '{}', -- JSON: counts of errors / skipped lines / skipped traces
  status TEXT NOT NULL DEFAULT 'complete', -- 'incomplete' from the start of a run until it finished
  input_key TEXT                 -- digest of the resolved inputs and the annotator: the runs --replace supersedes
);

CREATE TABLE IF NOT EXISTS traces (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT NOT NULL,
  file TEXT NOT NULL,
  format TEXT NOT NULL,
  idx INTEGER NOT NULL,
  model TEXT,
  framework TEXT,
  steps INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  trace TEXT NOT NULL,           -- canonical Trace JSON
  PRIMARY KEY (run_id, trace_id)
);

CREATE TABLE IF NOT EXISTS diagnoses (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT NOT NULL,
  annotator TEXT NOT NULL,
  success INTEGER,               -- 1, 0 or NULL (unknown)
  score REAL,
  modes TEXT,                    -- JSON failure vector {code: 1|0|null}, null = not measured; NULL when the trace could not be annotated
  mode_count INTEGER,            -- modes found (the 1s); unmeasured modes count as nothing
  diagnosis TEXT NOT NULL,       -- the full findings.jsonl record
  error TEXT,
  PRIMARY KEY (run_id, trace_id, annotator)
);

CREATE TABLE IF NOT EXISTS findings (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trace_id TEXT NOT NULL,
  annotator TEXT NOT NULL,
  mode TEXT NOT NULL,
  confidence REAL NOT NULL,
  first_step INTEGER,
  steps TEXT NOT NULL,
  agent TEXT,
  evidence TEXT NOT NULL,
  detector TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS findings_by_mode ON findings (run_id, mode);
CREATE INDEX IF NOT EXISTS findings_by_trace ON findings (run_id, trace_id);
CREATE INDEX IF NOT EXISTS traces_by_model ON traces (run_id, model);

-- Statistics of a run computed when it is written, so the dashboard does not compute them on first view. version is
-- the run updated_at when they were computed: a row of an older version is stale and ignored.
CREATE TABLE IF NOT EXISTS aggregates (
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  annotator TEXT NOT NULL,
  kind TEXT NOT NULL,            -- e.g. 'overview'
  version TEXT NOT NULL,
  value TEXT NOT NULL,           -- JSON
  PRIMARY KEY (run_id, annotator, kind)
);

CREATE TABLE IF NOT EXISTS cache (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`;

/**
 * The text search index: words of each trace row (rowid = traces.rowid), contentless (the text is in traces already),
 * kept by triggers on insert and delete (a REPLACE deletes through recursive_triggers, which the store turns on).
 */
export const traceTextOf = (row: string): string => `${row}.trace_id || char(10) || ${row}.file || char(10) || coalesce(${row}.model, '') || char(10) || ${row}.trace`;

export const TRACE_TEXT = `
CREATE VIRTUAL TABLE IF NOT EXISTS trace_text USING fts5(text, tokenize = 'unicode61', content = '', contentless_delete = 1, detail = none);
CREATE TRIGGER IF NOT EXISTS traces_text_ai AFTER INSERT ON traces BEGIN
  INSERT INTO trace_text (rowid, text) VALUES (new.rowid, ${traceTextOf("new")});
END;
CREATE TRIGGER IF NOT EXISTS traces_text_ad AFTER DELETE ON traces BEGIN
  DELETE FROM trace_text WHERE rowid = old.rowid;
END;
`;

/** Indexes over columns a migration may have added: created after the migrations ran. */
export const INDEXES = `
CREATE INDEX IF NOT EXISTS runs_by_input ON runs (input_key, annotator);
`;
