import { TraceSchema, TRACE_SCHEMA_VERSION, type Step, type Trace } from "./schema.js";

export type StepDraft = Omit<Step, "index">;
export type TraceDraft = Omit<Trace, "schema" | "steps" | "agents" | "metadata"> & {
  agents?: string[];
  metadata?: Record<string, unknown>;
};

/**
 * Links tool calls and their results by call id: each tool_result gets `callIndex`, each tool_call `resultIndex`.
 * When a source reuses a call id, a result pairs with the most recent unanswered call of that id.
 */
export function linkToolCalls(steps: Step[]): void {
  const open = new Map<string, number[]>();
  for (const s of steps) {
    const id = s.tool?.callId;
    if (!id || !s.tool) continue;
    if (s.kind === "tool_call" || (s.kind === "plan" && s.role === "assistant")) {
      const q = open.get(id) ?? [];
      q.push(s.index);
      open.set(id, q);
    } else if (s.kind === "tool_result") {
      const q = open.get(id);
      const callIdx = q?.pop();
      if (callIdx === undefined) continue;
      s.tool.callIndex = callIdx;
      const call = steps[callIdx];
      if (call?.tool) call.tool.resultIndex = s.index;
    }
  }
}

/** Assembles a canonical trace: 0-based indices, linked tool calls, agent list, schema validation. */
export function buildTrace(draft: TraceDraft, stepDrafts: StepDraft[]): Trace {
  const steps: Step[] = stepDrafts.map((s, index) => ({ index, ...s }));
  linkToolCalls(steps);
  const agents = draft.agents ?? [...new Set(steps.map((s) => s.agent))];
  const candidate = { ...draft, schema: TRACE_SCHEMA_VERSION, agents, steps, metadata: draft.metadata ?? {} };
  const r = TraceSchema.safeParse(candidate);
  if (!r.success) {
    const first = r.error.issues[0];
    throw new Error(`trace ${draft.id} does not fit the canonical model at ${first?.path.join(".")}: ${first?.message}`);
  }
  return r.data;
}

/** Drops undefined-valued keys so JSON output and equality checks stay clean. */
export function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
