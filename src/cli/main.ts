import { FAULTLINE_VERSION } from "../version.js";
import { Command, CommanderError } from "commander";
import { EXIT, UsageError } from "./io.js";
type Register = (program: Command, run: (p: Promise<number>) => void) => void;

/**
 * Each command's module, loaded only when that command runs (or for the overall help): `faultline analyze` does not
 * load the dashboard, the queue or the OTLP receiver, and `--version` loads none. In help order.
 */
const COMMANDS: Record<string, () => Promise<{ register: Register }>> = {
  analyze: () => import("./analyze.js"),
  serve: () => import("./serve.js"),
  judge: () => import("./judge.js"),
  stats: () => import("./stats.js"),
  eval: () => import("./eval.js"),
  diff: () => import("./diff.js"),
  export: () => import("./export.js"),
  replay: () => import("./replay.js"),
  runs: () => import("./runs.js"),
  submit: () => import("./submit.js"),
  worker: () => import("./worker.js"),
  collect: () => import("./collect.js"),
  inspect: () => import("./inspect.js"),
  convert: () => import("./convert.js"),
  taxonomy: () => import("./taxonomy.js"),
  formats: () => import("./formats.js"),
};

/** The command modules `argv` needs: its command's, none for the version, every one otherwise (help, mistakes). */
export function commandsFor(argv: readonly string[]): string[] {
  const first = argv[2];
  if (first === "-V" || first === "--version") return [];
  if (first !== undefined && Object.hasOwn(COMMANDS, first)) return [first];
  return Object.keys(COMMANDS);
}

const VERSION = FAULTLINE_VERSION;

/** Builds the CLI with the given commands; each lives in its own file and only parses arguments and reports progress. */
export async function buildProgram(run: (p: Promise<number>) => void, commands: readonly string[] = Object.keys(COMMANDS)): Promise<Command> {
  const program = new Command()
    .name("faultline")
    .version(VERSION)
    .description("Explains why LLM agents fail: reads agent traces, labels MAST failure modes with evidence, and analyses them per model.")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  const modules = await Promise.all(commands.map((name) => COMMANDS[name]!()));
  for (const m of modules) m.register(program, run);
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
  const program = await buildProgram((p) => (pending = p), commandsFor(argv));
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
