export { summarize, type RunSummary, type ModelSummary } from "./summary.js";
export { modelTable } from "./terminal.js";
