import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

const SKIP_DIRS = new Set(["node_modules", ".git", ".faultline"]);

/** Expands files and folders into a sorted list of files (deterministic order, so trace ids are stable). */
export async function walkFiles(paths: string[]): Promise<{ files: string[]; missing: string[] }> {
  const files: string[] = [];
  const missing: string[] = [];
  const visit = async (p: string): Promise<void> => {
    let st;
    try {
      st = await stat(p);
    } catch {
      missing.push(p);
      return;
    }
    if (st.isDirectory()) {
      const entries = (await readdir(p, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        if (e.isDirectory() && (SKIP_DIRS.has(e.name) || e.name.startsWith("."))) continue;
        if (e.isFile() && e.name.startsWith(".")) continue;
        await visit(join(p, e.name));
      }
    } else if (st.isFile()) files.push(p);
  };
  for (const p of paths) await visit(p);
  return { files, missing };
}
