/*
 * What a guard replay found (`faultline replay`, the report's "what the recommended fixes would have caught"): the
 * canonical result types, here so that reports and the dashboard read them without importing the replay stage
 * (src/pipeline/replay.ts produces them). Modes are MAST codes; `event` is the guard event the intervention answered.
 */

/** A guard event's kind, as recorded in a replay (src/guards/types.ts `GuardEventType`). */
export type ReplayEventType = "message" | "tool_call" | "tool_result" | "plan" | "completion" | "usage";

export const REPLAY_DEFINITIONS = {
  steps_saved:
    "Agent steps (assistant steps and tool results) that would not have happened: all from the first stop on, plus each tool call a guard blocked before it, with its result. Refused completions and warnings save nothing.",
  tokens_saved:
    "Recorded usage (input + output) of the saved steps when the trace records usage; otherwise an estimate of the saved steps' own content (a lower bound: skipped model calls would also have re-read the context).",
  addresses: "A finding of the intervention's MAST mode whose evidence reaches the intervention's step or later.",
  truncation: "The replay ends at the first stop; interventions after it are not listed.",
} as const;

export type ReplayDecision = "warn" | "block" | "require" | "stop";

/** A detector finding, as cited in a replay. */
export interface ReplayFindingRef {
  mode: string;
  detector: string;
  steps: number[];
}

export interface ReplayInterventionEntry {
  guard: string;
  /** Canonical step index the intervention answers (null for events without one). */
  step: number | null;
  decision: ReplayDecision;
  mode: string;
  reason: string;
  /** What the guard answered: a tool call, a result, an attempt to end, a message… */
  event: ReplayEventType;
  /** On a completion: whether its text explicitly claimed success. */
  claims_success?: boolean;
  /** The trace's findings of the same mode whose evidence reaches this step or later. */
  addresses: ReplayFindingRef[];
}

export interface TraceReplay {
  trace_id: string;
  model: string;
  source: { file: string; format: string; index: number };
  /** Steps in the trace, and agent steps (assistant steps and tool results) among them. */
  steps: number;
  agent_steps: number;
  interventions: ReplayInterventionEntry[];
  /** Step of the first `stop`, when the guards would have ended the run. */
  stopped_at: number | null;
  steps_saved: number;
  tokens_saved: number;
  /** How tokens_saved was obtained; "none" when nothing was saved. */
  tokens_source: "usage" | "estimate" | "none";
  /** The rule detectors' findings on the trace, for the cross-tab. */
  findings: ReplayFindingRef[];
  /** Guards or detectors that threw: reported, never hidden (the rest of the replay still ran). */
  errors: { source: string; message: string; step?: number }[];
}

export interface ModelReplaySummary {
  model: string;
  traces: number;
  /** Traces with at least one intervention. */
  intervened: number;
  /** Traces the guards would have ended early. */
  stopped: number;
  decisions: Record<ReplayDecision, number>;
  steps_saved: number;
  tokens_saved: number;
  /** Findings of modes the guards cover, and how many an intervention addresses. */
  findings: number;
  findings_addressed: number;
}

/** One row of the cross-tab: a MAST mode, the guards' interventions on it and the detectors' findings of it. */
export interface ModeCrossTab {
  mode: string;
  name: string;
  /** Guards that intervene on this mode. */
  guards: string[];
  interventions: number;
  /** Traces with an intervention of this mode. */
  traces_intervened: number;
  /** Traces with a detector finding of this mode. */
  traces_with_finding: number;
  /** …of which an intervention of this mode addresses a finding. */
  traces_caught: number;
  /** Traces with an intervention of this mode but no finding of it: the guard saw what the rules did not (or a false alarm). */
  traces_guard_only: number;
}

/** Per guard: what it did over all traces. `guard` is the catalogue's `guard.id` (src/analysis/interventions.v1.json). */
export interface GuardReplaySummary {
  guard: string;
  /** The MAST modes this guard intervenes on. */
  modes: string[];
  interventions: number;
  /** Traces it intervened in. */
  traces: number;
  decisions: Record<ReplayDecision, number>;
  /** Distinct detector findings its interventions address. */
  findings_addressed: number;
}

export type HighlightKind = "repeated_calls" | "ended_without_deliverable" | "claimed_without_check" | "stopped";

export interface ReplayHighlight {
  kind: HighlightKind;
  trace_id: string;
  model: string;
  step: number | null;
  guard: string;
  decision: ReplayDecision;
  mode: string;
  reason: string;
}

export const HIGHLIGHT_TITLES: Readonly<Record<HighlightKind, string>> = {
  repeated_calls: "Repeated or repeatedly failing tool calls (FM-1.3)",
  ended_without_deliverable: "Runs that tried to end without their deliverable (FM-3.1)",
  claimed_without_check: "Success claimed without a check after the last change (FM-3.2/3.3)",
  stopped: "Runs the guards would have ended early",
};

export interface ReplaySummary {
  /** The guard configuration replayed: a preset name or the config file. */
  guards: string;
  definitions: typeof REPLAY_DEFINITIONS;
  totals: { traces: number; intervened: number; stopped: number; interventions: number; steps_saved: number; tokens_saved: number; errors: number };
  models: ModelReplaySummary[];
  /** One row per guard in the configuration, joinable with the intervention catalogue on `guard.id`. */
  guards_summary: GuardReplaySummary[];
  crosstab: ModeCrossTab[];
  /** The first catch of each kind per trace, in trace order. */
  highlights: ReplayHighlight[];
  traces: TraceReplay[];
}

