export { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";
export { analyze, type AnalyzeOptions, type AnalyzeResult } from "./analyze.js";
export { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";
export { RunWriter, NoTracesError, type RunWriterOptions, type RunOutputs, type CompletedRun, type RunStoredHook } from "./run-writer.js";
export { OutputDir, OUTPUT_FILES } from "./output-dir.js";
export {
  replayTrace,
  runContextOf,
  summarizeReplays,
  replaySummary,
  ReplayCollector,
  type ReplayOptions,
  type ReplayCollectorOptions,
} from "./replay.js";
export {
  judgeRun,
  planRun,
  judgeAnnotator,
  emptyCounts,
  combineDiagnoses,
  withDecisive,
  type JudgeInputOptions,
  type JudgeRunOptions,
  type JudgeRunCounts,
  type JudgeRunResult,
  type PlannedTrace,
} from "./judge.js";
export { pooledTraces, defaultJobs, type PooledTrace, type PoolOptions } from "./pool.js";
