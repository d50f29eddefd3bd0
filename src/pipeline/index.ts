export { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";
export { analyze, type AnalyzeOptions, type AnalyzeResult } from "./analyze.js";
export { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";
export { RunWriter, NoTracesError, type RunWriterOptions, type RunOutputs, type CompletedRun } from "./run-writer.js";
export { OutputDir, OUTPUT_FILES } from "./output-dir.js";
export { pooledTraces, defaultJobs, type PooledTrace, type PoolOptions } from "./pool.js";
