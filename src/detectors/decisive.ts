import type { Basis, Decisive, Finding, Step, Trace } from "../trace/index.js";
import { stepContent } from "../trace/index.js";
import type { DetectionContext } from "./context.js";
import { CONSEQUENTIAL_RE } from "./task-spec-violation.js";
import { TRANSFER_RE } from "./run-end.js";
import { canonicalArgs } from "./util.js";

/**
 * The decisive failure of a run: the earliest step on the causal path to the failure, and the agent that owned it
 * (the agent whose output was wrong, not the orchestrator or terminal that relayed it). Candidates, earliest wins:
 *
 * 1. expected actions (basis `expected`): the first consequential action that the dataset's expected actions do not
 *    contain (wrong tool or wrong arguments), or the transfer that replaced an expected action;
 * 2. answer provenance (basis `steps`, plus `expected` when the dataset's answer shows the final one is wrong): the
 *    first agent step that states a value the final answer carries and the task did not give;
 * 3. causal findings: the first step of a finding that says where the run went wrong (made-up or assumed data, a
 *    claim without the action, a contract broken), not where it ended (caps, final answers).
 *
 * Never a synthetic step outside the recorded history (an adapter's cap notice), never a harness or user message.
 * `null` with a reason when nothing supports one.
 */
export type DecisiveResult = { decisive: Decisive } | { decisive: null; reason: string };

/** Steps a decisive mistake can sit on: an agent's own output. */
const ownable = (s: Step | undefined): s is Step => s !== undefined && s.role === "assistant" && s.kind !== "termination" && !s.tags?.includes("step-limit");

/** The agent that owns a step: a tool result belongs to the agent that called the tool. */
function owner(trace: Trace, s: Step): Step | undefined {
  if (s.role === "assistant") return s;
  if (s.kind === "tool_result" || s.role === "tool") {
    const call = s.tool?.callIndex !== undefined ? trace.steps[s.tool.callIndex] : undefined;
    if (call) return call;
    return [...trace.steps.slice(0, s.index)].reverse().find((x) => x.role === "assistant");
  }
  return undefined;
}

/**
 * Detectors whose findings mark where a run ended, what it failed to do at the end, or a symptom that repeats (a
 * loop shows the run was stuck, not where it went wrong) — not candidates for the decisive step.
 */
const SYMPTOM_DETECTORS = new Set(["rules/premature-termination", "rules/no-verification", "rules/termination-unaware", "rules/step-repetition"]);

const NUMBER_RE = /(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w.])/g;
const ANSWER_TEXT_RE = /\bFINAL ANSWER\s*:|\b(?:the )?(?:final )?answer(?: is|:)|\bresult(?: is|:)|\bconclu\w+|\bTERMINATE\b/i;

const numbersIn = (text: string): string[] => [...text.matchAll(NUMBER_RE)].map((m) => m[0].replace(/,/g, ""));

/** The final answer's text: the last agent (or termination) step that gives one. */
function finalAnswer(trace: Trace): Step | undefined {
  for (let i = trace.steps.length - 1; i >= 0; i--) {
    const s = trace.steps[i]!;
    const text = (s.text ?? "").trim();
    if (!text || text === "TERMINATE") continue;
    if ((s.role === "assistant" || s.kind === "termination") && ANSWER_TEXT_RE.test(text)) return s;
    if (s.role === "assistant" && s.kind === "message") return s;
  }
  return undefined;
}

/** The first agent step that states a value the final answer carries (a value the task did not give). */
function answerProvenance(trace: Trace, ctx: DetectionContext): { step: Step; value: string } | undefined {
  const final = finalAnswer(trace);
  if (!final) return undefined;
  const text = final.text ?? "";
  const marker = text.search(/FINAL ANSWER\s*:/i);
  const answerText = marker >= 0 ? text.slice(marker) : text.slice(-600);
  const given = new Set([...numbersIn(ctx.task?.text ?? ""), ...numbersIn(instructionText(trace))]);
  const expected = typeof ctx.task?.expected === "string" || typeof ctx.task?.expected === "number" ? numbersIn(String(ctx.task.expected)) : [];
  const values = [...new Set(numbersIn(answerText))].filter((v) => !given.has(v) && !expected.includes(v) && (v.length >= 2 || numbersIn(answerText).length === 1));
  const task = `${ctx.task?.text ?? ""}\n${instructionText(trace)}`.toLowerCase();
  const expectedText = String(ctx.task?.expected ?? "").toLowerCase();
  // a textual answer: what follows "answer is" / "FINAL ANSWER:", bold or quoted phrases the task did not give
  const phrases = [...answerText.matchAll(/(?:answer(?: is|:)|FINAL ANSWER:)\s*\**\s*([^\n*.]{3,60})|\*\*([^*\n]{3,60})\*\*|"([^"\n]{3,60})"/gi)]
    .map((m) => (m[1] ?? m[2] ?? m[3] ?? "").trim())
    .filter((p) => p.length >= 4 && /[a-z]/i.test(p) && !task.includes(p.toLowerCase()) && !expectedText.includes(p.toLowerCase()) && !/^(?:final answer|answer|terminate|verified|correct)$/i.test(p));
  const alternatives = [...values.map((v) => v.replace(/\./g, "\\.")), ...phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))];
  if (!alternatives.length) return undefined;
  const re = new RegExp(`(?<![\\w.])(?:${alternatives.join("|")})(?![\\w])`, phrases.length ? "i" : "");
  for (const s of trace.steps) {
    if (s.index >= final.index) break;
    if (s.role === "user" || s.role === "system") continue;
    const m = re.exec(stepContent(s).replace(/(\d),(\d{3})/g, "$1$2"));
    if (m) {
      const o = owner(trace, s);
      if (o && ownable(o)) return { step: o, value: m[0] };
    }
  }
  return ownable(final) ? { step: final, value: values[0] ?? phrases[0]! } : undefined;
}

function instructionText(trace: Trace): string {
  const first = trace.steps.find((s) => s.role === "assistant");
  return trace.steps
    .slice(0, first ? first.index : 0)
    .map((s) => s.text ?? "")
    .join("\n");
}

/**
 * The first consequential action the expected actions do not contain, or the transfer that replaced them; when no
 * consequential action was taken at all although one was expected, the agent's last word (where it ended instead).
 */
function firstDeviation(trace: Trace, ctx: DetectionContext): Step | undefined {
  const expected = ctx.contract.expectedActions;
  if (!expected.length) return undefined;
  const want = new Set(expected.map((a) => `${a.name}\u0000${canonicalArgs(a.args)}`));
  const names = new Set(expected.map((a) => a.name));
  for (const s of trace.steps) {
    if (s.kind !== "tool_call" || s.role !== "assistant" || !s.tool) continue;
    if (TRANSFER_RE.test(s.tool.name) && !names.has(s.tool.name)) return s;
    if (!CONSEQUENTIAL_RE.test(s.tool.name)) continue;
    if (!want.has(`${s.tool.name}\u0000${canonicalArgs(s.tool.args)}`)) return s;
  }
  // no consequential action at all although one was expected: where the agent ended instead
  const writesExpected = expected.some((a) => CONSEQUENTIAL_RE.test(a.name));
  const wrote = trace.steps.some((s) => s.kind === "tool_call" && s.role === "assistant" && CONSEQUENTIAL_RE.test(s.tool?.name ?? "") && !TRANSFER_RE.test(s.tool?.name ?? ""));
  if (writesExpected && !wrote) return [...trace.steps].reverse().find((s) => s.role === "assistant" && s.kind === "message" && (s.text ?? "").trim());
  return undefined;
}

interface Candidate {
  step: Step;
  mode: string;
  basis: Basis[];
  confidence: number;
  rationale: string;
}

export function decisiveStep(trace: Trace, ctx: DetectionContext, findings: Finding[]): DecisiveResult {
  if (ctx.outcome.success === true) return { decisive: null, reason: "the run succeeded" };
  if (ctx.outcome.success === null && findings.length === 0) return { decisive: null, reason: "outcome unknown and no finding" };
  const candidates: Candidate[] = [];
  const modeAt = (step: number, fallback: string) => findings.find((f) => f.steps.includes(step))?.mode ?? fallback;

  const dev = firstDeviation(trace, ctx);
  if (dev?.tool) candidates.push({ step: dev, mode: modeAt(dev.index, TRANSFER_RE.test(dev.tool.name) ? "3.1" : "1.1"), basis: ["steps", "expected"], confidence: 0.7, rationale: `${dev.tool.name} is not among the dataset's expected actions (or not with these arguments)` });
  else if (dev) candidates.push({ step: dev, mode: modeAt(dev.index, "3.1"), basis: ["steps", "expected"], confidence: 0.5, rationale: "the run ended here without the consequential action the dataset expects" });

  // a finding made because the run failed (basis: outcome) says that something went wrong, not where
  const causal = findings.filter((f) => !SYMPTOM_DETECTORS.has(f.detector) && f.steps.length > 0 && !(f.basis ?? []).includes("outcome"));
  for (const f of causal) {
    const s = f.steps.map((i) => trace.steps[i]).find(ownable);
    if (s) candidates.push({ step: s, mode: f.mode, basis: f.basis ?? ["steps"], confidence: Math.min(0.7, f.confidence), rationale: `first step of the ${f.mode} finding: ${f.rationale ?? f.detector}` });
  }

  // a question-answering run (no expected actions): where did the wrong final answer come from
  if (ctx.outcome.success === false && ctx.contract.expectedActions.length === 0) {
    const prov = answerProvenance(trace, ctx);
    if (prov) candidates.push({ step: prov.step, mode: modeAt(prov.step.index, findings.find((f) => f.mode === "2.6" || f.mode === "1.1")?.mode ?? findings[0]?.mode ?? "3.3"), basis: ctx.task?.expected !== undefined ? ["steps", "expected", "outcome"] : ["steps", "outcome"], confidence: 0.5, rationale: `first step to state ${prov.value}, a value the failed run's final answer carries and the task did not give` });
  }

  if (!candidates.length) {
    // the earliest finding that sits on an agent step, whatever kind
    for (const f of findings) {
      const s = f.steps.map((i) => trace.steps[i]).find(ownable);
      if (s) candidates.push({ step: s, mode: f.mode, basis: f.basis ?? ["steps"], confidence: 0.35, rationale: `earliest agent step a ${f.mode} finding cites` });
    }
  }
  if (!candidates.length) return { decisive: null, reason: findings.length ? "no finding cites an agent step" : "no finding and no deviation from the expected actions" };
  const best = candidates.reduce((a, b) => (b.step.index < a.step.index || (b.step.index === a.step.index && b.confidence > a.confidence) ? b : a));
  return { decisive: { mode: best.mode, step: best.step.index, agent: best.step.agent ?? null, basis: best.basis, confidence: best.confidence, rationale: best.rationale } };
}
