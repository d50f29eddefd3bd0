import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/*
 * Files that are not traces but travel with them (label files): the formats stage does the reading, so the stages that
 * interpret such files (analysis/labels.ts) stay pure functions of text.
 */

/** A path given for text input: one file, or the matching files under a folder (sorted), or why it cannot be read. */
export type TextInput = { error: string } | { folder: boolean; files: string[] };

export async function textInput(path: string, include: RegExp): Promise<TextInput> {
  let folder: boolean;
  try {
    folder = (await stat(path)).isDirectory();
  } catch (e) {
    return { error: (e as Error).message };
  }
  if (!folder) return { folder, files: [path] };
  const files = (await readdir(path, { recursive: true }))
    .filter((f) => include.test(f))
    .sort()
    .map((f) => join(path, f));
  return { folder, files };
}

/** A file's text (UTF-8). */
export function readText(file: string): Promise<string> {
  return readFile(file, "utf8");
}
