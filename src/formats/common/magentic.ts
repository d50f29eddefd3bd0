import type { Role, StepDraft, StepKind } from "../../trace/index.js";
import { compact } from "../../trace/index.js";
import { STEP_LIMIT_TAG } from "./step-limit.js";
import { asText, isObj, str } from "./values.js";

/**
 * Magentic-One message logs as shipped by Who&When (Hand-Crafted) and AgentRx (magentic_dataset): a list of
 * `{content, role}` where the speaking agent is encoded in `role`:
 *
 *   `human`                                → the user's task
 *   `Orchestrator (thought)`               → the orchestrator's reasoning (plans, ledgers, "Next speaker X")
 *   `Orchestrator (-> WebSurfer)`          → an instruction handed to WebSurfer
 *   `Orchestrator (termination condition)` → why the run stopped (and the final answer); "Max rounds (N) reached."
 *                                            is the round cap and is tagged `step-limit`
 *   `WebSurfer`, `FileSurfer`, `Assistant`, `Coder`, `ComputerTerminal` → that agent's output
 *
 * Both datasets label steps by position in this list, so the mapping is strictly one step per item.
 */

/** Magentic-One's agents, in their canonical spelling. */
export const MAGENTIC_AGENTS = ["Orchestrator", "WebSurfer", "FileSurfer", "Coder", "Assistant", "ComputerTerminal"] as const;

const squash = (s: string) => s.toLowerCase().replace(/[\s_-]+/g, "");

/** `Websurfer`, `web_surfer`, `Computer Terminal` → the canonical spelling; unknown names come back trimmed. */
export function normalizeMagenticAgent(name: string): string {
  const key = squash(name);
  return MAGENTIC_AGENTS.find((a) => squash(a) === key) ?? name.trim();
}

/** The exact orchestrator role strings Magentic-One writes; used by detection, so deliberately strict. */
const ORCHESTRATOR_ROLE_STRICT = /^Orchestrator \((?:thought|-> [^()]+|termination condition)\)$/;
const ORCHESTRATOR_ROLE = /^\s*orchestrator\s*\((.*)\)\s*$/i;
const HANDOFF = /^\s*->\s*(.+?)\s*$/;

export function isMagenticOrchestratorRole(role: string): boolean {
  return ORCHESTRATOR_ROLE_STRICT.test(role);
}

/**
 * True when the sampled records are a bare Magentic-One log: every record is `{content, role}` (no `name`, no tool
 * calls) and at least one role is an orchestrator role such as `Orchestrator (thought)`. Generic chat never uses
 * those role strings, so this does not claim OpenAI-style message lists.
 */
export function looksLikeMagenticLog(records: unknown[]): boolean {
  if (records.length === 0) return false;
  const shaped = records.every((r) => isObj(r) && typeof r.role === "string" && "content" in r && !("name" in r) && !("tool_calls" in r));
  return shaped && records.some((r) => isObj(r) && isMagenticOrchestratorRole(String(r.role)));
}

export interface MagenticSpeaker {
  agent: string;
  role: Role;
  kind: StepKind;
  /** For `Orchestrator (-> X)`: the agent the instruction goes to. */
  handoffTo?: string;
  /** Set when the role string did not follow the grammar above; the caller reports it. */
  unknownQualifier?: string;
}

/** Parses one Magentic-One `role` string into speaker, canonical role and step kind. */
export function parseMagenticRole(raw: string): MagenticSpeaker {
  const role = raw.trim();
  if (/^(human|user)$/i.test(role)) return { agent: "user", role: "user", kind: "message" };
  const orch = ORCHESTRATOR_ROLE.exec(role);
  if (orch) {
    const qualifier = orch[1]!.trim();
    const to = HANDOFF.exec(qualifier);
    if (to) return { agent: "Orchestrator", role: "assistant", kind: "handoff", handoffTo: normalizeMagenticAgent(to[1]!) };
    if (/^thought$/i.test(qualifier)) return { agent: "Orchestrator", role: "assistant", kind: "reasoning" };
    if (/^termination condition$/i.test(qualifier)) return { agent: "Orchestrator", role: "assistant", kind: "termination" };
    return { agent: "Orchestrator", role: "assistant", kind: "message", unknownQualifier: qualifier };
  }
  const agent = normalizeMagenticAgent(role);
  // ComputerTerminal only runs code blocks: its messages are tool results (refined per message below).
  if (agent === "ComputerTerminal") return { agent, role: "tool", kind: "tool_result" };
  return { agent, role: "assistant", kind: "message" };
}

const UNIX_EXIT = /Unix exit code:\s*(-?\d+)/;
const MAX_ROUNDS = /^\s*Max rounds \(\d+\) reached/;

export interface MagenticMappingOptions {
  /** JSON pointer of the list, e.g. `/history` or `` for a bare list. */
  pointer: string;
  line?: number;
}

export interface MagenticProblem {
  /** 0-based position in the list. */
  position: number;
  message: string;
}

/**
 * Maps a Magentic-One log to steps, exactly one per item so dataset step labels stay valid. Items that are not
 * `{content, role}` still take their slot (as an `event` step holding the raw item) and are returned as problems.
 */
export function magenticLogToSteps(items: unknown[], opts: MagenticMappingOptions): { steps: StepDraft[]; problems: MagenticProblem[] } {
  const steps: StepDraft[] = [];
  const problems: MagenticProblem[] = [];
  items.forEach((item, position) => {
    const ref = compact({ pointer: `${opts.pointer}/${position}`, line: opts.line });
    const roleText = isObj(item) ? str(item.role) : undefined;
    if (!isObj(item) || roleText === undefined) {
      problems.push({ position, message: `item ${position} has no role string; kept as an event step` });
      steps.push(compact({ agent: "unknown", role: "user", kind: "event", text: asText(item), ref }));
      return;
    }
    const text = asText(item.content);
    const speaker = parseMagenticRole(roleText);
    if (speaker.unknownQualifier !== undefined)
      problems.push({ position, message: `unknown orchestrator role "${roleText}"; kept as an Orchestrator message` });
    if (speaker.kind === "handoff") {
      steps.push(compact({ agent: speaker.agent, role: speaker.role, kind: speaker.kind, text, tool: { name: "handoff", args: { to: speaker.handoffTo } }, ref }));
      return;
    }
    if (speaker.kind === "tool_result") {
      const exit = text !== undefined ? UNIX_EXIT.exec(text) : null;
      if (!exit) {
        // "No code block detected in the messages…": the terminal had nothing to run.
        steps.push(compact({ agent: speaker.agent, role: "tool", kind: "event", text, ref }));
        return;
      }
      const exitCode = Number(exit[1]);
      steps.push(compact({ agent: speaker.agent, role: "tool", kind: "tool_result", text, tool: compact({ name: speaker.agent, output: text, exitCode, isError: exitCode !== 0 }), ref }));
      return;
    }
    // the orchestrator's round cap ("Max rounds (30) reached."); its time cap and "No agent selected." are not step caps
    const cap = speaker.kind === "termination" && MAX_ROUNDS.test(text ?? "") ? [STEP_LIMIT_TAG] : undefined;
    steps.push(compact({ agent: speaker.agent, role: speaker.role, kind: speaker.kind, text, ref, tags: cap }));
  });
  return { steps, problems };
}
