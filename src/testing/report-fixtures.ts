import { MAST_CODES } from "../taxonomy/index.js";
import { DIAGNOSIS_SCHEMA_VERSION, type Diagnosis } from "../trace/index.js";

/** Test inputs for the report renderers: hostile text in every field a trace controls. */
export const HOSTILE = {
  script: `<script>alert("x")</script>`,
  img: `<img src=x onerror="alert(1)">`,
  js: `javascript:alert(document.cookie)`,
  /** A lone high surrogate, a lone low surrogate, NUL, a bidi override, and a valid astral character. */
  broken: `bad\uD800 half\uDC00 nul\u0000 rtl\u202Etxt.exe ok😀`,
  formula: `=HYPERLINK("http://evil","x")`,
  markdown: `| cell | break\n# heading [link](javascript:alert(1)) \`code\``,
};

/** A diagnosis with the given present modes (each backed by one finding). */
export function diagnosis(id: string, model: string | null, success: boolean | null, present: string[], evidence = "quoted step text"): Diagnosis {
  return {
    schema: DIAGNOSIS_SCHEMA_VERSION,
    trace_id: id,
    source: { file: `runs/${id}.jsonl`, format: "openai-chat", index: 0 },
    model,
    framework: null,
    outcome: { success, score: success === null ? null : success ? 1 : 0, metric: "reward" },
    taxonomy: "mast-v3",
    modes: Object.fromEntries(MAST_CODES.map((c) => [c, present.includes(c) ? 1 : 0])) as Record<string, 0 | 1>,
    findings: present.map((mode, i) => ({ mode, confidence: 0.8, steps: [i + 1], evidence, detector: "rules/test" })),
    signals: {},
    annotator: "rules@test",
  };
}

/** A small run: two models, successes and failures, and one trace whose every text field is hostile. */
export function hostileRun(): Diagnosis[] {
  const out: Diagnosis[] = [];
  for (let i = 0; i < 6; i++) out.push(diagnosis(`a-f${i}`, "model-a", false, i < 5 ? ["3.3", ...(i < 2 ? ["1.3"] : [])] : ["1.5"]));
  for (let i = 0; i < 4; i++) out.push(diagnosis(`a-s${i}`, "model-a", true, i < 2 ? ["1.3"] : []));
  out.push(diagnosis("b-1", "model-b", false, ["3.1", "1.5"]));
  out.push(diagnosis("b-2", "model-b", null, []));
  const evil = diagnosis(HOSTILE.script, HOSTILE.img, false, ["2.6"], `${HOSTILE.script} ${HOSTILE.img} ${HOSTILE.js} ${HOSTILE.broken} ${HOSTILE.markdown}`);
  evil.source.file = HOSTILE.js;
  evil.framework = HOSTILE.broken;
  evil.findings[0]!.detector = HOSTILE.img;
  evil.findings[0]!.agent = HOSTILE.script;
  evil.findings[0]!.rationale = HOSTILE.formula;
  out.push(evil);
  const unannotated = diagnosis(HOSTILE.formula, "model-b", false, []);
  unannotated.modes = null;
  unannotated.findings = [];
  unannotated.error = `${HOSTILE.script} could not be read`;
  out.push(unannotated);
  return out;
}
