/**
 * faultline/guards — runtime guards that put termination, loop control, verification, clarification and context
 * hygiene in code, outside the model. Each intervention names the MAST mode it prevents.
 */
export {
  GUARD_MODES,
  ManualClock,
  systemClock,
  proceed,
  intervene,
  isAgentAction,
  runGuard,
  type GuardMode,
  type GuardEvent,
  type GuardEventType,
  type MessageEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  type PlanEvent,
  type CompletionEvent,
  type UsageEvent,
  type ToolCallInfo,
  type ToolResultInfo,
  type PlanItem,
  type GuardAction,
  type GuardDecision,
  type ContinueDecision,
  type InterventionDecision,
  type GuardContext,
  type Guard,
  type RunContext,
  type Clock,
} from "./types.js";
export { GuardSet, ACTION_PRECEDENCE, strongest, type GuardVerdict, type GuardSetOptions, type GuardError } from "./pipeline.js";
export { LoopDetector, LOOP_DETECTOR, type LoopDetectorOptions } from "./loop-detector.js";
export {
  TerminationController,
  TERMINATION_CONTROLLER,
  WORK_REQUEST_PATTERN,
  workRequest,
  benchmarkProfile,
  type TerminationOptions,
  type TerminationState,
  type BenchmarkProfile,
} from "./termination-controller.js";
export { VerificationGate, VERIFICATION_GATE, type VerificationOptions } from "./verification-gate.js";
export { ClarifyGate, CLARIFY_GATE, type ClarifyOptions, type AmbiguityRule } from "./clarify-gate.js";
export { ContextGuard, CONTEXT_GUARD, INTENT_PATTERN, defaultSummary, type ContextGuardOptions, type ContextState, type FactRule } from "./context-guard.js";
export {
  normalizeArgs,
  callKey,
  sameCall,
  canonicalJson,
  resultFingerprint,
  textSimilarity,
  DEFAULT_IGNORED_KEYS,
  type ArgsEquivalenceOptions,
} from "./equivalence.js";
export {
  EvidenceTracker,
  toCallMatcher,
  toResultCheck,
  resultOk,
  describeSelector,
  getPath,
  DEFAULT_MUTATING,
  DEFAULT_CHECK,
  BOOKKEEPING_TOOLS,
  MUTATING_VERBS,
  READING_VERBS,
  SHELL_TOOLS,
  MUTATING_COMMAND_PATTERN,
  VERIFYING_COMMAND_PATTERN,
  type ToolSelector,
  type ToolSelectorSpec,
  type ResultCheck,
  type ResultCheckSpec,
  type EvidenceRule,
  type EvidenceState,
  type EvidenceStatus,
  type ValueMatcher,
  type TextMatcher,
} from "./predicates.js";
export { detectCompletionClaim, endsWithQuestion, CLAIM_PATTERNS, NEGATION_PATTERN, type ClaimDetection } from "../trace/claims.js";
export {
  GuardConfigSchema,
  DEFAULT_GUARD_CONFIG,
  ITBENCH_SRE_GUARD_CONFIG,
  ITBENCH_DELIVERABLE,
  BENCHMARK_PROFILES,
  GUARD_PRESETS,
  parseGuardConfig,
  loadGuardConfig,
  guardsFromConfig,
  guardSetFromConfig,
  type GuardConfig,
} from "./config.js";
export { guardEventsFromSteps, replaySteps, type ReplayEventOptions, type ReplayResult, type ReplayIntervention } from "./replay-events.js";
export {
  OpenAIGuard,
  runGuardedChatLoop,
  chatText,
  type OpenAIGuardOptions,
  type AssistantReview,
  type ReviewedToolCall,
  type ChatMessage,
  type ChatAssistantMessage,
  type ChatToolMessage,
  type ChatTextMessage,
  type ChatToolCall,
  type ChatUsage,
  type ChatContent,
  type ToolRunOutput,
  type GuardedChatLoopOptions,
  type GuardedChatLoopResult,
} from "./adapters/openai.js";
export {
  AiSdkGuard,
  type AiSdkGuardOptions,
  type AiSdkStepLike,
  type AiSdkToolLike,
  type AiSdkToolCallLike,
  type AiSdkToolResultLike,
  type AiSdkContentPartLike,
  type AiSdkUsageLike,
  type AiSdkMessageLike,
} from "./adapters/ai-sdk.js";
