#!/usr/bin/env node
// Prints a code block of the README, exactly as written, so that CI runs what the README tells people to run.
//   node .ci/readme.mjs quick-start   the first code block under "## Quick start" (one command per line)
//   node .ci/readme.mjs library       the first code block under "## Library"
import { readFileSync } from "node:fs";
import { join } from "node:path";

const SECTIONS = { "quick-start": "## Quick start", library: "## Library" };
const which = process.argv[2];
const heading = SECTIONS[which];
if (!heading) {
  process.stderr.write(`usage: node .ci/readme.mjs ${Object.keys(SECTIONS).join("|")}\n`);
  process.exit(1);
}
const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
const start = readme.indexOf(`\n${heading}\n`);
const block = start === -1 ? null : /\n```[a-z]*\n([\s\S]*?)\n```/.exec(readme.slice(start));
if (!block) {
  process.stderr.write(`README.md: no code block under "${heading}"\n`);
  process.exit(1);
}
process.stdout.write(`${block[1]}\n`);
