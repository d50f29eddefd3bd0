import { z } from "zod";
import { BasisSchema, FindingSchema } from "./finding.js";
import type { Trace } from "./schema.js";

/** Version tag of the per-trace diagnosis record (one line of findings.jsonl). */
export const DIAGNOSIS_SCHEMA_VERSION = "faultline.diagnosis/1";

export const OutcomeSchema = z.object({
  /** null = unknown (no outcome, or partial under the success rule). */
  success: z.boolean().nullable(),
  score: z.number().nullable().optional(),
  metric: z.string().nullable().optional(),
  /** How the verdict was reached, e.g. `reward == 1` or `itbench root-cause recall`. */
  rule: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The decisive failure of a failed run: the earliest step on the causal path to the failure and the agent that owned
 * it. Always a step of the recorded history. `null` on the record (with `decisive_reason`) when nothing supports one.
 */
export const DecisiveSchema = z.object({
  mode: z.string(),
  step: z.number().int().nonnegative(),
  agent: z.string().nullable(),
  basis: z.array(BasisSchema),
  confidence: z.number().min(0).max(1),
  rationale: z.string(),
});

/** 1 = found, 0 = examined and not found, null = not measured by any annotator of this record. */
export const ModeVectorSchema = z.record(z.string(), z.union([z.literal(0), z.literal(1), z.null()]));

/**
 * One line of findings.jsonl: a trace's failure vector with its evidence. `modes` is derived from `findings`
 * (a mode is 1 when at least one finding claims it); a trace that could not be annotated has `modes: null` and an
 * `error` — never an all-zero vector.
 */
export const DiagnosisSchema = z.object({
  schema: z.literal(DIAGNOSIS_SCHEMA_VERSION).default(DIAGNOSIS_SCHEMA_VERSION),
  trace_id: z.string(),
  source: z.object({ file: z.string(), format: z.string(), index: z.number().int().nonnegative() }),
  model: z.string().nullable(),
  framework: z.string().nullable(),
  outcome: OutcomeSchema,
  taxonomy: z.string(),
  modes: ModeVectorSchema.nullable(),
  /** Per measured mode, the annotators that examined it (a detector, a judge); unmeasured modes are absent. */
  measured_by: z.record(z.string(), z.array(z.string())).optional(),
  findings: z.array(FindingSchema),
  /** Where and by whom the run first went wrong (failed runs); null when nothing supports a decisive step. */
  decisive: DecisiveSchema.nullable().optional(),
  decisive_reason: z.string().optional(),
  /** Measurements that are not MAST modes (tool error rate, infrastructure errors, …). */
  signals: z.record(z.string(), z.unknown()),
  annotator: z.string(),
  error: z.string().optional(),
  /** Reference labels carried by the dataset, copied for agreement checks. */
  reference: z.record(z.string(), z.unknown()).optional(),
});

export type Outcome = z.infer<typeof OutcomeSchema>;
export type Diagnosis = z.infer<typeof DiagnosisSchema>;
export type Decisive = z.infer<typeof DecisiveSchema>;
export type ModeVector = z.infer<typeof ModeVectorSchema>;

/**
 * The failure vector derived from findings: every code of the taxonomy, 1 when any finding claims it, 0 when it was
 * examined and nothing was found, null when no annotator measured it (`measured` omitted = every code measured).
 */
export function vectorFromFindings(codes: readonly string[], findings: { mode: string }[], measured?: Iterable<string>): ModeVector {
  const present = new Set(findings.map((f) => f.mode));
  const examined = measured === undefined ? undefined : new Set(measured);
  return Object.fromEntries(codes.map((c) => [c, present.has(c) ? 1 : examined && !examined.has(c) ? null : 0])) as ModeVector;
}

/** Number of modes present in a vector (unmeasured modes count as nothing). */
export const modeCount = (v: ModeVector): number => Object.values(v).filter((x) => x === 1).length;

/**
 * The fields every annotator's record starts with: identity, source, outcome, taxonomy, annotator, and the dataset's
 * own labels as `reference: {goldLabels, benchmark?}` (the shape the analysis stage reads for agreement checks).
 */
export function diagnosisHeader(trace: Trace, outcome: Outcome, taxonomy: string, annotator: string) {
  const reference =
    trace.goldLabels?.length || trace.task?.benchmark
      ? { goldLabels: trace.goldLabels ?? [], ...(trace.task?.benchmark ? { benchmark: trace.task.benchmark } : {}) }
      : undefined;
  return {
    schema: DIAGNOSIS_SCHEMA_VERSION,
    trace_id: trace.id,
    source: { file: trace.source.file, format: trace.source.format, index: trace.source.index },
    model: trace.model ?? null,
    framework: trace.framework ?? null,
    outcome,
    taxonomy,
    annotator,
    ...(reference ? { reference } : {}),
  } as const;
}
