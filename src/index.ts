/**
 * faultline as a library: read agent traces in any supported format into the canonical model, diagnose MAST failure
 * modes with evidence, score outcomes, store runs, and analyse them per group. The runtime guards are a separate
 * entry, `faultline/guards`; the CLI is `faultline` (bin).
 */

// Reading traces
export { readTraces, readAll, ADAPTERS, findAdapter, walkFiles } from "./formats/index.js";
export type { Diagnostic, FileSummary, FormatAdapter, ReadEvent, ReadOptions, Sample, SourceFile, ReadContext, RecordItem } from "./formats/index.js";

// The canonical model (zod schemas, their types, and the helpers adapters build traces with)
export {
  TRACE_SCHEMA_VERSION,
  TraceSchema,
  StepSchema,
  RoleSchema,
  StepKindSchema,
  ToolSchema,
  UsageSchema,
  SpanRefSchema,
  StepRefSchema,
  SourceSchema,
  TaskSchema,
  OutcomeInputSchema,
  GoldLabelsSchema,
  GoldFailureSchema,
  FindingSchema,
  DiagnosisSchema,
  OutcomeSchema,
  DIAGNOSIS_SCHEMA_VERSION,
  buildTrace,
  linkToolCalls,
  compact,
  vectorFromFindings,
  quoteInSteps,
  stepContent,
} from "./trace/index.js";
export type {
  Trace,
  Step,
  Role,
  StepKind,
  Tool,
  Usage,
  TraceSource,
  Task,
  OutcomeInput,
  GoldLabels,
  GoldFailure,
  Finding,
  Diagnosis,
  Outcome,
  StepDraft,
  TraceDraft,
} from "./trace/index.js";

// The failure taxonomy
export { Taxonomy, mast, MAST_CODES, MAST_V3, loadTaxonomy, crosswalk, TaxonomyDataSchema } from "./taxonomy/index.js";
export type { MastCode, TaxonomyData, Mode, Category, Stage, LegacyRound } from "./taxonomy/index.js";

// Diagnosis: rule detectors, outcome scoring, the pipeline
export { runDetectors, DETECTORS, RULES_VERSION, RULES_ANNOTATOR, computeSignals } from "./detectors/index.js";
export type { Detector, RuleDiagnosis, Signals } from "./detectors/index.js";
export { scoreOutcome, scoreRootCause, DEFAULT_ITBENCH_RULE } from "./outcome/index.js";
export type { OutcomeOptions, RootCauseScore, ItbenchSuccessRule } from "./outcome/index.js";
export { diagnoseTrace, analyze } from "./pipeline/index.js";
export type { DiagnoseOptions, AnalyzeOptions, AnalyzeResult } from "./pipeline/index.js";

// LLM judge (needs an OpenAI-compatible endpoint)
export { judgeTrace, judgeTraces, planJudgement, dryRunReport, OpenAIChatModel, JsonlFileCache, MemoryCache, Redactor } from "./judge/index.js";
export type { JudgeOptions, ManyOptions, JudgePlan, TraceJudgement, DryRunReport, ChatModel, ProviderConfig, JudgeCache, RedactionConfig } from "./judge/index.js";

// Storage and reports
export { Store, DEFAULT_DB, openStore, SqliteStore, PgStore } from "./store/index.js";
export type { RunInfo, TraceRow, FaultlineStore, RunProgress } from "./store/index.js";
export { summarize } from "./report/index.js";
export type { RunSummary, ModelSummary } from "./report/index.js";

// Analysis of labelled runs
export {
  loadLabels,
  labelsFromText,
  labelsFromRecords,
  rowFromTrace,
  independentVector,
  LABEL_CSV_HEADER,
  groupStatistics,
  groupStats,
  classifyMode,
  coOccurrence,
  cascades,
  evaluateAgreement,
  wilsonInterval,
  newcombeInterval,
  fisherExact,
  meanInterval,
  benjaminiHochberg,
} from "./analysis/index.js";
export type {
  LabelRow,
  LabelFormat,
  LabelDiagnostic,
  Attribution,
  ModeValue,
  LabelLoad,
  LabelOptions,
  GroupOptions,
  GroupReport,
  GroupStats,
  ModeStats,
  ModeClass,
  CoOccurrence,
  Cascades,
  AgreementOptions,
  AgreementReport,
  Interval,
} from "./analysis/index.js";
