// Which CLI module bin/faultline.js runs: the build in dist/ when it is present and current, else the TypeScript
// sources through tsx (a development fallback). Plain JavaScript: it runs before anything is compiled.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Written by `npm run build` (scripts/build-stamp.js) once dist/ is complete. */
export const BUILD_STAMP = join("dist", ".build-stamp");

/** Newest modification time (ms) of the non-test .ts/.json files under `dir`. */
export function newestSource(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.(ts|json)$/.test(e.name) && !e.name.endsWith(".test.ts")) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `{ entry, via }` for a package root: `dist` when dist/cli/main.js and the build stamp exist and no source file
 * (src/, when present: a checkout) is newer than the stamp; `src` (run through tsx) otherwise. An installed package
 * has no src/ and always runs dist/.
 */
export function chooseEntry(root) {
  const built = join(root, "dist", "cli", "main.js");
  const stamp = join(root, BUILD_STAMP);
  const src = join(root, "src");
  const hasSrc = existsSync(join(src, "cli", "main.ts"));
  if (existsSync(built) && (!hasSrc || (existsSync(stamp) && newestSource(src) <= statSync(stamp).mtimeMs))) return { entry: built, via: "dist" };
  if (hasSrc) return { entry: join(src, "cli", "main.ts"), via: "src" };
  return { entry: built, via: "dist" };
}
