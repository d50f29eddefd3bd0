import { z } from "zod";

/**
 * What a finding rests on: the steps alone, the task statement, the dataset's expected actions or answer, or the
 * scored outcome. Statistics that relate modes to failure must not use findings based on the outcome (circular).
 */
export const BasisSchema = z.enum(["steps", "task", "expected", "outcome"]);
export type Basis = z.infer<typeof BasisSchema>;

/**
 * The unit of diagnosis everywhere: one claim that a failure mode is present, backed by steps and a verbatim quote.
 * A trace's failure vector is derived from its findings, never stored apart from them.
 */
export const FindingSchema = z.object({
  /** Canonical taxonomy code, e.g. `1.3`. */
  mode: z.string(),
  confidence: z.number().min(0).max(1),
  /** 0-based step indices the finding rests on; the first is where the mode first shows. */
  steps: z.array(z.number().int().nonnegative()),
  agent: z.string().optional(),
  /** A verbatim quote taken from the cited steps. */
  evidence: z.string(),
  /** Which detector or judge produced it, e.g. `rules/step-repetition` or `llm:gpt-4o`. */
  detector: z.string(),
  rationale: z.string().optional(),
  /** What the finding was based on; absent means `["steps"]` (records written before the field existed). */
  basis: z.array(BasisSchema).optional(),
});

/** A finding's basis, with the default for records that predate the field. */
export const basisOf = (f: Pick<Finding, "basis">): Basis[] => f.basis ?? ["steps"];

/** True when the finding does not rest on the outcome: usable to show that a mode goes with failure. */
export const outcomeIndependent = (f: Pick<Finding, "basis">): boolean => !basisOf(f).includes("outcome");

export type Finding = z.infer<typeof FindingSchema>;
