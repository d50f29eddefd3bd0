import { readFileSync } from "node:fs";
import { corpus } from "./corpus.js";

/**
 * The trace count a corpus folder's MANIFEST.md states in its `## Trace count` section ("6 trajectories",
 * "… = 20 trajectories"), so tests compare against the manifest rather than a number copied from it.
 */
export function manifestTraceCount(folder: string): number {
  const text = readFileSync(corpus(folder, "MANIFEST.md"), "utf8");
  const section = text.split(/^## Trace count\s*$/m)[1]?.split(/^## /m)[0];
  const counts = [...(section ?? "").matchAll(/(\d+)\s+trajectories/g)].map((m) => Number(m[1]));
  if (counts.length === 0) throw new Error(`${folder}/MANIFEST.md states no trace count ("N trajectories" under "## Trace count")`);
  return counts.at(-1)!;
}
