/**
 * What the workers do for a submitted run, stored with it (distributed_runs.spec): the rules always, and the LLM judge
 * when the run asked for one. The judge's settings are the `faultline judge` options as given (strings, as on the
 * command line) — never an API key: each worker reads the key from its own environment (`apiKeyEnv`).
 */
export interface WorkSpec {
  /** The run's annotator: the judge's (`llm:<model>`) when judged, else the rules'. */
  annotator: string;
  rulesAnnotator: string;
  judge?: JudgeSpec;
  /** What submit read (files, traces, problems): the run's counts once the workers are done. */
  counts?: Record<string, number>;
}

export interface JudgeSpec {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  mode?: "structured" | "mast-compatible";
  hints?: boolean;
  temperature?: string;
  timeout?: string;
  windowTokens?: string;
  contextTokens?: string;
  maxOutputTokens?: string;
  maxAttempts?: string;
  maxFieldChars?: string;
  responseFormat?: "json_schema" | "json_object" | "none";
  refutedHints?: "keep" | "drop";
}

export const JUDGE_SPEC_KEYS = [
  "baseUrl",
  "model",
  "apiKeyEnv",
  "mode",
  "hints",
  "temperature",
  "timeout",
  "windowTokens",
  "contextTokens",
  "maxOutputTokens",
  "maxAttempts",
  "maxFieldChars",
  "responseFormat",
  "refutedHints",
] as const satisfies readonly (keyof JudgeSpec)[];
