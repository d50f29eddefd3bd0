import type { Command } from "commander";
import { ADAPTERS } from "../formats/index.js";
import { EXIT, table, writeJson } from "./io.js";

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("formats")
    .description("List the trace formats faultline reads, in detection order")
    .option("--json", "print as JSON")
    .action((opts: { json?: boolean }) =>
      run(
        (async () => {
          if (opts.json) writeJson(ADAPTERS.map((a) => ({ id: a.id, title: a.title })));
          else console.log(table(["id", "format"], ADAPTERS.map((a) => [a.id, a.title])));
          return EXIT.ok;
        })(),
      ),
    );
}
