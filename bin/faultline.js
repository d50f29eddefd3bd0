#!/usr/bin/env node
// Runs the CLI from the TypeScript sources in a checkout (always current), or from the built package.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const src = join(root, "src", "cli", "main.ts");
let entry = join(root, "dist", "cli", "main.js");
if (existsSync(src)) {
  try {
    const { register } = await import("tsx/esm/api");
    register();
    entry = src;
  } catch {
    /* tsx not installed: fall back to the build */
  }
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
