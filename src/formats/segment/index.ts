import { segmentAG2 } from "./ag2.js";
import { segmentAppWorld } from "./appworld.js";
import { segmentChatDev } from "./chatdev.js";
import { segmentHyperAgent } from "./hyperagent.js";
import { segmentMetaGPT } from "./metagpt.js";
import { segmentPlain } from "./plain.js";
import type { Segmented, Splitter } from "./types.js";

export type { Segmented, Splitter } from "./types.js";
export { segmentAG2 } from "./ag2.js";
export { segmentAppWorld } from "./appworld.js";
export { segmentChatDev, looksLikeChatDev, chatdevModelName, CHATDEV_HEADER } from "./chatdev.js";
export { segmentHyperAgent } from "./hyperagent.js";
export { segmentMetaGPT } from "./metagpt.js";
export { segmentPlain } from "./plain.js";

/** Dedicated splitters by framework name (lower-case, as MAST-Data's `mas_name` folds). */
export const SPLITTERS: Record<string, Splitter> = {
  chatdev: segmentChatDev,
  metagpt: segmentMetaGPT,
  ag2: segmentAG2,
  hyperagent: segmentHyperAgent,
  appworld: segmentAppWorld,
};

const ORDER: Splitter[] = [segmentChatDev, segmentMetaGPT, segmentHyperAgent, segmentAG2, segmentAppWorld];

/**
 * Splits a raw multi-agent trajectory into steps. The framework named by `hint` (e.g. MAST-Data's `mas_name`) is
 * tried first; then every dedicated splitter by its signature; then the plain-text fallback, whose result carries
 * `metadata.segmentation = "heuristic"` (and a note when the hint named a framework whose pattern did not match).
 */
export function segmentTrajectory(text: string, hint?: string): Segmented {
  const key = hint?.toLowerCase().replace(/[^a-z0-9]/g, "");
  const preferred = key ? SPLITTERS[key] : undefined;
  for (const split of preferred ? [preferred, ...ORDER.filter((s) => s !== preferred)] : ORDER) {
    const r = split(text);
    if (r && r.steps.length > 0) {
      if (preferred && split !== preferred) r.metadata.segmentationNote = `named ${hint}, but the text matched the ${r.splitter} pattern`;
      return { ...r, metadata: { ...r.metadata, segmentation: r.segmentation } };
    }
  }
  const plain = segmentPlain(text);
  const note = preferred ? `the text did not match the ${hint} pattern; split heuristically` : undefined;
  return { ...plain, metadata: { ...plain.metadata, segmentation: "heuristic", ...(note ? { segmentationNote: note } : {}) } };
}
