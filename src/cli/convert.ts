import { createWriteStream } from "node:fs";
import type { Command } from "commander";
import { readTraces } from "../formats/index.js";
import { displayPath, EXIT } from "./io.js";
import { fileProgress } from "./progress.js";

interface ConvertOptions {
  output?: string;
  format?: string;
  groundTruth?: string;
}

/** Streams canonical JSONL (one Trace per line) to a file or stdout; diagnostics go to stderr. */
export async function convert(paths: string[], opts: ConvertOptions): Promise<number> {
  const out = opts.output ? createWriteStream(opts.output) : process.stdout;
  const progress = fileProgress(Boolean(opts.output));
  let traces = 0;
  let errors = 0;
  const write = (line: string) =>
    new Promise<void>((resolve, reject) => (out.write(line) ? resolve() : out.once("drain", resolve), out.once("error", reject)));
  for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth, onFile: progress.update })) {
    if (ev.type === "trace") {
      traces++;
      await write(`${JSON.stringify(ev.trace)}\n`);
    } else if (ev.type === "diagnostic" && ev.diagnostic.level !== "notice") {
      if (ev.diagnostic.level === "error") errors++;
      const d = ev.diagnostic;
      process.stderr.write(`${d.level}: ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}: ${d.message}\n`);
    }
  }
  progress.stop();
  if (opts.output) await new Promise<void>((r) => (out as NodeJS.WritableStream).end(r));
  process.stderr.write(`${traces} traces written${opts.output ? ` to ${opts.output}` : ""}; ${errors} errors\n`);
  return errors > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("convert")
    .description("Convert traces of any supported format to faultline's canonical JSONL (one Trace per line)")
    .argument("<paths...>", "trace files or folders")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .option("--format <id>", "skip detection and read every file with this format")
    .option("--ground-truth <file>", "ITBench ground-truth YAML for rollouts that have none beside them")
    .addHelpText("after", "\nThe output reads back with any faultline command (format `faultline`).\nExample:\n  faultline convert ../shared/corpus/tau-bench -o tau.jsonl")
    .action((paths: string[], opts: ConvertOptions) => run(convert(paths, opts)));
}
