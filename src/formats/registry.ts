import type { FormatAdapter } from "./types.js";
// adapter imports (one line per format, keep alphabetical)
import { canonical } from "./adapters/canonical.js";
import { openaiChat } from "./adapters/openai-chat.js";

/**
 * Adapters in detection order: the most specific signatures first (see trace-formats.md §1). A file goes to the
 * first adapter whose `detect` says yes.
 */
export const ADAPTERS: FormatAdapter[] = [
  // adapters in detection order
  canonical,
  openaiChat, // generic chat lists: keep near the end, after every dataset format built on chat messages
];

export function findAdapter(id: string): FormatAdapter | undefined {
  return ADAPTERS.find((a) => a.id === id);
}
