export { readTraces, readAll, readFile, TraceIds } from "./read.js";
export { ADAPTERS, findAdapter } from "./registry.js";
export { walkFiles } from "./walk.js";
// For stages that read files which are not traces (label files), and read them as the trace reader does.
export { textInput, readText, type TextInput } from "./text-files.js";
export { parseJsonLenient, type LenientResult } from "./io/lenient.js";
export { madTraceId } from "./common/mad-id.js";
export type { Diagnostic, FileSummary, FormatAdapter, ReadEvent, ReadOptions, Sample, SourceFile, ReadContext, RecordItem } from "./types.js";
// ITBench run files (deliverable and ground truth) are parsed here; the outcome stage scores them.
export {
  loadDeliverable, loadGroundTruth, parseDeliverable, parseGroundTruth, parseRemediation, rootCauseGroups, aliasSet,
  type ItbenchDeliverable, type ItbenchGroundTruth, type ItbenchRemediation, type GroundTruthGroup, type DeliverableEntity,
} from "./adapters/itbench-files.js";
export { otlpSpansByTrace, traceFromOtlpSpans } from "./adapters/otlp-traces.js";
