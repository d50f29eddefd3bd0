import { MAST_CODES } from "../taxonomy/index.js";
import { replaySummary } from "../pipeline/index.js";
import type { ReplaySummary } from "../trace/index.js";
import { buildTrace, DIAGNOSIS_SCHEMA_VERSION, vectorFromFindings, type Diagnosis, type Finding, type StepDraft } from "../trace/index.js";

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

/**
 * A guard replay over traces whose text is hostile: the loop detector quotes a failing tool's hostile error in its
 * reason, the trace id and model are markup (the other model's name has table and Markdown syntax), and the first
 * trace's rule finding is addressed.
 */
export function hostileReplay(): ReplaySummary {
  const failing = (i: number): StepDraft[] => [
    { agent: "a", role: "assistant", kind: "tool_call", tool: { name: "run", callId: `c${i}`, args: { cmd: HOSTILE.js, attempt: i } } },
    { agent: "t", role: "tool", kind: "tool_result", tool: { name: "run", callId: `c${i}`, output: `${HOSTILE.script} ${HOSTILE.img} ${HOSTILE.broken}`, exitCode: 1 } },
  ];
  const evil = buildTrace({ id: HOSTILE.script, source: { file: HOSTILE.js, format: "test", index: 0 }, model: HOSTILE.img }, [
    { agent: "user", role: "user", kind: "message", text: "Run it." },
    ...failing(1),
    ...failing(2),
    ...failing(3),
  ]);
  const calm = buildTrace({ id: "calm", source: { file: "runs/calm.jsonl", format: "test", index: 0 }, model: "calm | model # with *markdown* `syntax`" }, [
    { agent: "user", role: "user", kind: "message", text: "Hello." },
    { agent: "a", role: "assistant", kind: "message", text: "Hello, how can I help?" },
  ]);
  const repeated: Finding = { mode: "1.3", confidence: 0.9, steps: [1, 3, 5, 6], evidence: HOSTILE.script, detector: "rules/step-repetition" };
  return replaySummary([{ trace: evil, findings: [repeated] }, { trace: calm, findings: [] }]);
}

/**
 * hostileRun() with decisive steps recorded: the hostile trace's decisive step names a hostile agent and quotes
 * hostile text in its rationale, one failed trace has none (with a hostile reason), one has a step without an agent;
 * the rest predate the field (no `decisive`).
 */
export function decisiveRun(): Diagnosis[] {
  const out = hostileRun();
  const byId = (id: string) => out.find((d) => d.trace_id === id)!;
  byId(HOSTILE.script).decisive = {
    mode: "2.6",
    step: 1,
    agent: HOSTILE.script,
    basis: ["steps", "outcome"],
    confidence: 0.7,
    rationale: `The agent acted on ${HOSTILE.img} ${HOSTILE.js} ${HOSTILE.broken}`,
  };
  byId("a-f0").decisive = { mode: "3.3", step: 4, agent: "planner", basis: ["steps"], confidence: 0.85, rationale: "Verification skipped before the final answer." };
  byId("a-f1").decisive = { mode: "1.3", step: 2, agent: null, basis: ["steps"], confidence: 0.5, rationale: "" };
  const none = byId("b-1");
  none.decisive = null;
  none.decisive_reason = `no step is on the causal path ${HOSTILE.script}`;
  return out;
}

/** Modes the rule detectors leave unmeasured in the "not measured" tests, and the ones they examine. */
export const UNMEASURED = ["1.2", "2.2", "2.3", "2.4", "2.5"];
export const MEASURED = MAST_CODES.filter((c) => !UNMEASURED.includes(c));

/** A rules-style record whose vector leaves UNMEASURED null and derives the rest from `findings`. */
export function partlyMeasured(o: { id: string; success: boolean; findings: Finding[]; source?: Diagnosis["source"]; model?: string; annotator?: string }): Diagnosis {
  return {
    schema: "faultline.diagnosis/1",
    trace_id: o.id,
    source: o.source ?? { file: "runs/x.jsonl", format: "openai-chat", index: 0 },
    model: o.model ?? "model-n",
    framework: null,
    outcome: { success: o.success },
    taxonomy: "mast-v3",
    modes: vectorFromFindings(MAST_CODES, o.findings, MEASURED),
    measured_by: Object.fromEntries(MEASURED.map((c) => [c, [`rules/${c}`]])),
    findings: o.findings,
    signals: {},
    annotator: o.annotator ?? "rules@test",
  } as Diagnosis;
}
