import { mast, type Taxonomy } from "../taxonomy/index.js";
import { FC3_VERIFICATION } from "./groups.js";
import type { LabelRow, ModeValue } from "./types.js";

/*
 * Agreement between reference labels and predicted labels, matched by trace id: per-mode precision, recall, F1,
 * Cohen's κ and accuracy with macro and micro summaries, and — for references that blame an agent and a step
 * (Who&When, AgentRx) — attribution accuracy, exact and within ±k steps. Nothing is matched silently: unmatched,
 * duplicate and ambiguous ids are all listed.
 */

export interface AgreementOptions {
  taxonomy?: Taxonomy;
  /** Step tolerances for "within ±k" (default 1, 3, 5). */
  tolerances?: number[];
}

export interface Confusion {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export interface Scores {
  precision: number | null;
  recall: number | null;
  f1: number | null;
  kappa: number | null;
  accuracy: number | null;
}

export interface ModeAgreement extends Confusion, Scores {
  code: string;
  name: string;
  /** Matched traces where both sides judged the mode. */
  n: number;
  /**
   * Matched traces whose reference labels the mode but whose prediction did not measure it (null: no detector or
   * judge examined it). Left out of the confusion table — never counted as negatives — and reported here.
   */
  not_measured: number;
}

export interface Summary {
  precision: number | null;
  recall: number | null;
  f1: number | null;
  kappa: number | null;
  accuracy: number | null;
}

export interface Matching {
  /** Pairs formed, by id and (for the rest) by a unique alias. */
  matched: number;
  matched_by_alias: number;
  reference_only: string[];
  predicted_only: string[];
  /** Reference rows whose aliases point at several unmatched predictions: left unmatched, listed here. */
  ambiguous: { reference: string; candidates: string[] }[];
  /** Ids seen more than once on one side; only the first copy takes part. */
  duplicate_reference: string[];
  duplicate_predicted: string[];
}

export interface AttributionAgreement {
  /** Matched traces whose reference blames an agent or a step. */
  traces: number;
  agent: { total: number; correct: number; accuracy: number | null; missing_prediction: number };
  step: {
    total: number;
    exact: { correct: number; accuracy: number | null };
    within: { k: number; correct: number; accuracy: number | null }[];
    missing_prediction: number;
  };
}

export interface AgreementReport {
  matching: Matching;
  /** Matched pairs with a failure vector on both sides, and those missing one. */
  vectors: { compared: number; reference_without: number; predicted_without: number };
  modes: ModeAgreement[];
  /** FC1…FC3 any-of flags and the merged FC3-verification flag (3.2 ∨ 3.3). */
  rollups: ModeAgreement[];
  /** Modes the prediction measured on none of the compared traces where the reference labels them: no scores, listed here. */
  not_measured: string[];
  /** Unweighted mean over the taxonomy's modes of each score (modes where it is undefined are left out). */
  macro: Summary & { modes: number };
  /** Scores of the confusion table pooled over all modes. */
  micro: Summary & Confusion;
  attribution: AttributionAgreement | null;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/** Precision, recall, F1, Cohen's κ and accuracy of one 2×2 confusion table; null where a score is undefined. */
export function scores(c: Confusion): Scores {
  const n = c.tp + c.fp + c.fn + c.tn;
  const accuracy = ratio(c.tp + c.tn, n);
  let kappa: number | null = null;
  if (n > 0) {
    // Chance agreement from the two raters' marginals (Cohen 1960).
    const pe = ((c.tp + c.fp) * (c.tp + c.fn) + (c.fn + c.tn) * (c.fp + c.tn)) / (n * n);
    kappa = pe < 1 ? (accuracy! - pe) / (1 - pe) : null;
  }
  return {
    precision: ratio(c.tp, c.tp + c.fp),
    recall: ratio(c.tp, c.tp + c.fn),
    f1: ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn),
    kappa,
    accuracy,
  };
}

/** Pairs reference rows with predicted rows: by trace id first, then by an alias that names exactly one row. */
export function matchRows(
  reference: readonly LabelRow[],
  predicted: readonly LabelRow[],
): { pairs: [LabelRow, LabelRow][]; matching: Matching } {
  const firstById = (rows: readonly LabelRow[], dups: Set<string>) => {
    const m = new Map<string, LabelRow>();
    for (const r of rows) {
      if (m.has(r.trace_id)) dups.add(r.trace_id);
      else m.set(r.trace_id, r);
    }
    return m;
  };
  const dupRef = new Set<string>();
  const dupPred = new Set<string>();
  const refs = firstById(reference, dupRef);
  const preds = firstById(predicted, dupPred);
  const pairs: [LabelRow, LabelRow][] = [];
  const used = new Set<string>();
  const pending: LabelRow[] = [];
  for (const [id, r] of refs) {
    const p = preds.get(id);
    if (p) {
      pairs.push([r, p]);
      used.add(id);
    } else pending.push(r);
  }
  // Alias pass over what is left on both sides.
  const byName = new Map<string, Set<string>>();
  for (const [id, p] of preds) {
    if (used.has(id)) continue;
    for (const name of [id, ...(p.aliases ?? [])]) {
      let s = byName.get(name);
      if (!s) byName.set(name, (s = new Set()));
      s.add(id);
    }
  }
  const ambiguous: Matching["ambiguous"] = [];
  const unmatchedRefs: string[] = [];
  let byAlias = 0;
  for (const r of pending) {
    const candidates = new Set<string>();
    for (const name of [r.trace_id, ...(r.aliases ?? [])]) for (const id of byName.get(name) ?? []) if (!used.has(id)) candidates.add(id);
    if (candidates.size === 1) {
      const id = [...candidates][0]!;
      pairs.push([r, preds.get(id)!]);
      used.add(id);
      byAlias++;
    } else {
      if (candidates.size > 1) ambiguous.push({ reference: r.trace_id, candidates: [...candidates].sort() });
      unmatchedRefs.push(r.trace_id);
    }
  }
  return {
    pairs,
    matching: {
      matched: pairs.length,
      matched_by_alias: byAlias,
      reference_only: unmatchedRefs,
      predicted_only: [...preds.keys()].filter((id) => !used.has(id)),
      ambiguous,
      duplicate_reference: [...dupRef],
      duplicate_predicted: [...dupPred],
    },
  };
}

type Getter = (modes: Record<string, ModeValue>) => ModeValue;

function modeAgreement(pairs: readonly [LabelRow, LabelRow][], code: string, name: string, get: Getter): ModeAgreement {
  const c: Confusion = { tp: 0, fp: 0, fn: 0, tn: 0 };
  let notMeasured = 0;
  for (const [r, p] of pairs) {
    if (!r.modes || !p.modes) continue;
    const truth = get(r.modes);
    const guess = get(p.modes);
    if (truth === null) continue;
    // an unmeasured prediction is not a "no": it leaves the table and is counted apart
    if (guess === null) {
      notMeasured++;
      continue;
    }
    if (truth === 1) guess === 1 ? c.tp++ : c.fn++;
    else guess === 1 ? c.fp++ : c.tn++;
  }
  return { code, name, n: c.tp + c.fp + c.fn + c.tn, not_measured: notMeasured, ...c, ...scores(c) };
}

const anyOf =
  (codes: readonly string[]): Getter =>
  (m) => {
    let unknown = false;
    for (const c of codes) {
      if (m[c] === 1) return 1;
      if (m[c] !== 0) unknown = true;
    }
    return unknown ? null : 0;
  };

function attributionAgreement(pairs: readonly [LabelRow, LabelRow][], tolerances: readonly number[]): AttributionAgreement | null {
  const withRef = pairs.filter(([r]) => r.attribution && (r.attribution.agent !== null || r.attribution.step !== null));
  if (withRef.length === 0) return null;
  const agent = { total: 0, correct: 0, missing_prediction: 0 };
  const step = { total: 0, exact: 0, within: tolerances.map(() => 0), missing_prediction: 0 };
  const fold = (s: string) => s.trim().toLowerCase();
  for (const [r, p] of withRef) {
    const ref = r.attribution!;
    if (ref.agent !== null) {
      agent.total++;
      const guess = p.attribution?.agent ?? null;
      if (guess === null) agent.missing_prediction++;
      else if (fold(guess) === fold(ref.agent)) agent.correct++;
    }
    if (ref.step !== null) {
      step.total++;
      const guess = p.attribution?.step ?? null;
      if (guess === null) {
        step.missing_prediction++;
        continue;
      }
      const off = Math.abs(guess - ref.step);
      if (off === 0) step.exact++;
      tolerances.forEach((k, i) => {
        if (off <= k) step.within[i]!++;
      });
    }
  }
  return {
    traces: withRef.length,
    agent: { ...agent, accuracy: ratio(agent.correct, agent.total) },
    step: {
      total: step.total,
      exact: { correct: step.exact, accuracy: ratio(step.exact, step.total) },
      within: tolerances.map((k, i) => ({ k, correct: step.within[i]!, accuracy: ratio(step.within[i]!, step.total) })),
      missing_prediction: step.missing_prediction,
    },
  };
}

/** Agreement of predicted labels with reference labels. */
export function evaluateAgreement(
  reference: readonly LabelRow[],
  predicted: readonly LabelRow[],
  opts: AgreementOptions = {},
): AgreementReport {
  const tax = opts.taxonomy ?? mast;
  const { pairs, matching } = matchRows(reference, predicted);
  const modes = tax.modes.map((m) => modeAgreement(pairs, m.code, m.name, (v) => v[m.code] ?? null));
  // Roll-ups over the modes both sides measured somewhere: a member the prediction never measures would leave the
  // any-of unknown except where another member is present, and the roll-up would be scored on its positives only.
  const measured = new Set(modes.filter((m) => m.n > 0).map((m) => m.code));
  const rollup = (code: string, members: string[], title: (list: string) => string, sep = ", ") => {
    const codes = members.filter((c) => measured.has(c));
    const missing = members.filter((c) => !measured.has(c));
    const name = title(`${codes.length ? codes.join(sep) : "none"}${missing.length ? `; ${missing.join(", ")} not measured` : ""}`);
    return modeAgreement(pairs, code, name, codes.length ? anyOf(codes) : () => null);
  };
  const rollups = tax.categories.map((cat) =>
    rollup(
      cat.id,
      tax.modes.filter((m) => m.category === cat.id).map((m) => m.code),
      (list) => `${cat.name} (any of ${list})`,
    ),
  );
  if (tax.id === "mast" && tax.codes.includes("3.2") && tax.codes.includes("3.3"))
    rollups.push(rollup(FC3_VERIFICATION, ["3.2", "3.3"], (list) => `Verification, merged (${list})`, " ∨ "));

  const mean = (key: keyof Scores) => {
    const xs = modes.map((m) => m[key]).filter((x): x is number => x !== null);
    return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
  };
  const pooled: Confusion = modes.reduce((s, m) => ({ tp: s.tp + m.tp, fp: s.fp + m.fp, fn: s.fn + m.fn, tn: s.tn + m.tn }), {
    tp: 0,
    fp: 0,
    fn: 0,
    tn: 0,
  });
  return {
    matching,
    vectors: {
      compared: pairs.filter(([r, p]) => r.modes && p.modes).length,
      reference_without: pairs.filter(([r]) => !r.modes).length,
      predicted_without: pairs.filter(([r, p]) => r.modes && !p.modes).length,
    },
    modes,
    rollups,
    not_measured: modes.filter((m) => m.n === 0 && m.not_measured > 0).map((m) => m.code),
    macro: {
      precision: mean("precision"),
      recall: mean("recall"),
      f1: mean("f1"),
      kappa: mean("kappa"),
      accuracy: mean("accuracy"),
      modes: modes.filter((m) => m.n > 0).length,
    },
    micro: { ...pooled, ...scores(pooled) },
    attribution: attributionAgreement(pairs, opts.tolerances ?? [1, 3, 5]),
  };
}
