import { FAULTLINE_VERSION } from "../version.js";
import { Command, CommanderError } from "commander";
import { EXIT, UsageError } from "./io.js";
import { register as registerInspect } from "./inspect.js";
import { register as registerConvert } from "./convert.js";
import { register as registerTaxonomy } from "./taxonomy.js";
import { register as registerFormats } from "./formats.js";
import { register as registerAnalyze } from "./analyze.js";
import { register as registerServe } from "./serve.js";
import { register as registerJudge } from "./judge.js";
import { register as registerStats } from "./stats.js";
import { register as registerEval } from "./eval.js";
import { register as registerDiff } from "./diff.js";
import { register as registerExport } from "./export.js";
import { register as registerReplay } from "./replay.js";
import { register as registerRuns } from "./runs.js";
import { register as registerCollect } from "./collect.js";
import { register as registerSubmit } from "./submit.js";
import { register as registerWorker } from "./worker.js";

const VERSION = FAULTLINE_VERSION;

/** Builds the CLI; each command lives in its own file and only parses arguments and reports progress. */
export function buildProgram(run: (p: Promise<number>) => void): Command {
  const program = new Command()
    .name("faultline")
    .version(VERSION)
    .description("Explains why LLM agents fail: reads agent traces, labels MAST failure modes with evidence, and analyses them per model.")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  for (const reg of [registerAnalyze, registerServe, registerJudge, registerStats, registerEval, registerDiff, registerExport, registerReplay, registerRuns, registerSubmit, registerWorker, registerCollect, registerInspect, registerConvert, registerTaxonomy, registerFormats]) reg(program, run);
  program.addHelpText(
    "after",
    `
Quick start:
  faultline analyze examples/          diagnose the bundled example traces
  faultline inspect examples/          what is in these files?
  faultline taxonomy                   the 14 MAST failure modes

Exit status: 0 ok, 1 usage error (also: an input that does not exist, inputs without any trace), 2 some input was
refused (the rest was processed), 130 analyze or judge was interrupted (what was read is kept, marked incomplete).`,
  );
  return program;
}

let pipeGuarded = false;

export async function main(argv: string[]): Promise<number> {
  // `faultline … | head` closes the pipe early: that is the reader's choice, not an error
  if (!pipeGuarded) {
    pipeGuarded = true;
    for (const stream of [process.stdout, process.stderr])
      stream.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "EPIPE") process.exit(EXIT.ok);
        throw e;
      });
  }
  let pending: Promise<number> | undefined;
  const program = buildProgram((p) => (pending = p));
  try {
    await program.parseAsync(argv);
    return pending ? await pending : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (e instanceof UsageError) {
      process.stderr.write(`faultline: ${e.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`faultline: ${(e as Error).message}\n`);
    return EXIT.usage;
  }
}
