export { Taxonomy, mast, MAST_CODES, loadTaxonomy, foldName, type MastCode } from "./taxonomy.js";
export { MAST_V3 } from "./mast-v3.js";
export { crosswalk, roundOf, type LegacyRound } from "./legacy.js";
export { TaxonomyDataSchema, type TaxonomyData, type Mode, type Category, type Stage } from "./types.js";
