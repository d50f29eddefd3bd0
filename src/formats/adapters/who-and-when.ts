import { basename } from "node:path";
import { buildTrace, compact, type GoldLabels, type StepDraft } from "../../trace/index.js";
import { matchAgentName } from "../common/agent-names.js";
import { asText, bool, isObj, num, str } from "../common/index.js";
import { magenticLogToSteps, normalizeMagenticAgent } from "../common/magentic.js";
import { stepLimitStep } from "../common/step-limit.js";
import type { FormatAdapter, ReadContext } from "../types.js";

/**
 * Who&When (ICML 2025, `mingyin1/Agents_Failure_Attribution`), trace-formats.md §7, and the AgenTracer / TracerTraj
 * rows that share its schema (§9).
 *
 * - Algorithm-Generated (CaptainAgent / AG2): `history[]{content, name, role}`; the agent is `name`. AG2's `role`
 *   (`user`/`assistant`) is the group-chat manager's point of view, not the speaker's, so it is not used: named
 *   experts are assistants, and `Computer_terminal` (the code executor) gives tool results.
 * - Hand-Crafted (Magentic-One): `history[]{content, role}` with the agent encoded in `role`; parsed by the role
 *   grammar shared with AgentRx (common/magentic.ts). Its correctness key is spelled `is_corrected`.
 * - AgenTracer: like Algorithm-Generated, plus an integer `step` on each item and no `is_correct`.
 *
 * One history item is exactly one step, so `mistake_step` (a string holding a 0-based index into `history`) is the
 * canonical step index. An Algorithm-Generated history cut at AG2's 10-message cap gets one more step after them: a
 * `termination` tagged `step-limit` (see `ag2MessageCap`).
 */

export const WHO_AND_WHEN_ID = "who-and-when";

type Variant = "algorithm-generated" | "hand-crafted" | "agentracer";

/** Keys this adapter maps; anything else in a record is kept in `metadata.extra`. */
const KNOWN_KEYS = new Set([
  "is_correct", "is_corrected", "question", "question_ID", "level", "ground_truth", "history",
  "mistake_agent", "mistake_step", "mistake_reason", "mistake_type", "labels", "system_prompt",
]);

function variantOf(rec: Record<string, unknown>, history: unknown[]): Variant {
  const items = history.filter(isObj);
  if (items.length > 0 && items.every((h) => typeof h.step === "number")) return "agentracer";
  if (items.some((h) => typeof h.name === "string")) return "algorithm-generated";
  if ("is_corrected" in rec || items.length > 0) return "hand-crafted";
  return "algorithm-generated";
}

const AG2_EXIT = /^\s*exitcode:\s*(-?\d+)/i;

/** AG2's code executor agent (`Computer_terminal` in Who&When). */
const isAg2Executor = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, "") === "computerterminal";

/** Named histories (AG2 and AgenTracer): one step per item, agent = `name`. */
function namedHistoryToSteps(history: unknown[], line: number | undefined, problems: string[]): StepDraft[] {
  return history.map((item, position) => {
    const ref = compact({ pointer: `/history/${position}`, line, original: isObj(item) && typeof item.step === "number" ? item.step : undefined });
    if (!isObj(item)) {
      problems.push(`history item ${position} is not an object; kept as an event step`);
      return compact({ agent: "unknown", role: "user", kind: "event", text: asText(item), ref });
    }
    const text = asText(item.content);
    const name = str(item.name)?.trim();
    if (!name) {
      const role = (str(item.role) ?? "").toLowerCase();
      problems.push(`history item ${position} has no name; the agent is taken from its role "${role}"`);
      return compact({ agent: role || "unknown", role: role === "user" || role === "human" ? "user" : "assistant", kind: "message", text, ref });
    }
    if (isAg2Executor(name)) {
      const exit = text !== undefined ? AG2_EXIT.exec(text) : null;
      // Without an exit code it is the executor's "There is no code from the last 1 message…" notice.
      if (!exit) return compact({ agent: name, role: "tool", kind: "event", text, ref });
      const exitCode = Number(exit[1]);
      return compact({ agent: name, role: "tool", kind: "tool_result", text, tool: compact({ name, output: text, exitCode, isError: exitCode !== 0 }), ref });
    }
    return compact({ agent: name, role: "assistant", kind: "message", text, ref });
  });
}

/**
 * Algorithm-Generated (AG2) group chats stop after 10 messages. The data shows the cap: of the 126 histories none is
 * longer than 10, all 56 shorter ones end with a message ending in "TERMINATE" (AG2's stop word), and 47 of the 70
 * at exactly 10 do not, so something other than the agents ended those. A TERMINATE only inside a message does not
 * stop the chat: 16 histories run on after Computer_terminal's notice 'reply me only with "TERMINATE"'.
 */
const AG2_MAX_MESSAGES = 10;
const AG2_STOP_WORD = /TERMINATE\s*$/;

/** The cap statement for an AG2 history cut at the message cap, else undefined. */
function ag2MessageCap(history: unknown[]): string | undefined {
  if (history.length !== AG2_MAX_MESSAGES) return undefined;
  const last = history.at(-1);
  if (AG2_STOP_WORD.test((isObj(last) ? asText(last.content) : undefined) ?? "")) return undefined;
  return `group chat ended at its ${AG2_MAX_MESSAGES}-message cap without TERMINATE`;
}

/** The canonical step index that `mistake_step` names, or a reason why it names none. */
function mistakeStepIndex(raw: unknown, history: unknown[], variant: Variant): { index?: number; problem?: string } {
  const n = num(raw);
  if (n === undefined || !Number.isInteger(n) || n < 0) return { problem: `mistake_step ${JSON.stringify(raw)} is not a step index` };
  if (variant === "agentracer") {
    // AgenTracer numbers items with `step`; it equals the position in the released data, but map through it anyway.
    const position = history.findIndex((h) => isObj(h) && h.step === n);
    if (position >= 0) return { index: position };
  }
  if (n >= history.length) return { problem: `mistake_step ${n} is past the end of history (${history.length} items)` };
  return { index: n };
}

/** Maps one Who&When / AgenTracer record; returns undefined (after reporting) when it cannot be a trace. */
export function whoAndWhenRecordToTrace(
  value: unknown,
  where: { file: string; index: number; line?: number },
  ctx: ReadContext,
) {
  const { line } = where;
  if (!isObj(value) || !Array.isArray(value.history)) {
    ctx.report({ line, level: "error", message: "not a Who&When record: expected an object with history[]", skipped: "trace" });
    return undefined;
  }
  const rec = value;
  const history = value.history as unknown[];
  const variant = variantOf(rec, history);
  const problems: string[] = [];
  let steps: StepDraft[];
  if (variant === "hand-crafted") {
    const mapped = magenticLogToSteps(history, { pointer: "/history", line });
    steps = mapped.steps;
    problems.push(...mapped.problems.map((p) => p.message));
  } else steps = namedHistoryToSteps(history, line, problems);
  for (const p of problems) ctx.report({ line, level: "warning", message: p });

  const questionId = str(rec.question_ID);
  const stem = basename(where.file).replace(/\.(jsonl?|json)$/i, "");
  const dataset = variant === "agentracer" ? "agentracer" : "who_and_when";
  const agents = [...new Set(steps.map((s) => s.agent))];
  // after the history's own steps, so labels (0-based history positions) keep their meaning
  const cap = variant === "algorithm-generated" ? ag2MessageCap(history) : undefined;
  if (cap) steps.push(stepLimitStep("ag2", cap, compact({ pointer: "/history", line })));

  const gold: GoldLabels = { source: dataset };
  const rawAgent = str(rec.mistake_agent);
  if (rawAgent !== undefined) gold.mistakeAgent = matchAgentName(variant === "hand-crafted" ? normalizeMagenticAgent(rawAgent) : rawAgent, agents);
  const step = mistakeStepIndex(rec.mistake_step, history, variant);
  if (step.index !== undefined) gold.mistakeStep = step.index;
  else ctx.report({ line, level: "warning", message: `${step.problem}; the label keeps no step` });
  const reason = str(rec.mistake_reason);
  if (reason !== undefined) gold.mistakeReason = reason;
  // A few records name the kind of mistake (`mistake_type` in 4 Hand-Crafted files, `labels` in one Algorithm-Generated file).
  const category = str(rec.mistake_type) ?? str(rec.labels);
  if (category !== undefined) gold.failures = [compact({ step: gold.mistakeStep, agent: gold.mistakeAgent, category, reason, rootCause: true })];

  const correct = bool(rec.is_correct) ?? bool(rec.is_corrected);
  const extra = Object.fromEntries(Object.entries(rec).filter(([k]) => !KNOWN_KEYS.has(k)));
  const metadata: Record<string, unknown> = compact({
    dataset,
    variant,
    level: rec.level,
    systemPrompts: isObj(rec.system_prompt) ? rec.system_prompt : undefined,
    mistakeStepRaw: rec.mistake_step,
    extra: Object.keys(extra).length ? extra : undefined,
  });
  try {
    return buildTrace(
      {
        // Both Who&When variants ran many of the same GAIA questions (45 shared question_IDs): the variant is part of the id.
        id: `${dataset}:${variant === "agentracer" ? "" : `${variant}:`}${questionId ?? `${stem}:${where.index}`}`,
        source: compact({ file: where.file, format: WHO_AND_WHEN_ID, index: where.index, line }),
        framework: variant === "hand-crafted" ? "magentic-one" : variant === "algorithm-generated" ? "ag2" : undefined,
        task: compact({ id: questionId, text: str(rec.question), expected: rec.ground_truth }),
        outcome: correct !== undefined ? { success: correct, metric: "is_correct" in rec ? "is_correct" : "is_corrected" } : undefined,
        goldLabels: [gold],
        metadata,
      },
      steps,
    );
  } catch (e) {
    ctx.report({ line, level: "error", message: (e as Error).message, skipped: "trace" });
    return undefined;
  }
}

export const whoAndWhen: FormatAdapter = {
  id: WHO_AND_WHEN_ID,
  title: "Who&When failure attribution (Algorithm-Generated AG2, Hand-Crafted Magentic-One) and AgenTracer rows",
  detect(s) {
    const r = s.records[0];
    return isObj(r) && Array.isArray(r.history) && "mistake_agent" in r && "mistake_step" in r;
  },
  async *read(file, ctx) {
    for await (const r of file.records()) {
      const trace = whoAndWhenRecordToTrace(r.value, { file: file.path, index: r.index, line: r.line }, ctx);
      if (trace) yield trace;
    }
  },
};
