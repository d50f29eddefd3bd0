import { z } from "zod";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import catalogueV1 from "./interventions.v1.json" with { type: "json" };
import type { GroupStats, ModeClass, ModeStats } from "./groups.js";
import type { LabelRow } from "./types.js";

/*
 * The intervention catalogue (versioned data in interventions.v<N>.json, checked by the zod schema below) and its
 * ranking per group. Leverage = Σ over an intervention's targeted modes of
 *     coverage weight × fatality weight(class of the mode in this group) × prevalence among failed traces,
 * i.e. the share of the group's failure mass the intervention addresses, discounted where the group's own data says
 * a mode is survivable (benign) or cannot tell (undetermined). docs/statistics.md, "Interventions".
 */

export const INTERVENTIONS_SCHEMA = "faultline.interventions/1";

const EvidenceSchema = z.object({
  /** A key of `sources`. */
  source: z.string().min(1),
  claim: z.string().min(1),
  /** Where in the reference material the claim is written down. */
  ref: z.string().min(1),
});

const TargetSchema = z.object({
  mode: z.string().regex(/^\d+\.\d+$/),
  coverage: z.enum(["primary", "partial"]),
  /** For a partial target: which part of the mode the guard catches. */
  note: z.string().optional(),
});

export const InterventionSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  name: z.string().min(1),
  guard: z.object({ id: z.string().min(1), kind: z.string().min(1), module: z.string().min(1) }),
  targets: z.array(TargetSchema).min(1),
  /** What to build. */
  action: z.string().min(1),
  /** Why it works: the mechanism. */
  why: z.string().min(1),
  evidence: z.array(EvidenceSchema).min(1),
});

export const InterventionCatalogueSchema = z
  .object({
    schema: z.literal(INTERVENTIONS_SCHEMA),
    version: z.string().regex(/^\d+\.\d+\.\d+$/),
    taxonomy: z.string().min(1),
    description: z.string(),
    weights: z.object({
      fatality: z.object({ fatal: z.number().min(0).max(1), undetermined: z.number().min(0).max(1), benign: z.number().min(0).max(1) }),
      coverage: z.object({ primary: z.number().min(0).max(1), partial: z.number().min(0).max(1) }),
      notes: z.string().optional(),
    }),
    sources: z.record(z.string(), z.string()),
    interventions: z.array(InterventionSchema).min(1),
  })
  .superRefine((c, ctx) => {
    const ids = new Set<string>();
    c.interventions.forEach((iv, i) => {
      if (ids.has(iv.id)) ctx.addIssue({ code: "custom", path: ["interventions", i, "id"], message: `duplicate id ${iv.id}` });
      ids.add(iv.id);
      const modes = new Set<string>();
      iv.targets.forEach((t, j) => {
        if (modes.has(t.mode)) ctx.addIssue({ code: "custom", path: ["interventions", i, "targets", j], message: `mode ${t.mode} targeted twice` });
        modes.add(t.mode);
      });
      iv.evidence.forEach((e, j) => {
        if (!(e.source in c.sources))
          ctx.addIssue({ code: "custom", path: ["interventions", i, "evidence", j, "source"], message: `unknown source ${e.source}` });
      });
    });
  });

export type Intervention = z.infer<typeof InterventionSchema>;
export type InterventionCatalogue = z.infer<typeof InterventionCatalogueSchema>;

/** Parses a catalogue, checking its mode codes against the taxonomy; throws with every problem listed. */
export function parseCatalogue(raw: unknown, tax: Taxonomy = mast, origin = "intervention catalogue"): InterventionCatalogue {
  const r = InterventionCatalogueSchema.safeParse(raw);
  if (!r.success)
    throw new Error(`${origin}: ${r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
  const unknown = r.data.interventions.flatMap((iv) => iv.targets.filter((t) => !tax.codes.includes(t.mode)).map((t) => `${iv.id} → ${t.mode}`));
  if (unknown.length) throw new Error(`${origin}: modes not in taxonomy ${tax.id}: ${unknown.join(", ")}`);
  return r.data;
}

/** The built-in catalogue (interventions.v1.json). */
export const INTERVENTIONS: InterventionCatalogue = parseCatalogue(catalogueV1);

export interface ModeContribution {
  mode: string;
  name: string;
  coverage: "primary" | "partial";
  coverage_weight: number;
  class: ModeClass;
  fatality_weight: number;
  /** Traces with the mode among the group's judged failed / successful traces. */
  failed: { count: number; judged: number };
  successful: { count: number; judged: number };
  prevalence_failed: number | null;
  /** The failed traces with the mode on outcome-independent evidence: what the delta and the class count ("Circularity"). */
  failed_independent: { count: number; judged: number };
  /** No trace of the group had the mode measured (no detector or judge examined it): leverage 0, unknown rather than absent. */
  not_measured: boolean;
  delta_pp: number | null;
  p_value: number | null;
  /** coverage_weight × fatality_weight × prevalence_failed (0 when the prevalence is undefined). */
  leverage: number;
}

export interface RankedIntervention {
  rank: number;
  id: string;
  name: string;
  guard: Intervention["guard"];
  /** Sum of the contributions: the fatality-weighted failure mass addressed, in failed-trace units (0…). */
  leverage: number;
  contributions: ModeContribution[];
  /** Annotated failed traces with at least one targeted mode (only when rows were given). */
  reach: { failed_traces: number; annotated_failed: number } | null;
  /** The recommendation in words, with the group's own numbers. What to build, why and the evidence: catalogue entry `id`. */
  explanation: string;
}

export interface GroupInterventions {
  key: string;
  value: string;
  catalogue: string;
  ranking: RankedIntervention[];
}

const pct = (x: number) => `${Math.round(100 * x)} %`;
const signed = (x: number) => `${x >= 0 ? "+" : ""}${Math.round(x)} pp`;

function contribution(target: Intervention["targets"][number], m: ModeStats | undefined, cat: InterventionCatalogue, tax: Taxonomy): ModeContribution {
  const cls: ModeClass = m?.class ?? "undetermined";
  const coverage_weight = cat.weights.coverage[target.coverage];
  const fatality_weight = cat.weights.fatality[cls];
  const prevalence_failed = m?.prevalence.failed ?? null;
  return {
    mode: target.mode,
    name: m?.name ?? tax.modes.find((x) => x.code === target.mode)?.name ?? target.mode,
    coverage: target.coverage,
    coverage_weight,
    class: cls,
    fatality_weight,
    failed: { count: m?.counts.failed ?? 0, judged: m?.judged.failed ?? 0 },
    successful: { count: m?.counts.successful ?? 0, judged: m?.judged.successful ?? 0 },
    prevalence_failed,
    failed_independent: { count: m?.independent.counts.failed ?? 0, judged: m?.independent.judged.failed ?? 0 },
    not_measured: (m?.judged.all ?? 0) === 0,
    delta_pp: m?.delta_pp.value ?? null,
    p_value: m?.p_value ?? null,
    leverage: prevalence_failed === null ? 0 : coverage_weight * fatality_weight * prevalence_failed,
  };
}

function describe(c: ModeContribution): string {
  const where =
    c.failed.judged === 0
      ? "no judged failed traces"
      : `${c.failed.count} of ${c.failed.judged} failed traces (${pct(c.prevalence_failed!)})` +
        (c.successful.judged > 0 ? ` vs ${c.successful.count} of ${c.successful.judged} successful (${pct(c.successful.count / c.successful.judged)})` : "");
  const circular = c.failed_independent.count !== c.failed.count ? ` on outcome-independent evidence (${c.failed_independent.count} of ${c.failed_independent.judged} failed)` : "";
  const delta = c.delta_pp !== null ? `, ${signed(c.delta_pp)}${circular}` : "";
  const cover = c.coverage === "partial" ? `, partly covered ×${c.coverage_weight}` : "";
  return `FM-${c.mode} ${c.name} in ${where}${delta}; ${c.class} ×${c.fatality_weight}${cover} → ${c.leverage.toFixed(2)}`;
}

function explain(iv: Intervention, contributions: ModeContribution[], leverage: number, reach: RankedIntervention["reach"], group: GroupStats): string {
  const failedAnnotated = Math.max(0, ...contributions.map((c) => c.failed.judged));
  const unmeasured = contributions.filter((c) => c.not_measured).map((c) => `FM-${c.mode}`);
  const notMeasured = unmeasured.length ? ` (${unmeasured.join(", ")} not measured: no detector or judge examined ${unmeasured.length === 1 ? "it" : "them"}.)` : "";
  if (unmeasured.length === contributions.length)
    return `${iv.name}: its modes (${unmeasured.join(", ")}) were not measured in ${group.value} — no detector or judge examined them — so its leverage is unknown (0 here, not evidence of absence).`;
  if (failedAnnotated === 0)
    return `${iv.name}: no annotated failed traces in ${group.value}, so there is no failure mass to address (leverage 0).`;
  const active = contributions.filter((c) => c.failed.count > 0);
  if (active.length === 0)
    return `${iv.name}: none of its ${unmeasured.length ? "measured " : ""}modes (${contributions.filter((c) => !c.not_measured).map((c) => `FM-${c.mode}`).join(", ")}) appears in the ${failedAnnotated} failed traces of ${group.value} (leverage 0).${notMeasured}`;
  const fatal = active.filter((c) => c.class === "fatal").map((c) => `FM-${c.mode}`);
  const parts = active.map(describe).join("; ");
  const unseen = contributions.filter((c) => c.failed.count === 0 && !c.not_measured).map((c) => `FM-${c.mode}`);
  const absent = (unseen.length ? ` (${unseen.join(", ")} not seen in its failures.)` : "") + notMeasured;
  const reached = reach ? ` It would act on ${reach.failed_traces} of ${reach.annotated_failed} failed traces (${pct(reach.failed_traces / Math.max(1, reach.annotated_failed))}).` : "";
  const lead = fatal.length
    ? `${iv.name} targets ${fatal.join(", ")}, fatal in ${group.value}.`
    : `${iv.name}: its modes occur in ${group.value}'s failures, but none is shown fatal here.`;
  return `${lead} Leverage ${leverage.toFixed(2)} = ${parts}.${absent}${reached}`;
}

/**
 * Ranks the catalogue's interventions for one group by leverage (ties: wider reach, then catalogue order). `rows`
 * (the group's label rows) add the reach: failed traces with at least one targeted mode.
 */
export function rankInterventions(
  group: GroupStats,
  opts: { catalogue?: InterventionCatalogue; taxonomy?: Taxonomy; rows?: readonly LabelRow[] } = {},
): RankedIntervention[] {
  const cat = opts.catalogue ?? INTERVENTIONS;
  const tax = opts.taxonomy ?? mast;
  const byCode = new Map(group.modes.map((m) => [m.code, m]));
  const failedRows = opts.rows?.filter((r) => r.success === false && r.modes !== null);
  const scored = cat.interventions.map((iv, order) => {
    const contributions = iv.targets.map((t) => contribution(t, byCode.get(t.mode), cat, tax));
    const leverage = contributions.reduce((s, c) => s + c.leverage, 0);
    const reach = failedRows
      ? { failed_traces: failedRows.filter((r) => iv.targets.some((t) => r.modes![t.mode] === 1)).length, annotated_failed: failedRows.length }
      : null;
    return { iv, order, contributions, leverage, reach };
  });
  scored.sort((a, b) => b.leverage - a.leverage || (b.reach?.failed_traces ?? 0) - (a.reach?.failed_traces ?? 0) || a.order - b.order);
  return scored.map((s, i) => ({
    rank: i + 1,
    id: s.iv.id,
    name: s.iv.name,
    guard: s.iv.guard,
    leverage: s.leverage,
    contributions: s.contributions,
    reach: s.reach,
    explanation: explain(s.iv, s.contributions, s.leverage, s.reach, group),
  }));
}

/** Rankings for every group of a report; `rowsOf(value)` supplies each group's rows for the reach. */
export function rankAllGroups(
  groups: readonly GroupStats[],
  opts: { catalogue?: InterventionCatalogue; taxonomy?: Taxonomy; rowsOf?: (value: string) => readonly LabelRow[] | undefined } = {},
): GroupInterventions[] {
  const cat = opts.catalogue ?? INTERVENTIONS;
  return groups.map((g) => ({
    key: g.key,
    value: g.value,
    catalogue: cat.version,
    ranking: rankInterventions(g, { catalogue: cat, taxonomy: opts.taxonomy, rows: opts.rowsOf?.(g.value) }),
  }));
}
