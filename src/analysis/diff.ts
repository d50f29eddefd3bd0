import { mast, type Taxonomy } from "../taxonomy/index.js";
import { matchRows } from "./agreement.js";
import { fieldValue, groupLabel, modeFlags, rollupFlags, type Flag, type Range } from "./groups.js";
import {
  benjaminiHochberg,
  fisherExact,
  mcnemarExact,
  newcombeInterval,
  newcombePairedInterval,
  wilsonInterval,
} from "./stats.js";
import type { LabelRow, ModeValue } from "./types.js";

/*
 * Two runs over the same or comparable traces: per group, which modes rose or fell and whether the change is
 * significant, and which traces changed label. Traces are matched by id (then by a unique alias) exactly as in
 * agreement.ts; every trace left unmatched is listed. When most of a group's traces are matched, the change is
 * measured on the pairs (Newcombe's paired interval, exact McNemar test); otherwise the two runs are compared as
 * independent samples (Newcombe's hybrid interval, Fisher's exact test). docs/statistics.md, "Diff".
 */

export interface DiffOptions {
  /** Dot path into row fields (`model`, `framework`, `group`…); none = one group `all`. */
  by?: string;
  taxonomy?: Taxonomy;
  confidence?: number;
  /** Significance level for `significant` (default 0.05). */
  alpha?: number;
}

export interface SideCounts {
  /** Traces with the flag. */
  count: number;
  /** Traces where the flag was judged. */
  judged: number;
  prevalence: number | null;
}

export type DiffTest = "mcnemar-exact" | "fisher-exact";

export interface ModeDiff {
  code: string;
  name: string;
  before: SideCounts;
  after: SideCounts;
  /** All traces of each side as independent samples: after − before in pp, Newcombe interval, Fisher p. */
  unpaired: { delta_pp: Range; p_value: number | null };
  /** Matched traces judged on both sides; null when the group has no such pair. */
  paired: {
    pairs: number;
    /** 0 → 1 */
    rose: number;
    /** 1 → 0 */
    fell: number;
    both: number;
    neither: number;
    delta_pp: Range;
    p_value: number;
  } | null;
  /** Which comparison decides: paired when matched traces are most of the group on both sides. */
  test: DiffTest | null;
  delta_pp: number | null;
  p_value: number | null;
  /** Benjamini–Hochberg across the taxonomy's modes of the group (roll-ups across roll-ups). */
  q_value: number | null;
  direction: "rose" | "fell" | "unchanged";
  significant: boolean;
}

export interface SideSummary {
  traces: number;
  annotated: number;
  successes: number;
  failures: number;
  success_rate: Range;
}

export interface GroupDiff {
  key: string;
  value: string;
  before: SideSummary;
  after: SideSummary;
  /** Matched traces that fall in this group on both sides. */
  pairs: number;
  test: DiffTest | null;
  modes: ModeDiff[];
  rollups: ModeDiff[];
  /** Codes that rose / fell significantly (modes only), largest change first. */
  rose: string[];
  fell: string[];
}

export interface TraceChange {
  /** The after-run id (the before-run id when it differs is in `before_id`). */
  trace_id: string;
  before_id?: string;
  group: { before: string; after: string };
  /** Judged on both sides: 0 → 1 and 1 → 0. */
  added: string[];
  removed: string[];
  /** Present when the trace gained or lost its failure vector (annotated on one side only). */
  vector?: "gained" | "lost";
  outcome: { before: boolean | null; after: boolean | null };
}

export interface DiffMatching {
  matched: number;
  matched_by_alias: number;
  before_only: string[];
  after_only: string[];
  ambiguous: { before: string; candidates: string[] }[];
  duplicate_before: string[];
  duplicate_after: string[];
  /** Matched traces whose group value differs between the runs: listed among changes, not in paired tests. */
  regrouped: number;
}

export interface DiffReport {
  by: string | null;
  matching: DiffMatching;
  groups: GroupDiff[];
  /** Matched traces whose labels or outcome changed, by group then id. */
  changed: TraceChange[];
  /** Matched traces with identical labels and outcome. */
  unchanged: number;
}

const nn = (x: number): number | null => (Number.isFinite(x) ? x : null);
const pp = (x: number): number | null => nn(100 * x);

function groupOf(row: LabelRow, by: string | undefined): string {
  return by ? groupLabel(fieldValue(row.fields, by)) : "all";
}

function side(rows: readonly LabelRow[], confidence: number | undefined): SideSummary {
  const successes = rows.filter((r) => r.success === true).length;
  const failures = rows.filter((r) => r.success === false).length;
  const w = wilsonInterval(successes, successes + failures, confidence);
  return {
    traces: rows.length,
    annotated: rows.filter((r) => r.modes !== null).length,
    successes,
    failures,
    success_rate: { estimate: nn(w.estimate), lo: nn(w.lo), hi: nn(w.hi) },
  };
}

function counts(rows: readonly LabelRow[], flag: Flag): SideCounts {
  let count = 0;
  let judged = 0;
  for (const r of rows) {
    const v = flag.value(r);
    if (v === null) continue;
    judged++;
    count += v;
  }
  return { count, judged, prevalence: judged > 0 ? count / judged : null };
}

type Raw = Omit<ModeDiff, "q_value" | "direction" | "significant">;

function flagDiff(before: readonly LabelRow[], after: readonly LabelRow[], pairs: readonly [LabelRow, LabelRow][], usePairs: boolean, flag: Flag, confidence?: number): Raw {
  const b = counts(before, flag);
  const a = counts(after, flag);
  const d = newcombeInterval(a.count, a.judged, b.count, b.judged, confidence);
  const unpaired = {
    delta_pp: { estimate: pp(d.estimate), lo: pp(d.lo), hi: pp(d.hi) },
    p_value: a.judged > 0 && b.judged > 0 ? fisherExact(a.count, a.judged - a.count, b.count, b.judged - b.count) : null,
  };
  let paired: Raw["paired"] = null;
  const t = { both: 0, rose: 0, fell: 0, neither: 0 };
  for (const [rb, ra] of pairs) {
    const vb: ModeValue = flag.value(rb);
    const va: ModeValue = flag.value(ra);
    if (vb === null || va === null) continue;
    if (vb === 1 && va === 1) t.both++;
    else if (va === 1) t.rose++;
    else if (vb === 1) t.fell++;
    else t.neither++;
  }
  const n = t.both + t.rose + t.fell + t.neither;
  if (n > 0) {
    // Table [[both, after only], [before only, neither]]: estimate = p(after) − p(before).
    const i = newcombePairedInterval(t.both, t.rose, t.fell, t.neither, confidence);
    paired = { pairs: n, ...t, delta_pp: { estimate: pp(i.estimate), lo: pp(i.lo), hi: pp(i.hi) }, p_value: mcnemarExact(t.rose, t.fell) };
  }
  const test: DiffTest | null = usePairs && paired ? "mcnemar-exact" : unpaired.p_value !== null ? "fisher-exact" : null;
  return {
    code: flag.code,
    name: flag.name,
    before: b,
    after: a,
    unpaired,
    paired,
    test,
    delta_pp: test === "mcnemar-exact" ? paired!.delta_pp.estimate : test === "fisher-exact" ? unpaired.delta_pp.estimate : null,
    p_value: test === "mcnemar-exact" ? paired!.p_value : test === "fisher-exact" ? unpaired.p_value : null,
  };
}

function family(raw: Raw[], alpha: number): ModeDiff[] {
  const q = benjaminiHochberg(raw.map((m) => m.p_value ?? NaN));
  return raw.map((m, i) => ({
    ...m,
    q_value: nn(q[i]!),
    direction: m.delta_pp === null || m.delta_pp === 0 ? "unchanged" : m.delta_pp > 0 ? "rose" : "fell",
    significant: m.p_value !== null && m.p_value < alpha && m.delta_pp !== null && m.delta_pp !== 0,
  }));
}

const present = (modes: Record<string, ModeValue> | null, code: string) => modes?.[code] ?? null;

function traceChange(b: LabelRow, a: LabelRow, codes: readonly string[], by: string | undefined): TraceChange | undefined {
  const added: string[] = [];
  const removed: string[] = [];
  for (const c of codes) {
    const vb = present(b.modes, c);
    const va = present(a.modes, c);
    if (vb === 0 && va === 1) added.push(c);
    if (vb === 1 && va === 0) removed.push(c);
  }
  const vector = b.modes === null && a.modes !== null ? "gained" : b.modes !== null && a.modes === null ? "lost" : undefined;
  const outcomeChanged = b.success !== a.success;
  if (!added.length && !removed.length && !vector && !outcomeChanged) return undefined;
  return {
    trace_id: a.trace_id,
    ...(b.trace_id !== a.trace_id ? { before_id: b.trace_id } : {}),
    group: { before: groupOf(b, by), after: groupOf(a, by) },
    added,
    removed,
    ...(vector ? { vector } : {}),
    outcome: { before: b.success, after: a.success },
  };
}

const NONE = "(none)";

/** Compares two runs' label rows per group. */
export function diffRuns(before: readonly LabelRow[], after: readonly LabelRow[], opts: DiffOptions = {}): DiffReport {
  const tax = opts.taxonomy ?? mast;
  const alpha = opts.alpha ?? 0.05;
  const by = opts.by || undefined;
  const { pairs, matching } = matchRows(before, after);

  const buckets = new Map<string, { before: LabelRow[]; after: LabelRow[]; pairs: [LabelRow, LabelRow][] }>();
  const bucket = (v: string) => {
    let x = buckets.get(v);
    if (!x) buckets.set(v, (x = { before: [], after: [], pairs: [] }));
    return x;
  };
  for (const r of before) bucket(groupOf(r, by)).before.push(r);
  for (const r of after) bucket(groupOf(r, by)).after.push(r);
  let regrouped = 0;
  for (const p of pairs) {
    const gb = groupOf(p[0], by);
    if (gb === groupOf(p[1], by)) bucket(gb).pairs.push(p);
    else regrouped++;
  }

  const flags = modeFlags(tax);
  // roll-ups over the modes both runs measured somewhere: a member one side never measured would make its any-of
  // unknown except where another member is present (judged on positives only), and the sides would not compare
  const measuredIn = (rows: readonly LabelRow[]) => new Set(tax.codes.filter((c) => rows.some((r) => r.modes?.[c] === 0 || r.modes?.[c] === 1)));
  const [mb, ma] = [measuredIn(before), measuredIn(after)];
  const rollups = rollupFlags(tax, new Set([...mb].filter((c) => ma.has(c))));
  const values = [...buckets.keys()].sort((a, b) => (a === NONE ? 1 : b === NONE ? -1 : a.localeCompare(b)));
  const groups: GroupDiff[] = values.map((value) => {
    const g = buckets.get(value)!;
    // Paired only when the matched traces are most of the group on both sides: then both runs saw the same traces.
    const usePairs = g.pairs.length * 2 > g.before.length && g.pairs.length * 2 > g.after.length;
    const modes = family(flags.map((f) => flagDiff(g.before, g.after, g.pairs, usePairs, f, opts.confidence)), alpha);
    const roll = family(rollups.map((f) => flagDiff(g.before, g.after, g.pairs, usePairs, f, opts.confidence)), alpha);
    const moved = (dir: "rose" | "fell") =>
      modes
        .filter((m) => m.significant && m.direction === dir)
        .sort((x, y) => Math.abs(y.delta_pp!) - Math.abs(x.delta_pp!) || x.code.localeCompare(y.code))
        .map((m) => m.code);
    return {
      key: by ?? "all",
      value,
      before: side(g.before, opts.confidence),
      after: side(g.after, opts.confidence),
      pairs: g.pairs.length,
      test: g.before.length && g.after.length ? (usePairs ? "mcnemar-exact" : "fisher-exact") : null,
      modes,
      rollups: roll,
      rose: moved("rose"),
      fell: moved("fell"),
    };
  });

  const changed: TraceChange[] = [];
  for (const [b, a] of pairs) {
    const c = traceChange(b, a, tax.codes, by);
    if (c) changed.push(c);
  }
  changed.sort((x, y) => x.group.after.localeCompare(y.group.after) || x.trace_id.localeCompare(y.trace_id));
  return {
    by: by ?? null,
    matching: {
      matched: matching.matched,
      matched_by_alias: matching.matched_by_alias,
      before_only: matching.reference_only,
      after_only: matching.predicted_only,
      ambiguous: matching.ambiguous.map((a) => ({ before: a.reference, candidates: a.candidates })),
      duplicate_before: matching.duplicate_reference,
      duplicate_after: matching.duplicate_predicted,
      regrouped,
    },
    groups,
    changed,
    unchanged: pairs.length - changed.length,
  };
}
