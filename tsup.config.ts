import { existsSync } from "node:fs";
import { defineConfig } from "tsup";

/*
 * The published build: ESM for Node 20, one .js per source file so dist/ mirrors src/ (the dashboard finds the
 * package root two levels above src/server/ and dist/server/ alike; JSON data files are copied beside the modules
 * that import them). Type declarations are bundled per public entry: the library (`faultline`), the runtime guards
 * (`faultline/guards`, while src/guards/index.ts exists) and the CLI that bin/faultline.js falls back to.
 * dist/web/ (the prebuilt dashboard UI) is written by another script and survives a rebuild.
 */
const publicEntries: Record<string, string> = { index: "src/index.ts", "cli/main": "src/cli/main.ts" };
if (existsSync("src/guards/index.ts")) publicEntries["guards/index"] = "src/guards/index.ts";

export default defineConfig({
  entry: [
    "src/**/*.ts",
    "src/**/*.json",
    "!src/**/*.test.ts",
    "!src/**/testing/**",
    "!src/**/*.tmp.*",
  ],
  outDir: "dist",
  format: ["esm"],
  platform: "node",
  target: "node20.10", // the engines floor: import attributes (`with { type: "json" }`) are kept
  bundle: false,
  splitting: false,
  sourcemap: false,
  loader: { ".json": "copy" },
  dts: { entry: publicEntries },
  clean: ["!web/**"],
});
