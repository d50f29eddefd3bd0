export { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";
export { analyze, type AnalyzeOptions, type AnalyzeResult } from "./analyze.js";
export { diagnosedTraces, emptyRunCounts, type RunCounts } from "./diagnosed.js";
export { RunWriter } from "./run-writer.js";
