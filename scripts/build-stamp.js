// The last step of `npm run build`: checks that dist/ has the CLI and the library, then marks it complete and current
// as of now (bin/entry.js compares the stamp with src/).
import { existsSync, writeFileSync } from "node:fs";

for (const f of ["cli/main.js", "index.js", "pipeline/index.js"])
  if (!existsSync(new URL(`../dist/${f}`, import.meta.url))) throw new Error(`build incomplete: dist/${f} is missing`);
writeFileSync(new URL("../dist/.build-stamp", import.meta.url), `${new Date().toISOString()}\n`);
