import { existsSync, readFileSync } from "node:fs";
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

/** The nth section of MAST's few-shot examples (corpus mast/examples.txt) with this title, without its heading. */
export function mastExample(title: string, nth = 0): string {
  const lines = readFileSync(corpus("mast", "examples.txt"), "utf8").split("\n");
  const starts = lines.flatMap((l, i) => (l === `### ${title} ###` ? [i] : []));
  const start = starts[nth];
  if (start === undefined) throw new Error(`no example "${title}" #${nth} in mast/examples.txt`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("#####"));
  return lines.slice(start + 1, end).join("\n");
}
