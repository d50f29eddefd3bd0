// The last step of `npm run build`: marks dist/ complete and current as of now (bin/entry.js compares it with src/).
import { writeFileSync } from "node:fs";
writeFileSync(new URL("../dist/.build-stamp", import.meta.url), `${new Date().toISOString()}\n`);
