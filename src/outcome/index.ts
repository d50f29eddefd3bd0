export { scoreOutcome, type OutcomeOptions } from "./outcome.js";
export { scoreRootCause, matchesGroup, parseEntityName, verdict, IGNORED_NAMESPACES, DEFAULT_ITBENCH_RULE, type RootCauseScore, type ItbenchSuccessRule, type KindMatching } from "./itbench.js";
