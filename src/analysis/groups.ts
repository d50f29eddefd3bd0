import { mast, type Taxonomy } from "../taxonomy/index.js";
import {
  benjaminiHochberg,
  fisherExact,
  meanInterval,
  newcombeInterval,
  wilsonInterval,
  type Interval,
} from "./stats.js";
import type { LabelRow, ModeValue } from "./types.js";

/*
 * Per-group failure statistics over label rows: prevalence of each mode among all, successful and failed traces,
 * the failed − successful difference with its interval and exact test, a fatal / benign / undetermined class, the
 * strongest predictors of failure, category roll-ups, co-occurrence and cascades. docs/statistics.md explains each.
 * Prevalence, co-occurrence, cascades and modes per failed trace count every finding; the failed − successful
 * comparison (delta, p, q, class, predictors) counts only outcome-independent evidence (`row.independent`), since a
 * finding made because the run failed cannot show that the mode goes with failure ("Circularity").
 */

export type ModeClass = "fatal" | "benign" | "undetermined";

export interface GroupOptions {
  /** Dot path into `row.fields` (`model`, `framework`, `benchmark`, `group`, `reference.level`…); none = one group. */
  by?: string;
  taxonomy?: Taxonomy;
  /** Confidence level of every interval (default 0.95). */
  confidence?: number;
  /** Significance level of the exact test in the fatal rule (default 0.05). */
  alpha?: number;
  /**
   * A mode is benign only if the Wilson lower bound of its prevalence among successful traces reaches this
   * (default 0.10): it demonstrably occurs in at least about one successful run in ten.
   */
  benignMinSuccessPrevalence?: number;
}

/** An interval reported as JSON: null where the data cannot define it. */
export interface Range {
  estimate: number | null;
  lo: number | null;
  hi: number | null;
}

export interface ModeStats {
  /** Mode code (`1.5`), category id (`FC1`) or the merged `FC3-verification` flag. */
  code: string;
  name: string;
  /** Traces with the mode, per outcome. */
  counts: { all: number; successful: number; failed: number };
  /** Traces where the mode was judged (the denominators). */
  judged: { all: number; successful: number; failed: number };
  /** Fractions; null when the denominator is 0. */
  prevalence: { all: number | null; successful: number | null; failed: number | null };
  prevalence_ci: { all: Range; successful: Range; failed: Range };
  /**
   * What the failed-vs-successful comparison counts: traces where the mode is supported by outcome-independent
   * evidence (a finding whose basis is not the scored outcome). Equal to counts / judged when no finding rests on the
   * outcome, and for labels that carry no basis (CSV, MAST-Data). docs/statistics.md, "Circularity".
   */
  independent: {
    counts: { all: number; successful: number; failed: number };
    judged: { all: number; successful: number; failed: number };
    prevalence: { all: number | null; successful: number | null; failed: number | null };
  };
  /**
   * Failed minus successful prevalence in percentage points (positive = more common in failures), from the
   * outcome-independent counts.
   */
  delta_pp: { value: number | null; lo: number | null; hi: number | null };
  /**
   * The same difference over every finding, including findings made because the run failed: circular (it is
   * inflated by construction), shown beside delta_pp for reference only; no test or class rests on it.
   */
  delta_pp_all_findings: { value: number | null; lo: number | null; hi: number | null };
  /** Fisher's exact test, two-sided, on the 2×2 table outcome × mode (outcome-independent counts). */
  p_value: number | null;
  /** Benjamini–Hochberg adjusted p across the taxonomy's modes of this group (roll-ups across roll-ups). */
  q_value: number | null;
  class: ModeClass;
  /** One sentence saying why the rule gave this class. */
  reason: string;
}

export interface Predictor {
  rank: number;
  code: string;
  delta_pp: number;
  lo: number;
  hi: number;
  p_value: number;
  class: ModeClass;
}

export interface CoOccurrence {
  a: string;
  b: string;
  /** Traces with both modes. */
  both: number;
  /** Traces where both modes were judged. */
  judged: number;
  /** P(a ∧ b) / (P(a)·P(b)): 1 = independent, > 1 = appear together more than chance. */
  lift: number | null;
}

export interface CascadePair {
  /** The mode that first shows earlier in more traces. */
  before: string;
  after: string;
  /** Traces where `before` first shows strictly before `after`. */
  count: number;
  /** Traces with the opposite order. */
  reverse: number;
  /** Traces where both first show at the same step. */
  same_step: number;
}

export interface RootCandidate {
  code: string;
  /** Traces where this mode is (jointly) the earliest mode to show. */
  first: number;
  /** Traces where the mode is present with a known first step. */
  present: number;
  share: number;
}

export interface Cascades {
  /** Traces with at least one present mode that has a first step. */
  traces: number;
  pairs: CascadePair[];
  roots: RootCandidate[];
}

export interface GroupStats {
  key: string;
  value: string;
  traces: number;
  /** Traces that carry a failure vector (modes not null). */
  annotated: number;
  successes: number;
  failures: number;
  unknown_outcome: number;
  success_rate: Range;
  /** Distinct modes per annotated failed trace: mean with a t interval. */
  modes_per_failed_trace: { mean: number | null; lo: number | null; hi: number | null; n: number };
  modes: ModeStats[];
  /** FC1…FC3 any-of flags and the merged FC3-verification flag (3.2 ∨ 3.3). */
  rollups: ModeStats[];
  /** Modes more common in failures, strongest first (by the lower end of the delta interval). */
  predictors: Predictor[];
  cooccurrence: CoOccurrence[];
  cascades: Cascades;
}

export interface GroupReport {
  by: string | null;
  groups: GroupStats[];
}

const NONE = "(none)";
export const FC3_VERIFICATION = "FC3-verification";

const nn = (x: number): number | null => (Number.isFinite(x) ? x : null);
const range = (i: Interval): Range => ({ estimate: nn(i.estimate), lo: nn(i.lo), hi: nn(i.hi) });

/** Reads a dot path from a row's fields; a literal key containing dots wins over the path. */
export function fieldValue(fields: Record<string, unknown>, path: string): unknown {
  if (path in fields) return fields[path];
  let cur: unknown = fields;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** The group a field value falls in: `(none)` for missing or empty, JSON for objects. */
export function groupLabel(v: unknown): string {
  if (v === undefined || v === null || v === "") return NONE;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** A derived flag over several codes: 1 if any is 1, 0 if all are judged 0, null otherwise. */
function anyOf(modes: Record<string, ModeValue> | null, codes: readonly string[]): ModeValue {
  if (!modes) return null;
  let unknown = false;
  for (const c of codes) {
    const v = modes[c];
    if (v === 1) return 1;
    if (v !== 0) unknown = true;
  }
  return unknown ? null : 0;
}

/** A 0/1/null flag read from a label row: one mode, or a roll-up over several. */
export interface Flag {
  code: string;
  name: string;
  value: (row: LabelRow) => ModeValue;
  /** The flag from outcome-independent evidence only (default: `value`): what the failed-vs-successful comparison counts. */
  independent?: (row: LabelRow) => ModeValue;
}

/** The vector the failed-vs-successful comparison reads: `row.independent` when the labels carry it, else `row.modes`. */
export const independentModes = (row: LabelRow): Record<string, ModeValue> | null => (row.independent === undefined ? row.modes : row.independent);

/**
 * The classification rule (docs/statistics.md, "Fatal, benign, undetermined"), on the counts the comparison rests on
 * (groupStats passes the outcome-independent ones, "Circularity"):
 * - fatal: more common in failures by both tests — the Newcombe interval of the delta lies wholly above 0 AND
 *   Fisher's exact p < alpha with a positive delta;
 * - benign: neither test shows an excess in failures, and the mode demonstrably occurs in successful runs (Wilson
 *   lower bound of its prevalence among successes ≥ benignMinSuccessPrevalence);
 * - undetermined: everything else — no successful or failed traces to compare, the two tests disagree, or the mode
 *   is too rare among successes to call survivable.
 */
export function classifyMode(
  m: Pick<ModeStats, "counts" | "judged" | "delta_pp" | "p_value">,
  opts: { alpha?: number; benignMinSuccessPrevalence?: number; confidence?: number } = {},
): { class: ModeClass; reason: string } {
  const alpha = opts.alpha ?? 0.05;
  const minBenign = opts.benignMinSuccessPrevalence ?? 0.1;
  const { judged, counts, delta_pp: d, p_value: p } = m;
  if (judged.successful === 0 || judged.failed === 0 || d.value === null || d.lo === null || p === null)
    return {
      class: "undetermined",
      reason: `no comparison: ${judged.successful} successful and ${judged.failed} failed traces judged`,
    };
  const pp = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(1)}`;
  const ci = `${pp(d.value)} pp [${pp(d.lo)}, ${pp(d.hi ?? NaN)}], p = ${p.toPrecision(2)}`;
  const intervalPositive = d.lo > 0;
  const exactPositive = p < alpha && d.value > 0;
  if (intervalPositive && exactPositive) return { class: "fatal", reason: `more common in failures: ${ci}` };
  if (intervalPositive || exactPositive)
    return { class: "undetermined", reason: `borderline: interval and exact test disagree (${ci})` };
  const successLo = wilsonInterval(counts.successful, judged.successful, opts.confidence).lo;
  if (successLo >= minBenign)
    return {
      class: "benign",
      reason: `in ${counts.successful}/${judged.successful} successful traces (lower bound ${(100 * successLo).toFixed(0)} %) and no excess in failures (${ci})`,
    };
  return {
    class: "undetermined",
    reason: `no excess in failures, but too rare among successes to call benign (${counts.successful}/${judged.successful}; ${ci})`,
  };
}

type Tally = { counts: { all: number; successful: number; failed: number }; judged: { all: number; successful: number; failed: number } };

/** Counts of a 0/1/null flag over rows, per outcome; null (not judged, not measured) is left out of the denominators. */
function tally(rows: readonly LabelRow[], value: (row: LabelRow) => ModeValue): Tally {
  const counts = { all: 0, successful: 0, failed: 0 };
  const judged = { all: 0, successful: 0, failed: 0 };
  for (const row of rows) {
    const v = value(row);
    if (v !== 0 && v !== 1) continue;
    judged.all++;
    counts.all += v;
    if (row.success === true) {
      judged.successful++;
      counts.successful += v;
    } else if (row.success === false) {
      judged.failed++;
      counts.failed += v;
    }
  }
  return { counts, judged };
}

const share = (x: number, n: number) => (n > 0 ? x / n : null);

function deltaOf(t: Tally, conf: number | undefined): { value: number | null; lo: number | null; hi: number | null } {
  const d = newcombeInterval(t.counts.failed, t.judged.failed, t.counts.successful, t.judged.successful, conf);
  return { value: nn(100 * d.estimate), lo: nn(100 * d.lo), hi: nn(100 * d.hi) };
}

function flagStats(rows: readonly LabelRow[], flag: Flag, opts: GroupOptions): Omit<ModeStats, "q_value" | "class" | "reason"> {
  const { counts, judged } = tally(rows, flag.value);
  const ind = flag.independent ? tally(rows, flag.independent) : { counts, judged };
  const conf = opts.confidence;
  const comparable = ind.judged.failed > 0 && ind.judged.successful > 0;
  return {
    code: flag.code,
    name: flag.name,
    counts,
    judged,
    prevalence: {
      all: share(counts.all, judged.all),
      successful: share(counts.successful, judged.successful),
      failed: share(counts.failed, judged.failed),
    },
    prevalence_ci: {
      all: range(wilsonInterval(counts.all, judged.all, conf)),
      successful: range(wilsonInterval(counts.successful, judged.successful, conf)),
      failed: range(wilsonInterval(counts.failed, judged.failed, conf)),
    },
    independent: {
      counts: ind.counts,
      judged: ind.judged,
      prevalence: {
        all: share(ind.counts.all, ind.judged.all),
        successful: share(ind.counts.successful, ind.judged.successful),
        failed: share(ind.counts.failed, ind.judged.failed),
      },
    },
    delta_pp: deltaOf(ind, conf),
    delta_pp_all_findings: deltaOf({ counts, judged }, conf),
    p_value: comparable
      ? fisherExact(ind.counts.failed, ind.judged.failed - ind.counts.failed, ind.counts.successful, ind.judged.successful - ind.counts.successful)
      : null,
  };
}

/** Computes the statistics of a family of flags, then q-values across the family, then the class of each. */
function familyStats(rows: readonly LabelRow[], flags: readonly Flag[], opts: GroupOptions): ModeStats[] {
  const raw = flags.map((f) => flagStats(rows, f, opts));
  const q = benjaminiHochberg(raw.map((m) => m.p_value ?? NaN));
  // the class rests on the comparison's own (outcome-independent) counts, like the delta and the test
  return raw.map((m, i) => {
    const c = classifyMode({ ...m, counts: m.independent.counts, judged: m.independent.judged }, opts);
    const setAside = m.counts.all - m.independent.counts.all;
    const reason = setAside > 0 ? `${c.reason}; ${setAside} trace${setAside === 1 ? "" : "s"} where it was found only through the outcome left out of the comparison (circular)` : c.reason;
    return { ...m, q_value: nn(q[i]!), class: c.class, reason };
  });
}

export function modeFlags(tax: Taxonomy): Flag[] {
  return tax.modes.map((m) => ({
    code: m.code,
    name: m.name,
    value: (r: LabelRow) => (r.modes ? (r.modes[m.code] ?? null) : null),
    independent: (r: LabelRow) => independentModes(r)?.[m.code] ?? null,
  }));
}

/**
 * A roll-up over `members`: any-of, restricted to the members `measured` names (all of them without it). A member that
 * no annotator measured anywhere would make the any-of unknown except where another member is present, so the
 * roll-up would be judged on its positives only; it is left out instead, and the name says so. With no member
 * measured the roll-up is not measured (null) everywhere.
 */
function rollup(code: string, members: readonly string[], measured: ReadonlySet<string> | undefined, title: (list: string) => string, sep = ", "): Flag {
  const codes = measured ? members.filter((c) => measured.has(c)) : [...members];
  const missing = members.filter((c) => !codes.includes(c));
  const name = title(`${codes.length ? codes.join(sep) : "none"}${missing.length ? `; ${missing.join(", ")} not measured` : ""}`);
  if (codes.length === 0) return { code, name, value: () => null, independent: () => null };
  return { code, name, value: (r: LabelRow) => anyOf(r.modes, codes), independent: (r: LabelRow) => anyOf(independentModes(r), codes) };
}

/** FC1…FC3 any-of flags and the merged FC3-verification flag; `measured` limits each to the modes measured at all. */
export function rollupFlags(tax: Taxonomy, measured?: ReadonlySet<string>): Flag[] {
  const flags: Flag[] = tax.categories.map((c) =>
    rollup(
      c.id,
      tax.modes.filter((m) => m.category === c.id).map((m) => m.code),
      measured,
      (list) => `${c.name} (any of ${list})`,
    ),
  );
  // MAST-Data's 3.2 and 3.3 carry mixed semantics (mast-taxonomy.md §4), so the merged flag is reported beside them.
  if (tax.id === "mast" && tax.codes.includes("3.2") && tax.codes.includes("3.3"))
    flags.push(rollup(FC3_VERIFICATION, ["3.2", "3.3"], measured, (list) => `Verification, merged (${list})`, " ∨ "));
  return flags;
}

function predictorRanking(modes: readonly ModeStats[]): Predictor[] {
  return modes
    .filter((m) => m.delta_pp.value !== null && m.delta_pp.value > 0 && m.p_value !== null)
    .map((m) => ({ code: m.code, delta_pp: m.delta_pp.value!, lo: m.delta_pp.lo!, hi: m.delta_pp.hi!, p_value: m.p_value!, class: m.class }))
    .sort((a, b) => b.lo - a.lo || a.p_value - b.p_value || b.delta_pp - a.delta_pp)
    .map((p, i) => ({ rank: i + 1, ...p }));
}

/** Pairwise co-occurrence of present modes, with lift over the traces where both were judged. */
export function coOccurrence(rows: readonly LabelRow[], codes: readonly string[]): CoOccurrence[] {
  const out: CoOccurrence[] = [];
  for (let i = 0; i < codes.length; i++)
    for (let j = i + 1; j < codes.length; j++) {
      const a = codes[i]!;
      const b = codes[j]!;
      let judged = 0;
      let na = 0;
      let nb = 0;
      let both = 0;
      for (const r of rows) {
        const va = r.modes?.[a];
        const vb = r.modes?.[b];
        if ((va !== 0 && va !== 1) || (vb !== 0 && vb !== 1)) continue;
        judged++;
        na += va;
        nb += vb;
        both += va & vb;
      }
      if (both === 0) continue;
      out.push({ a, b, both, judged, lift: na > 0 && nb > 0 ? (judged * both) / (na * nb) : null });
    }
  return out.sort((x, y) => y.both - x.both || (y.lift ?? 0) - (x.lift ?? 0) || x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
}

/**
 * Cascades from first-occurrence steps: for every pair of present modes in a trace, which one first shows earlier;
 * and which modes are the earliest to show (candidate root modes). Traces without step information add nothing.
 */
export function cascades(rows: readonly LabelRow[], codes: readonly string[]): Cascades {
  const order = new Map<string, { ab: number; ba: number; same: number }>();
  const first = new Map<string, number>();
  const present = new Map<string, number>();
  let traces = 0;
  for (const r of rows) {
    if (!r.modes || !r.firstStep) continue;
    const timed = codes.filter((c) => r.modes![c] === 1 && Number.isFinite(r.firstStep![c]));
    if (timed.length === 0) continue;
    traces++;
    const earliest = Math.min(...timed.map((c) => r.firstStep![c]!));
    for (const c of timed) {
      present.set(c, (present.get(c) ?? 0) + 1);
      if (r.firstStep[c] === earliest) first.set(c, (first.get(c) ?? 0) + 1);
    }
    for (let i = 0; i < timed.length; i++)
      for (let j = i + 1; j < timed.length; j++) {
        const a = timed[i]!;
        const b = timed[j]!;
        const key = `${a}\u0000${b}`;
        const o = order.get(key) ?? { ab: 0, ba: 0, same: 0 };
        const sa = r.firstStep[a]!;
        const sb = r.firstStep[b]!;
        if (sa < sb) o.ab++;
        else if (sb < sa) o.ba++;
        else o.same++;
        order.set(key, o);
      }
  }
  const pairs: CascadePair[] = [...order.entries()].map(([key, o]) => {
    const [a, b] = key.split("\u0000") as [string, string];
    return o.ab >= o.ba
      ? { before: a, after: b, count: o.ab, reverse: o.ba, same_step: o.same }
      : { before: b, after: a, count: o.ba, reverse: o.ab, same_step: o.same };
  });
  pairs.sort((x, y) => y.count - y.reverse - (x.count - x.reverse) || y.count - x.count || x.before.localeCompare(y.before));
  const roots: RootCandidate[] = [...present.entries()]
    .map(([code, n]) => ({ code, first: first.get(code) ?? 0, present: n, share: (first.get(code) ?? 0) / n }))
    .filter((r) => r.first > 0)
    .sort((x, y) => y.first - x.first || y.share - x.share || x.code.localeCompare(y.code));
  return { traces, pairs, roots };
}

/** All statistics for one group of rows. */
export function groupStats(rows: readonly LabelRow[], key: string, value: string, opts: GroupOptions = {}): GroupStats {
  const tax = opts.taxonomy ?? mast;
  const codes = tax.codes;
  const successes = rows.filter((r) => r.success === true).length;
  const failures = rows.filter((r) => r.success === false).length;
  const failedCounts = rows
    .filter((r) => r.success === false && r.modes !== null)
    .map((r) => codes.reduce((n, c) => n + (r.modes![c] === 1 ? 1 : 0), 0));
  const perFailed = meanInterval(failedCounts, opts.confidence);
  const modes = familyStats(rows, modeFlags(tax), opts);
  return {
    key,
    value,
    traces: rows.length,
    annotated: rows.filter((r) => r.modes !== null).length,
    successes,
    failures,
    unknown_outcome: rows.length - successes - failures,
    success_rate: range(wilsonInterval(successes, successes + failures, opts.confidence)),
    // The t interval can cross the possible range on small, skewed groups; a count of modes lies in [0, codes].
    modes_per_failed_trace: {
      mean: nn(perFailed.estimate),
      lo: nn(Math.max(0, perFailed.lo)),
      hi: nn(Math.min(codes.length, perFailed.hi)),
      n: perFailed.n,
    },
    modes,
    // roll-ups over the modes measured in this group: an unmeasured member would leave the any-of judged on positives only
    rollups: familyStats(rows, rollupFlags(tax, new Set(modes.filter((m) => m.judged.all > 0).map((m) => m.code))), opts),
    predictors: predictorRanking(modes),
    cooccurrence: coOccurrence(rows, codes),
    cascades: cascades(rows, codes),
  };
}

/** Rows per group value of `by` (every row under "all" without `by`), as groupStatistics splits them. */
export function groupRows(rows: readonly LabelRow[], by?: string): Map<string, LabelRow[]> {
  const buckets = new Map<string, LabelRow[]>();
  for (const r of rows) {
    const v = by ? groupLabel(fieldValue(r.fields, by)) : "all";
    const b = buckets.get(v);
    if (b) b.push(r);
    else buckets.set(v, [r]);
  }
  return buckets;
}

/** Splits rows by `opts.by` (or keeps them as one group "all") and computes every group's statistics. */
export function groupStatistics(rows: readonly LabelRow[], opts: GroupOptions = {}): GroupReport {
  if (!opts.by) return { by: null, groups: [groupStats(rows, "all", "all", opts)] };
  const buckets = new Map<string, LabelRow[]>();
  for (const r of rows) {
    const v = groupLabel(fieldValue(r.fields, opts.by));
    let b = buckets.get(v);
    if (!b) buckets.set(v, (b = []));
    b.push(r);
  }
  const values = [...buckets.keys()].sort((a, b) => (a === NONE ? 1 : b === NONE ? -1 : a.localeCompare(b)));
  return { by: opts.by, groups: values.map((v) => groupStats(buckets.get(v)!, opts.by!, v, opts)) };
}
