import { readFileSync } from "node:fs";

/**
 * faultline's version, read once from package.json: one level above src/ and dist/ modules, two above the bundled CLI
 * (dist/cli/main.js).
 */
function readVersion(): string {
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version: string };
      if (pkg.name === "faultline") return pkg.version;
    } catch {
      /* not here */
    }
  }
  throw new Error("faultline: its package.json was not found");
}

export const FAULTLINE_VERSION: string = readVersion();
