import { z } from "zod";

/**
 * The canonical trace model. Every format adapter produces it, every later stage reads it.
 * zod is the single source of truth: TypeScript types are inferred from these schemas and the JSON Schema in
 * `schema/trace.schema.json` is generated from them (`npm run schema`).
 */
export const TRACE_SCHEMA_VERSION = "faultline.trace/1";

export const RoleSchema = z.enum(["system", "user", "assistant", "tool"]);
export const StepKindSchema = z.enum([
  "message",
  "reasoning",
  "plan",
  "llm_call",
  "tool_call",
  "tool_result",
  "handoff",
  "termination",
  "error",
  "event",
]);

export const ToolSchema = z.object({
  name: z.string(),
  /** The id that pairs a call with its result in the source format. */
  callId: z.string().optional(),
  /** Parsed arguments when they were JSON; the raw string otherwise. */
  args: z.unknown().optional(),
  /** The tool's output text (on tool_result steps, and on combined call+result sources). */
  output: z.string().optional(),
  exitCode: z.number().int().optional(),
  isError: z.boolean().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** On a tool_result: index of its tool_call step; on a tool_call: index of its result. Set by linkToolCalls. */
  callIndex: z.number().int().nonnegative().optional(),
  resultIndex: z.number().int().nonnegative().optional(),
});

export const UsageSchema = z.object({
  input: z.number().nonnegative().optional(),
  output: z.number().nonnegative().optional(),
  cachedInput: z.number().nonnegative().optional(),
  reasoning: z.number().nonnegative().optional(),
});

export const SpanRefSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  parentSpanId: z.string().optional(),
});

/** Where a step came from in its source file, so evidence can be traced back. */
export const StepRefSchema = z.object({
  line: z.number().int().positive().optional(),
  /** A JSON-pointer-like path into the source document, e.g. `/history/12`. */
  pointer: z.string().optional(),
  /** The dataset's own step number when it differs from the canonical 0-based index. */
  original: z.union([z.string(), z.number()]).optional(),
});

export const StepSchema = z.object({
  /** 0-based canonical index; equal to the step's position in `Trace.steps`. */
  index: z.number().int().nonnegative(),
  agent: z.string(),
  role: RoleSchema,
  kind: StepKindSchema,
  text: z.string().optional(),
  tool: ToolSchema.optional(),
  /** ISO-8601 time. */
  time: z.string().optional(),
  span: SpanRefSchema.optional(),
  model: z.string().optional(),
  usage: UsageSchema.optional(),
  /** Free tags with a fixed vocabulary per meaning, e.g. `harness-retry`, `injected-context`, `duplicate`. */
  tags: z.array(z.string()).optional(),
  ref: StepRefSchema.optional(),
});

export const SourceSchema = z.object({
  file: z.string(),
  format: z.string(),
  /** 0-based position of the trace within its file. */
  index: z.number().int().nonnegative(),
  line: z.number().int().positive().optional(),
  pointer: z.string().optional(),
  /** Supporting files (reports, ground truth, run metadata) that fed this trace. */
  sidecars: z.array(z.string()).optional(),
});

export const TaskSchema = z.object({
  id: z.string().optional(),
  text: z.string().optional(),
  expected: z.unknown().optional(),
  benchmark: z.string().optional(),
});

/** What the outcome stage needs: a dataset's own verdict, or references to score it. */
export const OutcomeInputSchema = z.object({
  success: z.boolean().optional(),
  reward: z.number().optional(),
  score: z.number().optional(),
  metric: z.string().optional(),
  /** Path to a benchmark ground-truth file (ITBench scenario YAML). */
  groundTruth: z.string().optional(),
  /** Path to the run's deliverable (ITBench `agent_output.json`). */
  deliverable: z.string().optional(),
  raw: z.unknown().optional(),
});

export const GoldFailureSchema = z.object({
  step: z.number().int().nonnegative().optional(),
  agent: z.string().optional(),
  category: z.string().optional(),
  reason: z.string().optional(),
  rootCause: z.boolean().optional(),
});

/** Labels a dataset ships. Never mixed with faultline's own predictions. */
export const GoldLabelsSchema = z.object({
  /** Which dataset or annotator produced the labels, e.g. `who_and_when`, `agentrx`, `mast-data:o1`. */
  source: z.string(),
  mast: z.record(z.string(), z.union([z.literal(0), z.literal(1), z.null()])).optional(),
  mistakeAgent: z.string().optional(),
  /** 0-based canonical step index. */
  mistakeStep: z.number().int().nonnegative().optional(),
  mistakeReason: z.string().optional(),
  failures: z.array(GoldFailureSchema).optional(),
  /** How the labels were derived (annotation round, votes, crosswalk, codes that could not be mapped). */
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const TraceSchema = z.object({
  schema: z.literal(TRACE_SCHEMA_VERSION).default(TRACE_SCHEMA_VERSION),
  /** Stable, and unique within one read. */
  id: z.string().min(1),
  source: SourceSchema,
  task: TaskSchema.optional(),
  model: z.string().optional(),
  framework: z.string().optional(),
  agents: z.array(z.string()),
  steps: z.array(StepSchema),
  outcome: OutcomeInputSchema.optional(),
  goldLabels: z.array(GoldLabelsSchema).optional(),
  metadata: z.record(z.string(), z.unknown()).default({}),
});

export type Role = z.infer<typeof RoleSchema>;
export type StepKind = z.infer<typeof StepKindSchema>;
export type Tool = z.infer<typeof ToolSchema>;
export type Usage = z.infer<typeof UsageSchema>;
export type Step = z.infer<typeof StepSchema>;
export type TraceSource = z.infer<typeof SourceSchema>;
export type Task = z.infer<typeof TaskSchema>;
export type OutcomeInput = z.infer<typeof OutcomeInputSchema>;
export type GoldLabels = z.infer<typeof GoldLabelsSchema>;
export type GoldFailure = z.infer<typeof GoldFailureSchema>;
export type Trace = z.infer<typeof TraceSchema>;
