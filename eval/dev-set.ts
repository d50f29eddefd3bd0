import { readFileSync } from "node:fs";
import { z } from "zod";
import { mast } from "../src/taxonomy/index.js";

/**
 * The labelled dev set: real corpus runs (referenced by corpus file, position and trace id, never copied), each
 * labelled twice independently per ../shared/reference/labelling-guideline.md and adjudicated. Used by
 * `npm run bench:accuracy`; never by the detectors themselves.
 */
const Vector = z.record(z.string(), z.union([z.literal(0), z.literal(1)]));
const Evidence = z.object({ steps: z.array(z.number().int().nonnegative()), quote: z.string(), why: z.string().optional() });
const Decisive = z.object({ step: z.number().int().nonnegative(), agent: z.string().nullable(), mode: z.string().nullable(), why: z.string().optional() });

export const DevRunSchema = z.object({
  id: z.string(),
  trace_id: z.string(),
  /** Corpus file relative to ../shared/corpus, and the trace's position in it. */
  file: z.string(),
  index: z.number().int().nonnegative(),
  corpus_source: z.string(),
  /** The dataset's own verdict (null = unknown). */
  outcome: z.boolean().nullable(),
  /** Adjudicated labels. */
  labels: Vector,
  evidence: z.record(z.string(), Evidence),
  decisive: Decisive.nullable(),
  non_mast: z.array(z.string()),
  /** The two independent passes, as labelled. */
  passes: z.object({ A: Vector, B: Vector }),
  /** Each pass's own decisive step (null where it gave none, or blamed only the user simulator). */
  passes_decisive: z.object({ A: z.object({ step: z.number().int().nonnegative(), agent: z.string().nullable() }).nullable(), B: z.object({ step: z.number().int().nonnegative(), agent: z.string().nullable() }).nullable() }),
  /** What was decided where the passes disagreed, and why. */
  adjudication: z.string(),
});
export type DevRun = z.infer<typeof DevRunSchema>;

/** Reads and validates the dev set: every line a run, every label vector complete, every positive with evidence. */
export function loadDevSet(path: string): DevRun[] {
  const out: DevRun[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      const r = DevRunSchema.safeParse(JSON.parse(line));
      if (!r.success) throw new Error(`${path}:${i + 1}: ${r.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`);
      for (const v of [r.data.labels, r.data.passes.A, r.data.passes.B]) {
        const missing = mast.codes.filter((c) => !(c in v));
        if (missing.length) throw new Error(`${path}:${i + 1}: ${r.data.id} has no label for ${missing.join(", ")}`);
      }
      const unsupported = mast.codes.filter((c) => r.data.labels[c] === 1 && !r.data.evidence[c]);
      if (unsupported.length) throw new Error(`${path}:${i + 1}: ${r.data.id} labels ${unsupported.join(", ")} without evidence`);
      out.push(r.data);
    });
  return out;
}
