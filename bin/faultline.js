#!/usr/bin/env node
// Runs the built CLI (dist/) when it is present and current, else the TypeScript sources through tsx (a checkout
// being edited); see bin/entry.js. FAULTLINE_DEV=1 forces the sources.
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";
import { chooseEntry } from "./entry.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
let { entry, via } = process.env.FAULTLINE_DEV === "1" ? { entry: join(root, "src", "cli", "main.ts"), via: "src" } : chooseEntry(root);
if (via === "src") {
  try {
    const { register } = await import("tsx/esm/api");
    register();
  } catch {
    entry = join(root, "dist", "cli", "main.js"); // tsx not installed: the build, however old
  }
}
const { main } = await import(pathToFileURL(entry).href);
process.exitCode = await main(process.argv);
