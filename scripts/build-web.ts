/**
 * Builds the dashboard UI into dist/web/ (index.html, app.js, app.css) for the published package, where web/ and
 * esbuild are absent. A source checkout does not need this: `faultline serve` bundles web/ when it starts.
 *   npx tsx scripts/build-web.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundleWeb, WEB_BUILT } from "../src/server/assets.js";

const ui = await bundleWeb();
mkdirSync(WEB_BUILT, { recursive: true });
writeFileSync(join(WEB_BUILT, "index.html"), ui.html);
writeFileSync(join(WEB_BUILT, "app.js"), ui.js);
writeFileSync(join(WEB_BUILT, "app.css"), ui.css);
console.log(`dashboard UI written to ${WEB_BUILT} (app.js ${(ui.js.length / 1024).toFixed(0)} KiB, app.css ${(ui.css.length / 1024).toFixed(0)} KiB)`);
