import type { OutcomeInput } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { num, str } from "../common/index.js";
import type { OtelSpan } from "./span.js";

/**
 * A run's verdict from OpenTelemetry GenAI `gen_ai.evaluation.result` span events
 * (`gen_ai.evaluation.name`, `gen_ai.evaluation.score.value`, `gen_ai.evaluation.score.label`,
 * `gen_ai.evaluation.explanation`).
 *
 * Only an evaluation on a ROOT span (the run itself, not one LLM call inside it) whose name is one of
 * `VERDICT_EVALUATION_NAMES` — compared case-insensitively, with spaces, dots and dashes read as `_` — decides
 * `outcome.success`:
 * - the label decides when it is a verdict word (`pass`/`passed`/`true`/`success` or `fail`/`failed`/`false`/`failure`);
 * - otherwise a score of exactly 1 or 0 does;
 * - anything else (e.g. score 0.7 with no label), a label that contradicts a 0/1 score, or several root verdicts
 *   that disagree leaves `success` unset (unknown), with the score kept.
 * `metric` is `otel:<name as written>`. Every evaluation result of the trace, verdict or not (relevance, toxicity,
 * an evaluation of one LLM call …), is listed in `outcome.raw.evaluations`; none of them is ever turned into success.
 */
export const VERDICT_EVALUATION_NAMES: readonly string[] = ["task_success", "success", "outcome", "task_completion"];

export const EVALUATION_EVENT = "gen_ai.evaluation.result";

const PASS_LABELS = new Set(["pass", "passed", "true", "success"]);
const FAIL_LABELS = new Set(["fail", "failed", "false", "failure"]);

export interface EvaluationRecord {
  name?: string;
  spanId: string;
  /** The event sits on a root span of the trace. */
  root: boolean;
  score?: number;
  label?: string;
  explanation?: string;
  /** Why a verdict evaluation gave no success value, when it did not. */
  problem?: string;
}

const foldName = (name: string) => name.trim().toLowerCase().replace(/[\s.-]+/g, "_");

export const isVerdictEvaluationName = (name: string | undefined): boolean => name !== undefined && VERDICT_EVALUATION_NAMES.includes(foldName(name));

/** success from one evaluation: the label when it is a verdict word, else a 0/1 score; undefined when unclear. */
function verdictOf(e: EvaluationRecord): { success?: boolean; problem?: string } {
  const label = e.label?.trim().toLowerCase();
  const fromLabel = label === undefined ? undefined : PASS_LABELS.has(label) ? true : FAIL_LABELS.has(label) ? false : undefined;
  const fromScore = e.score === 1 ? true : e.score === 0 ? false : undefined;
  if (fromLabel !== undefined && fromScore !== undefined && fromLabel !== fromScore)
    return { problem: `label "${e.label}" contradicts score ${e.score}` };
  if (fromLabel !== undefined) return { success: fromLabel };
  if (fromScore !== undefined) return { success: fromScore };
  return { problem: e.label !== undefined ? `label "${e.label}" is not a verdict and score ${e.score ?? "absent"} is not 0/1` : `score ${e.score ?? "absent"} is not 0/1` };
}

/**
 * The outcome the trace's evaluation events state, or undefined when it has none. `roots` are the span ids without
 * a parent in the trace (as the span mapper builds its tree).
 */
export function evaluationOutcome(spans: readonly OtelSpan[], roots: ReadonlySet<string>): OutcomeInput | undefined {
  const evaluations: EvaluationRecord[] = [];
  const verdicts: { record: EvaluationRecord; success?: boolean }[] = [];
  for (const span of spans) {
    for (const e of span.events) {
      if (e.name !== EVALUATION_EVENT) continue;
      const a = e.attributes;
      const record: EvaluationRecord = compact({
        name: str(a["gen_ai.evaluation.name"]),
        spanId: span.spanId,
        root: roots.has(span.spanId),
        score: num(a["gen_ai.evaluation.score.value"]),
        label: typeof a["gen_ai.evaluation.score.label"] === "boolean" ? String(a["gen_ai.evaluation.score.label"]) : str(a["gen_ai.evaluation.score.label"]),
        explanation: str(a["gen_ai.evaluation.explanation"]),
      });
      evaluations.push(record);
      if (!record.root || !isVerdictEvaluationName(record.name)) continue;
      const v = verdictOf(record);
      if (v.problem) record.problem = v.problem;
      verdicts.push({ record, success: v.success });
    }
  }
  if (evaluations.length === 0) return undefined;
  const raw = { evaluations };
  if (verdicts.length === 0) return { raw };
  // The last verdict (file order) that states one speaks for the run (an evaluation may be re-run); disagreement is unknown.
  const chosen = verdicts.findLast((v) => v.success !== undefined) ?? verdicts.at(-1)!;
  const known = new Set(verdicts.map((v) => v.success).filter((s) => s !== undefined));
  if (known.size > 1) for (const v of verdicts) v.record.problem ??= "root verdict evaluations disagree";
  const success = known.size === 1 ? chosen.success : undefined;
  return compact({ success, score: chosen.record.score, metric: `otel:${chosen.record.name}`, raw });
}
