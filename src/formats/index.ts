export { readTraces, readAll } from "./read.js";
export { ADAPTERS, findAdapter } from "./registry.js";
export { walkFiles } from "./walk.js";
export type { Diagnostic, FileSummary, FormatAdapter, ReadEvent, ReadOptions, Sample, SourceFile, ReadContext, RecordItem } from "./types.js";
