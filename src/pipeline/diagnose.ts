import { decisiveStep, detectionContext, runDetectors, RULES_ANNOTATOR, type Detector, DETECTORS } from "../detectors/index.js";
import { scoreOutcome, type OutcomeOptions } from "../outcome/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import { diagnosisHeader, vectorFromFindings, type Diagnosis, type Outcome, type Trace } from "../trace/index.js";

export interface DiagnoseOptions extends OutcomeOptions {
  taxonomy?: Taxonomy;
  detectors?: readonly Detector[];
}


/**
 * Rules diagnosis of one trace: detectors → failure vector derived from the findings, plus outcome and signals.
 * A trace that cannot be annotated (no steps, or every detector failed) gets `modes: null` and an error — never an
 * all-zero vector.
 */
export async function diagnoseTrace(trace: Trace, opts: DiagnoseOptions = {}): Promise<Diagnosis> {
  const taxonomy = opts.taxonomy ?? mast;
  const detectors = opts.detectors ?? DETECTORS;
  let outcome: Outcome;
  try {
    outcome = await scoreOutcome(trace, opts);
  } catch (e) {
    outcome = { success: null, score: null, metric: null, details: { error: (e as Error).message } };
  }
  const base = diagnosisHeader(trace, outcome, taxonomy.version, RULES_ANNOTATOR);
  if (trace.steps.length === 0)
    return { ...base, modes: null, findings: [], signals: {}, error: "the trace has no steps: nothing to annotate" };
  const ctx = detectionContext(trace, outcome);
  const r = runDetectors(trace, detectors, ctx);
  if (r.failures.length === detectors.length)
    return { ...base, modes: null, findings: [], signals: { ...r.signals }, error: `every detector failed: ${r.failures.map((f) => `${f.detector}: ${f.message}`).join("; ")}` };
  const findings = r.findings.filter((f) => taxonomy.codes.includes(f.mode));
  const d = decisiveStep(trace, ctx, findings);
  return {
    ...base,
    modes: vectorFromFindings(taxonomy.codes, findings, Object.keys(r.measuredBy)),
    measured_by: r.measuredBy,
    findings,
    decisive: d.decisive,
    ...(d.decisive === null ? { decisive_reason: d.reason } : {}),
    signals: { ...r.signals, rejected_findings: r.rejected, detector_failures: r.failures },
  };
}
