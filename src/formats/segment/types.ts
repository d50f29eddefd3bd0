import type { OutcomeInput, StepDraft } from "../../trace/index.js";

/**
 * What a splitter makes of one raw multi-agent trajectory text. Step refs carry `line` = 1-based line *within the
 * text*; an adapter that embeds the text in a bigger file (MAD) rewrites them to point into its own file.
 */
export interface Segmented {
  steps: StepDraft[];
  /** `framework` when a dedicated splitter recognised the text; `heuristic` for the plain-text fallback. */
  segmentation: "framework" | "heuristic";
  /** Which splitter produced the steps: `chatdev`, `metagpt`, `ag2`, `hyperagent`, `appworld`, or `plain:<mode>`. */
  splitter: string;
  task?: { id?: string; text?: string };
  model?: string;
  outcome?: OutcomeInput;
  /** Facts of the run the text states (software info, config, notes); merged into `trace.metadata`. */
  metadata: Record<string, unknown>;
}

/** A splitter returns undefined when the text does not look like its framework, so the caller can try the next. */
export type Splitter = (text: string) => Segmented | undefined;

/** Splits text into lines, tolerating CRLF. */
export const splitLines = (text: string): string[] => text.split(/\r?\n/);

/** Removes ANSI colour codes (ChatDev writes `\x1b[32m` before speaker tags). */
export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");

/** Joins lines and drops leading/trailing blank lines, keeping inner layout. */
export function joinBody(lines: string[]): string {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === "") a++;
  while (b > a && lines[b - 1]!.trim() === "") b--;
  return lines.slice(a, b).join("\n");
}

/** Removes the common leading indentation of non-blank lines (AppWorld and YAML bodies are indented). */
export function dedent(lines: string[]): string[] {
  let min = Infinity;
  for (const l of lines) if (l.trim() !== "") min = Math.min(min, /^[ \t]*/.exec(l)![0].length);
  if (!Number.isFinite(min) || min === 0) return lines;
  return lines.map((l) => l.slice(Math.min(min, /^[ \t]*/.exec(l)![0].length)));
}

/** A trajectory wrapped in a JSON object (MAD stores some as `{"trajectory": …}` / `{"content": …}`), or undefined. */
export function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
