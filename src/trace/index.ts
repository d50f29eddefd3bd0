export * from "./schema.js";
export { buildTrace, linkToolCalls, compact, type StepDraft, type TraceDraft } from "./build.js";
export { FindingSchema, type Finding } from "./finding.js";
export { normalizeWhitespace, truncate, stepContent, quoteInSteps } from "./text.js";
export { DiagnosisSchema, OutcomeSchema, DIAGNOSIS_SCHEMA_VERSION, vectorFromFindings, diagnosisHeader, type Diagnosis, type Outcome } from "./diagnosis.js";
