export {
  judgeTrace,
  judgeTraces,
  planJudgement,
  plannedMessages,
  dryRunReport,
  dryRunRow,
  planCoverage,
  emptyTotals,
  addToTotals,
  type JudgeOptions,
  type ManyOptions,
  type JudgePlan,
  type PlannedCall,
  type TraceJudgement,
  type JudgeSignals,
  type JudgeTotals,
  type HintStatus,
  type DryRunReport,
  type DryRunRow,
} from "./judge.js";
export { StoreCache } from "./store-cache.js";
export { loadPriceTable, parsePriceTable, priceFor, PriceTableError, type Price, type PriceTable } from "./price.js";
export {
  OpenAIChatModel,
  JudgeCallError,
  parseRetryAfter,
  backoffMs,
  resolveApiKey,
  costUsd,
  emptyUsage,
  addUsage,
  type ChatModel,
  type ProviderConfig,
  type TokenUsage,
  type CallResult,
  type AttemptEvent,
  type AttemptOutcome,
} from "./client.js";
export { JsonlFileCache, MemoryCache, cacheKey, traceContentHash, stableStringify, type JudgeCache, type CachedCall, type CacheKeyParts } from "./cache.js";
export { Pool, mapOrdered, type PoolStats } from "./pool.js";
export { Redactor, DEFAULT_PATTERNS, type RedactionConfig, type RedactionPattern, type RedactionCounts } from "./redact.js";
export { renderTrace, renderStep, estimateTokens, clipMiddle, elisionMarker, type RenderedTrace, type RenderedStep, type RenderOptions, type Elision } from "./render.js";
export { planWindows, wholeRunView, type WindowPlan, type StepWindow, type ForcedCut, type WholeRunView } from "./windows.js";
export { systemPrompt, windowMessages, finalMessages, mastMessages, promptVersion, finalPassCodes, MODE_EXAMPLES, type ChatMessage, type JudgeMode } from "./prompt.js";
export {
  judgeAnswerSchema,
  jsonSchemaResponseFormat,
  parseJudgeAnswer,
  parseMastAnswer,
  ModeVerdictSchema,
  type JudgeAnswer,
  type MastAnswer,
  type ModeVerdict,
} from "./response.js";
export { verifyClaim, EvidenceIndex, quotePieces, MIN_QUOTE_CHARS, type Claim, type ClaimCheck } from "./evidence.js";
