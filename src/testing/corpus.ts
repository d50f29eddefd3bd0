import { existsSync } from "node:fs";
import { resolve, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The shared corpus of real traces, beside the repository (CI lays it out the same way). */
export const CORPUS = process.env.FAULTLINE_CORPUS ?? resolve(fileURLToPath(new URL("../../", import.meta.url)), "../shared/corpus");

/** Path of a corpus file or folder; fails loudly instead of letting corpus tests skip. */
export function corpus(...parts: string[]): string {
  const p = join(CORPUS, ...parts);
  if (!existsSync(p)) throw new Error(`corpus path missing: ${p} — tests read real traces from ../shared/corpus`);
  return p;
}
