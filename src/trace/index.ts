export * from "./schema.js";
export { buildTrace, linkToolCalls, compact, type StepDraft, type TraceDraft } from "./build.js";
export { FindingSchema, BasisSchema, basisOf, outcomeIndependent, type Finding, type Basis } from "./finding.js";
export { words, wordGrams, jaccard } from "./similarity.js";
export { repairJson, type RepairResult, type JsonAttempt } from "./json.js";
export { normalizeWhitespace, truncate, stepContent, stepFields, quoteInSteps } from "./text.js";
export { DiagnosisSchema, OutcomeSchema, DIAGNOSIS_SCHEMA_VERSION, vectorFromFindings, modeCount, diagnosisHeader, DecisiveSchema, type Diagnosis, type Outcome, type Decisive, type ModeVector } from "./diagnosis.js";
export {
  REPLAY_DEFINITIONS,
  HIGHLIGHT_TITLES,
  type ReplayEventType,
  type ReplayDecision,
  type ReplayFindingRef,
  type ReplayInterventionEntry,
  type TraceReplay,
  type ModelReplaySummary,
  type ModeCrossTab,
  type GuardReplaySummary,
  type HighlightKind,
  type ReplayHighlight,
  type ReplaySummary,
} from "./replay.js";
