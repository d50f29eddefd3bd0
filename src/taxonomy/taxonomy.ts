import { readFileSync } from "node:fs";
import { MAST_V3 } from "./mast-v3.js";
import { TaxonomyDataSchema, type Category, type Mode, type TaxonomyData } from "./types.js";

/** Folds case, punctuation and spacing so that "Action-Reasoning Mismatch" and "action reasoning mismatch" meet. */
export function foldName(s: string): string {
  return s
    .toLowerCase()
    .replace(/[’']/g, "")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

const CODE_RE = /^\s*(?:fm[-_ ]?)?(\d+\.\d+)\s*$/i;

export class Taxonomy {
  readonly id: string;
  readonly version: string;
  readonly title: string;
  readonly source?: string;
  readonly categories: readonly Category[];
  readonly modes: readonly Mode[];
  readonly notes: readonly string[];
  /** Mode codes in taxonomy order: the columns of a failure vector. */
  readonly codes: readonly string[];
  private readonly byName = new Map<string, string>();
  private readonly byCode = new Map<string, Mode>();

  constructor(data: TaxonomyData) {
    const parsed = TaxonomyDataSchema.parse(data);
    this.id = parsed.id;
    this.version = parsed.version;
    this.title = parsed.title;
    this.source = parsed.source;
    this.categories = parsed.categories;
    this.modes = parsed.modes;
    this.notes = parsed.notes;
    this.codes = parsed.modes.map((m) => m.code);
    for (const m of parsed.modes) {
      this.byCode.set(m.code, m);
      for (const name of [m.name, ...m.aliases]) this.byName.set(foldName(name), m.code);
    }
  }

  /**
   * Normalises a code (`1.3`, `FM-1.3`), a name or a known alias to the canonical code.
   * Also accepts "<code> <name>" as written in annotation files. Returns undefined when nothing matches:
   * callers decide whether that is an error — it is never silently a "no".
   */
  normalize(input: string): string | undefined {
    const code = CODE_RE.exec(input)?.[1];
    if (code) return this.byCode.has(code) ? code : undefined;
    const lead = /^\s*(?:fm[-_ ]?)?(\d+\.\d+)\b/i.exec(input)?.[1];
    if (lead && this.byCode.has(lead)) return lead;
    return this.byName.get(foldName(input));
  }

  mode(code: string): Mode | undefined {
    const c = this.normalize(code);
    return c ? this.byCode.get(c) : undefined;
  }

  category(id: string): Category | undefined {
    return this.categories.find((c) => c.id === id);
  }

  toJSON(): TaxonomyData {
    return {
      id: this.id,
      version: this.version,
      title: this.title,
      source: this.source,
      categories: [...this.categories],
      modes: [...this.modes],
      notes: [...this.notes],
    };
  }
}

export const mast = new Taxonomy(MAST_V3);

/** The 14 MAST v3 codes in order, the columns of every failure vector faultline writes. */
export const MAST_CODES = mast.codes;
export type MastCode = (typeof MAST_CODES)[number];

/** Loads a custom taxonomy from a JSON file; errors name the file and the offending field. */
export function loadTaxonomy(path: string): Taxonomy {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${path}: not a readable JSON taxonomy (${(e as Error).message})`);
  }
  const r = TaxonomyDataSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`${path}: invalid taxonomy — ${issues}`);
  }
  return new Taxonomy(r.data);
}
