import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/** Looks for `name` in the file's folder and up to `levels` folders above it; returns the first path found. */
export function findUp(fromFile: string, names: string | string[], levels = 4): string | undefined {
  const list = Array.isArray(names) ? names : [names];
  let dir = dirname(fromFile);
  for (let i = 0; i <= levels; i++) {
    for (const n of list) {
      const p = join(dir, n);
      if (existsSync(p)) return p;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}
