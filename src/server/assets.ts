import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/*
 * The dashboard's UI: one HTML page, one script, one stylesheet, all served from the package (no CDN, works offline).
 * - In a source checkout (web/main.ts present and esbuild installed) the UI is bundled from web/ when the server
 *   starts, so what you see is always the current source (about 100 ms).
 * - In an installed package the prebuilt files in dist/web/ are served (written by `npx tsx scripts/build-web.ts`).
 */

export interface UiAssets {
  html: string;
  js: string;
  css: string;
  /** Where they came from, for the start-up message. */
  origin: "source" | "built";
}

/** The package root: two levels above this file, both in src/server/ and in dist/server/. */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
export const WEB_SOURCE = join(PACKAGE_ROOT, "web");
export const WEB_BUILT = join(PACKAGE_ROOT, "dist", "web");

/** Bundles web/ with esbuild (a dev dependency) into one minified script plus the page and stylesheet. */
export async function bundleWeb(root = WEB_SOURCE): Promise<Omit<UiAssets, "origin">> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [join(root, "main.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: ["es2022"],
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "silent",
  });
  const js = result.outputFiles[0]?.text;
  if (js === undefined) throw new Error(`esbuild produced no output for ${join(root, "main.ts")}`);
  return { js, html: readFileSync(join(root, "index.html"), "utf8"), css: readFileSync(join(root, "styles.css"), "utf8") };
}

function readBuilt(dir: string): Omit<UiAssets, "origin"> {
  return {
    html: readFileSync(join(dir, "index.html"), "utf8"),
    js: readFileSync(join(dir, "app.js"), "utf8"),
    css: readFileSync(join(dir, "app.css"), "utf8"),
  };
}

/** The UI to serve: bundled from source in a checkout, else the built files; a clear error when neither works. */
export async function loadUiAssets(): Promise<UiAssets> {
  if (existsSync(join(WEB_SOURCE, "main.ts"))) {
    // A checkout: never fall back to a possibly stale build when the source does not bundle.
    try {
      return { ...(await bundleWeb()), origin: "source" };
    } catch (e) {
      throw new Error(`cannot bundle the dashboard UI from ${WEB_SOURCE}: ${(e as Error).message}`);
    }
  }
  if (existsSync(join(WEB_BUILT, "app.js"))) return { ...readBuilt(WEB_BUILT), origin: "built" };
  throw new Error(`the dashboard UI is missing: neither ${WEB_SOURCE} nor ${WEB_BUILT} exists (run \`npx tsx scripts/build-web.ts\`)`);
}
