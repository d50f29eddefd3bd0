import type { Command } from "commander";
import { loadTaxonomy, mast } from "../taxonomy/index.js";
import { EXIT, table, writeJson } from "./io.js";

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("taxonomy")
    .description("Print the failure taxonomy faultline labels with (MAST v3 by default)")
    .option("--json", "print the taxonomy as JSON (the same shape a custom taxonomy file uses)")
    .option("--file <taxonomy.json>", "load and validate a custom taxonomy instead")
    .action((opts: { json?: boolean; file?: string }) =>
      run(
        (async () => {
          const t = opts.file ? loadTaxonomy(opts.file) : mast;
          if (opts.json) {
            writeJson(t.toJSON());
            return EXIT.ok;
          }
          console.log(`${t.title}  [${t.version}]`);
          if (t.source) console.log(t.source);
          for (const c of t.categories) {
            console.log(`\n${c.id} ${c.name}${c.aliases.length ? ` (also: ${c.aliases.join("; ")})` : ""}`);
            console.log(
              table(
                ["code", "name", "stages", "definition"],
                t.modes.filter((m) => m.category === c.id).map((m) => [`FM-${m.code}`, m.name, m.stages.join(","), m.definition]),
              ),
            );
          }
          if (t.notes.length) console.log(`\nNotes:\n${t.notes.map((n) => `  - ${n}`).join("\n")}`);
          return EXIT.ok;
        })(),
      ),
    );
}
