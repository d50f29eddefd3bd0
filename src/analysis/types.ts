/** Label sources the analysis stage reads (see labels.ts); `trace-gold` = a dataset's labels carried by a Trace. */
export type LabelFormat = "findings" | "csv" | "mast-annotation" | "trace-gold";

/** 1 = mode present, 0 = absent, null = not judged for this trace (e.g. a null cell in MAST-Data). */
export type ModeValue = 0 | 1 | null;

/** Blamed agent and decisive step (0-based step index), from a reference or from a prediction. */
export interface Attribution {
  agent: string | null;
  step: number | null;
}

/**
 * One trace's labels, whatever file they came from: the unit every statistic and agreement measure works on.
 * `modes: null` means the trace has no failure vector at all (annotation failed, or a reference that only carries
 * attribution); such a trace still counts as a trace, never as "no failures".
 */
export interface LabelRow {
  trace_id: string;
  /** Other ids the same trace is known by (e.g. a file name), tried when matching references to predictions. */
  aliases?: string[];
  /** Grouping fields: model, framework, benchmark and any metadata, addressed by dot path (`reference.level`). */
  fields: Record<string, unknown>;
  /** true = success, false = failure, null = unknown (left out of successful-vs-failed comparisons). */
  success: boolean | null;
  modes: Record<string, ModeValue> | null;
  /**
   * The failure vector from outcome-independent evidence only (docs/statistics.md, "Circularity"): 1 when at least
   * one of the mode's findings does not rest on the scored outcome, 0 when the mode was examined and found only
   * through the outcome (or not at all), null exactly where `modes` is null. What the failed-vs-successful comparison
   * (delta, p, fatal/benign) counts. Absent for labels without per-finding basis (CSV, MAST-Data, gold labels):
   * `modes` is then used as it is.
   */
  independent?: Record<string, ModeValue> | null;
  /** 0-based step where each present mode first shows, when the source has steps. */
  firstStep?: Record<string, number>;
  attribution?: Attribution;
  /** Where the row came from, for messages. */
  origin: { file: string; line?: number; format: LabelFormat };
}

/** A problem with one input record: names the file and line, and says what was lost. */
export interface LabelDiagnostic {
  level: "error" | "warning";
  file: string;
  line?: number;
  message: string;
  /** What was dropped because of it: the whole row, or only one value in it. */
  skipped?: "row" | "value" | "file";
}
