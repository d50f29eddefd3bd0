export { diagnoseTrace, type DiagnoseOptions } from "./diagnose.js";
export { analyze, type AnalyzeOptions, type AnalyzeResult } from "./analyze.js";
