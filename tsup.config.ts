import { existsSync } from "node:fs";
import { defineConfig } from "tsup";

/*
 * The published build: ESM for Node 20, one .js per source file so dist/ mirrors src/ (the dashboard finds the
 * package root two levels above src/server/ and dist/server/ alike; JSON data files are copied beside the modules
 * that import them). Type declarations are bundled per public entry: the library (`faultline`), the runtime guards
 * (`faultline/guards`, while src/guards/index.ts exists) and the CLI that bin/faultline.js falls back to.
 * dist/web/ (the prebuilt dashboard UI) is written by another script and survives a rebuild.
 */
const publicEntries: Record<string, string> = { index: "src/index.ts" };
if (existsSync("src/guards/index.ts")) publicEntries["guards/index"] = "src/guards/index.ts";

const shared = {
  outDir: "dist",
  format: ["esm"],
  platform: "node",
  target: "node20.10", // the engines floor: import attributes (`with { type: "json" }`) are kept
  splitting: false, // (the CLI bundle below turns it on: its commands load lazily)
  sourcemap: false,
} as const;

export default defineConfig([{
  ...shared,
  entry: [
    "src/**/*.ts",
    "src/**/*.json",
    "!src/cli/main.ts",
    "!src/**/*.test.ts",
    "!src/**/testing/**",
    "!src/**/*.tmp.*",
  ],
  bundle: false,
  loader: { ".json": "copy" },
  dts: { entry: publicEntries },
  clean: ["!web/**"],
}, {
  // The CLI as one module with its pure-JavaScript dependencies: Node loads one file instead of a few hundred at
  // start. The native SQLite binding stays external; CommonJS dependencies get a real `require`.
  ...shared,
  entry: { "cli/main": "src/cli/main.ts" },
  bundle: true,
  // each command is a chunk of its own, loaded when it runs (src/cli/main.ts)
  splitting: true,
  noExternal: [/^(?!better-sqlite3$|esbuild$|playwright-core$)/],
  banner: { js: 'import { createRequire as __faultlineRequire } from "node:module"; const require = __faultlineRequire(import.meta.url);' },
  clean: false,
  esbuildOptions(o) {
    o.external = [...(o.external ?? []), "better-sqlite3", "esbuild", "playwright-core"]; // native or development-only
    // chunks beside main.js: code that finds files from import.meta.url (the dashboard's assets) keeps its depth
    o.chunkNames = "cli/[name]-[hash]";
  },
}]);
