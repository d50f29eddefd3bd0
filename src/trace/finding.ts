import { z } from "zod";

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
});

export type Finding = z.infer<typeof FindingSchema>;
