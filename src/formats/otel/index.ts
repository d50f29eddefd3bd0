export * from "./values.js";
export * from "./messages.js";
export * from "./span.js";
export { dialectOf, interpretSpan, explicitAgentName, frameworkOfScope, type Dialect } from "./interpret.js";
export { spansToSteps, type MappedSpans, type SpanMapOptions } from "./steps.js";
export { spanTraceDraft } from "./trace.js";
export { evaluationOutcome, isVerdictEvaluationName, VERDICT_EVALUATION_NAMES, EVALUATION_EVENT, type EvaluationRecord } from "./outcome.js";
