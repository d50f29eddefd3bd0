/**
 * `npm run bench:accuracy`: how well the diagnosis agrees with careful annotators (eval/accuracy.ts does the work).
 * Writes bench/results/accuracy.md and accuracy.json.
 *
 *   npm run bench:accuracy                                    # rules only, offline
 *   npm run bench:accuracy -- --judge --base-url URL --model NAME [--api-key-env VAR] [--concurrency N]
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { accuracyMarkdown, measureAccuracy } from "../eval/accuracy.js";
import { machine, mdTable } from "./results.js";

const here = import.meta.dirname;
const args = parseArgs({
  options: {
    judge: { type: "boolean", default: false },
    "base-url": { type: "string" },
    model: { type: "string" },
    "api-key-env": { type: "string" },
    concurrency: { type: "string", default: "4" },
    quiet: { type: "boolean", default: false },
  },
}).values;
if (args.judge && (!args["base-url"] || !args.model)) {
  console.error("bench:accuracy: --judge needs --base-url URL and --model NAME (an OpenAI-compatible endpoint)");
  process.exit(1);
}
const report = await measureAccuracy({
  corpus: resolve(here, "../../shared/corpus"),
  devSet: resolve(here, "../eval/dev-set.jsonl"),
  // the held-out set is scored when present (eval/README.md: it is never used to develop rules)
  ...(existsSync(resolve(here, "../eval/holdout-set.jsonl")) ? { holdoutSet: resolve(here, "../eval/holdout-set.jsonl") } : {}),
  ...(args.judge
    ? { judge: { baseURL: args["base-url"]!, model: args.model!, apiKeyEnv: args["api-key-env"], concurrency: Number(args.concurrency) || 4, onProgress: (d: number, t: number) => process.stderr.write(`\rjudged ${d}/${t}${d === t ? "\n" : ""}`) } }
    : {}),
});
const md = accuracyMarkdown(report, machine(), mdTable);
const out = join(here, "results");
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "accuracy.md"), md);
writeFileSync(join(out, "accuracy.json"), JSON.stringify(report, null, 1));
if (!args.quiet) console.log(md);
console.error(`wrote ${join(out, "accuracy.md")}`);
