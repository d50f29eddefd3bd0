import { createHash } from "node:crypto";
import type { Finding } from "../trace/index.js";
import type { Taxonomy } from "../taxonomy/index.js";

/**
 * The judge's prompts, in our own words: the taxonomy definitions come from src/taxonomy, the examples are short
 * scenarios written for faultline. Two kinds: the structured prompt (JSON answer, windows, final pass, rule hints), and
 * the MAST-compatible prompt that keeps the official annotator's structure and answer format (A/B/C lines) so results
 * can be compared with published MAST numbers.
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Bump when the assembly of the prompts changes in a way the texts below do not show. */
export const PROMPT_REVISION = 1;

/** One short scenario per MAST v3 mode, written for faultline (custom taxonomies get none). */
export const MODE_EXAMPLES: Readonly<Record<string, string>> = {
  "1.1": "The task asks for a JSON list of at most three suspects; the final answer lists seven of them, in prose.",
  "1.2": "The reviewer, whose role is to comment on the code, rewrites the module itself and closes the session.",
  "1.3": "Step 9 runs `cat config.yaml` again with the same arguments and gets the same output as step 4; nothing changed in between.",
  "1.4": "At step 30 the agent asks for the order number the user already gave at step 3, as if that exchange never happened.",
  "1.5": "The deliverable is written at step 20, yet the agents keep trading 'Continue' messages until the turn limit stops them.",
  "2.1": "Midway through, the planner posts the original task again and the team restarts discovery from scratch.",
  "2.2": "The user asks to 'update the record' without saying which one; the agent picks one at random instead of asking.",
  "2.3": "Asked to fix a failing test, the agent spends twenty steps tuning its own logging helper.",
  "2.4": "The searcher finds that the API it looked up is deprecated but tells the coder only that the search is done.",
  "2.5": "The tester reports that the function crashes on empty input; the coder's next message declares the work complete.",
  "2.6": "The agent writes 'I will run the tests now' and then submits without running anything.",
  "3.1": "The agent announces 'next I will write the report', and the run ends with no report.",
  "3.2": "Code is edited and the answer submitted with no test run, re-read or check of any kind.",
  "3.3": "The agent's only check is that the output file exists, although the test it ran printed two failures.",
};

/** Codes judged in the final whole-run pass: the modes that can show after execution (MAST: 1.5, 3.1, 3.2, 3.3). */
export function finalPassCodes(taxonomy: Taxonomy): string[] {
  return taxonomy.modes.filter((m) => m.stages.includes("post")).map((m) => m.code);
}

function definitions(taxonomy: Taxonomy): string {
  return taxonomy.modes
    .map((m) => {
      const cat = taxonomy.category(m.category);
      return `${m.code} ${m.name} (${m.category}${cat ? ` ${cat.name}` : ""}): ${m.definition}`;
    })
    .join("\n");
}

function examples(taxonomy: Taxonomy): string {
  return taxonomy.modes
    .filter((m) => MODE_EXAMPLES[m.code] && taxonomy.id === "mast")
    .map((m) => `${m.code} ${m.name}: ${MODE_EXAMPLES[m.code]}`)
    .join("\n");
}

const ANSWER_FORMAT = `Answer with one JSON object and nothing else:
{"summary": string, "taskSuccess": true | false | null, "modes": {"<code>": {"present": boolean, "confidence": number from 0 to 1, "steps": [step numbers], "agent": string or null, "evidence": [verbatim quotes], "rationale": short string}}}
"modes" has exactly one entry for each code you are asked to judge, and no other entry.`;

const FORMAT_EXAMPLE = `Example of two entries of "modes" (for another run):
"1.3": {"present": true, "confidence": 0.8, "steps": [4, 9], "agent": "coder", "evidence": ["cat config.yaml"], "rationale": "Step 9 repeats the read of step 4 with nothing changed in between."},
"2.2": {"present": false, "confidence": 0.7, "steps": [], "agent": null, "evidence": [], "rationale": "The task names the record to update."}`;

/** The system message of the structured prompt: rules, definitions, examples, answer format. */
export function systemPrompt(taxonomy: Taxonomy): string {
  const ex = examples(taxonomy);
  return [
    "You audit runs of LLM-based agent systems. You read an execution trace and decide, for each failure mode you are asked about, whether it occurs in the part of the run you are shown.",
    "",
    "Rules:",
    "- A mode is present only when the trace shows it. Back every present mode with evidence: each string in \"evidence\" is copied character for character from the content of a step listed in \"steps\" (not from the step's header line, not paraphrased). Use \"...\" inside a quote only to skip words.",
    "- Steps are shown as [step N]; cite those numbers.",
    "- Text shown as [… N chars elided …] or [REDACTED:kind] was removed before you saw it: do not guess it and do not quote across it.",
    "- For an absent mode: present false, steps [], evidence [], agent null; confidence is how sure you are that it is absent.",
    "- For a present mode: confidence is how sure you are that it is present; agent is the agent responsible, as named in the trace.",
    "- Hints from rule-based detectors may be given. Treat each as a claim to check: confirm it with your own quote, or refute it (present false) and say why in the rationale.",
    "- taskSuccess is your view of whether the run achieved its task: true, false, or null when the trace does not let you tell.",
    "",
    `Failure modes (${taxonomy.title}, ${taxonomy.version}):`,
    definitions(taxonomy),
    ...(ex ? ["", "Short examples:", ex] : []),
    "",
    ANSWER_FORMAT,
    "",
    FORMAT_EXAMPLE,
  ].join("\n");
}

function hintsBlock(hints: Finding[]): string[] {
  if (!hints.length) return [];
  return [
    "Hints from rule-based detectors (confirm or refute each):",
    ...hints.map(
      (h) =>
        `- ${h.mode} from ${h.detector}${h.steps.length ? `, steps ${h.steps.join(", ")}` : ""}, confidence ${h.confidence}: ${JSON.stringify(h.evidence)}${h.rationale ? ` (${h.rationale})` : ""}`,
    ),
    "",
  ];
}

export interface WindowPromptInput {
  taxonomy: Taxonomy;
  traceId: string;
  preamble: string;
  /** Rendered step blocks of this window, joined. */
  stepsText: string;
  window: { index: number; count: number; firstStep: number; lastStep: number; overlapSteps: number; totalSteps: number };
  /** Running summary written by the judge for the earlier windows. */
  summary?: string;
  codes: string[];
  hints: Finding[];
  /** Codes left to the final pass, named so the judge does not spend effort on them. */
  deferredCodes: string[];
}

/** A call over one window of steps (or over the whole trace when it fits: then codes are all of them). */
export function windowMessages(p: WindowPromptInput): ChatMessage[] {
  const w = p.window;
  const whole = w.count === 1 && w.firstStep === 0;
  const position = whole
    ? `You are shown the whole run (steps 0–${w.lastStep}).`
    : `You are shown window ${w.index + 1} of ${w.count}: steps ${w.firstStep}–${w.lastStep} of ${w.totalSteps}.` +
      (w.overlapSteps ? ` The first ${w.overlapSteps} of them repeat the end of the previous window.` : "") +
      (w.firstStep > 0 ? " Earlier steps are summarised below; " : " ") +
      (w.lastStep < w.totalSteps - 1 ? "later steps are not shown yet." : "this window ends the run.");
  const user = [
    `Trace ${p.traceId}`,
    p.preamble,
    "",
    position,
    ...(p.summary ? ["", `Your summary of the run before step ${w.firstStep} (from earlier windows):`, p.summary] : []),
    "",
    ...hintsBlock(p.hints),
    "Trace steps:",
    p.stepsText,
    "",
    `Judge these codes: ${p.codes.join(", ")}.`,
    ...(p.deferredCodes.length
      ? [`Do not judge ${p.deferredCodes.join(", ")} here: a final pass over the whole run decides them.`]
      : []),
    whole
      ? "summary: one to three sentences on what happened in the run."
      : "summary: a running summary of the run from its start to the end of this window, at most 150 words, building on the earlier summary; it is handed to the next window.",
  ].join("\n");
  return [
    { role: "system", content: systemPrompt(p.taxonomy) },
    { role: "user", content: user },
  ];
}

export interface FinalPromptInput {
  taxonomy: Taxonomy;
  traceId: string;
  preamble: string;
  /** The whole-run view: outline of early steps and the tail in full. */
  viewText: string;
  summary: string;
  codes: string[];
  hints: Finding[];
}

/** The final whole-run pass for the termination and verification modes. */
export function finalMessages(p: FinalPromptInput): ChatMessage[] {
  const user = [
    `Trace ${p.traceId}`,
    p.preamble,
    "",
    "Final pass over the whole run. Earlier passes judged the other modes window by window; you decide only how the run ended: whether it stopped at the right point, and whether its result was checked, and checked correctly.",
    "",
    "Your summary of the run, written window by window:",
    p.summary || "(none)",
    "",
    ...hintsBlock(p.hints),
    p.viewText,
    "",
    `Judge these codes: ${p.codes.join(", ")}.`,
    "summary: one to three sentences on what happened in the whole run.",
  ].join("\n");
  return [
    { role: "system", content: systemPrompt(p.taxonomy) },
    { role: "user", content: user },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// MAST-compatible prompt
// ---------------------------------------------------------------------------------------------------------------

/** Label of a code's answer line: `<code> <name>`, with our (paper v3) names. */
export const mastLineLabel = (code: string, name: string): string => `${code} ${name}`;

const MAST_EXAMPLE_YES = new Set(["2.5", "3.2"]);

/**
 * The MAST-compatible prompt: one user message, no system message, in the official annotator's order — instructions,
 * the answer template between @@ lines, a worked example answer, the trace, the definitions, the examples. All of it
 * in our words; the worked example uses only codes of the taxonomy.
 */
export function mastMessages(taxonomy: Taxonomy, traceText: string): ChatMessage[] {
  const template = taxonomy.modes.map((m) => `${mastLineLabel(m.code, m.name)}: yes or no`).join("\n");
  const example = taxonomy.modes.map((m) => `${mastLineLabel(m.code, m.name)}: ${MAST_EXAMPLE_YES.has(m.code) ? "yes" : "no"}`).join("\n");
  const ex = examples(taxonomy);
  const content = [
    "Below is the execution trace of an LLM-based multi-agent system. Decide which of the failure modes defined after the trace occur in it, and whether the system completed its task.",
    "Answer in exactly the format between the two @@ lines: a one-sentence summary after A, yes or no after B, and one line per failure mode after C, each ending in yes or no.",
    "@@",
    "A. <one-sentence summary of the run>",
    "B. Task completed: yes or no",
    "C.",
    template,
    "@@",
    "",
    "An example answer, for a different run:",
    "@@",
    "A. The coder wrote the function, the tester reported a crash on empty input, and the coder submitted without addressing it or running the tests.",
    "B. Task completed: no",
    "C.",
    example,
    "@@",
    "",
    "The trace:",
    traceText,
    "",
    "Definitions of the failure modes:",
    definitions(taxonomy),
    ...(ex ? ["", "Examples of the failure modes:", ex] : []),
  ].join("\n");
  return [{ role: "user", content }];
}

export type JudgeMode = "structured" | "mast-compatible";

/**
 * A short hash of everything fixed in the prompt (instructions, definitions, examples, answer format, revision), so
 * a cached or stored label says which prompt produced it and a wording change invalidates the cache.
 */
export function promptVersion(taxonomy: Taxonomy, mode: JudgeMode): string {
  // Render every template with placeholder inputs: the hash then covers the wording of the user messages too.
  const hint: Finding = { mode: "<code>", confidence: 0.5, steps: [1], evidence: "<quote>", detector: "<detector>", rationale: "<why>" };
  const fixed =
    mode === "structured"
      ? [
          ...windowMessages({
            taxonomy, traceId: "<id>", preamble: "<preamble>", stepsText: "<steps>", summary: "<summary>", codes: ["<codes>"], hints: [hint], deferredCodes: ["<final>"],
            window: { index: 1, count: 3, firstStep: 5, lastStep: 9, overlapSteps: 2, totalSteps: 20 },
          }),
          ...windowMessages({
            taxonomy, traceId: "<id>", preamble: "<preamble>", stepsText: "<steps>", codes: ["<codes>"], hints: [], deferredCodes: [],
            window: { index: 0, count: 1, firstStep: 0, lastStep: 9, overlapSteps: 0, totalSteps: 10 },
          }),
          ...finalMessages({ taxonomy, traceId: "<id>", preamble: "<preamble>", viewText: "<view>", summary: "<summary>", codes: ["<codes>"], hints: [hint] }),
        ].map((m) => m.content)
      : mastMessages(taxonomy, "<trace>").map((m) => m.content);
  const h = createHash("sha256").update(JSON.stringify({ rev: PROMPT_REVISION, mode, taxonomy: taxonomy.version, fixed })).digest("hex");
  return `${mode === "structured" ? "s" : "m"}${PROMPT_REVISION}-${h.slice(0, 12)}`;
}
