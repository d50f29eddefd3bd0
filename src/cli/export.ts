import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { readTraces } from "../formats/index.js";
import { diagnosesToOtlp } from "../report/index.js";
import { DEFAULT_DB, runsWithTrace, Store } from "../store/index.js";
import { DiagnosisSchema, type Diagnosis, type Trace } from "../trace/index.js";
import { displayPath, EXIT, UsageError } from "./io.js";

interface ExportOptions {
  otlp?: string;
  out?: string;
  presentOnly?: boolean;
  db: string;
}

/** findings.jsonl → diagnoses; a bad line is reported with its number and skipped. */
function readFindings(path: string, problems: string[]): Diagnosis[] {
  const out: Diagnosis[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        const r = DiagnosisSchema.safeParse(JSON.parse(line));
        if (r.success) out.push(r.data);
        else problems.push(`${displayPath(path)}:${i + 1}: not a faultline diagnosis (${r.error.issues[0]?.path.join(".")}: ${r.error.issues[0]?.message}); skipped`);
      } catch (e) {
        problems.push(`${displayPath(path)}:${i + 1}: invalid JSON (${(e as Error).message}); skipped`);
      }
    });
  return out;
}

/**
 * The traces the diagnoses were made from, for span ids and step times: re-read from their source files (each with
 * the format it was read with), else taken from the store. Traces found nowhere are reported.
 */
async function sourceTraces(diagnoses: Diagnosis[], db: string, problems: string[]): Promise<Map<string, Trace>> {
  const wanted = new Set(diagnoses.map((d) => d.trace_id));
  const traces = new Map<string, Trace>();
  const byFile = new Map<string, string>();
  for (const d of diagnoses) byFile.set(d.source.file, d.source.format);
  for (const [file, format] of byFile) {
    if (!existsSync(file)) continue;
    try {
      for await (const ev of readTraces(file, { format })) if (ev.type === "trace" && wanted.has(ev.trace.id)) traces.set(ev.trace.id, ev.trace);
    } catch (e) {
      problems.push(`${displayPath(file)}: could not re-read (${(e as Error).message})`);
    }
  }
  const missing = diagnoses.filter((d) => !traces.has(d.trace_id));
  if (missing.length && existsSync(db)) {
    const store = new Store(db);
    try {
      for (const d of missing) {
        const run = runsWithTrace(store, d.trace_id)[0];
        const t = run ? store.trace(run, d.trace_id) : undefined;
        if (t) traces.set(d.trace_id, t);
      }
    } finally {
      store.close();
    }
  }
  const notFound = diagnoses.filter((d) => !traces.has(d.trace_id));
  if (notFound.length)
    problems.push(
      `${notFound.length} trace(s) found neither in their source files nor in ${displayPath(db)}; their records carry no span ids: ${notFound
        .slice(0, 5)
        .map((d) => d.trace_id)
        .join(", ")}${notFound.length > 5 ? ", …" : ""}`,
    );
  return traces;
}

export async function runExport(opts: ExportOptions): Promise<number> {
  if (!opts.otlp) throw new UsageError("say what to export: --otlp <findings.jsonl>");
  if (!existsSync(opts.otlp)) throw new UsageError(`${opts.otlp}: no such file`);
  const problems: string[] = [];
  const diagnoses = readFindings(opts.otlp, problems);
  const traces = await sourceTraces(diagnoses, opts.db, problems);
  const { document, stats } = diagnosesToOtlp(diagnoses, { traceOf: (d) => traces.get(d.trace_id), presentOnly: opts.presentOnly });
  const json = `${JSON.stringify(document, null, 1)}\n`;
  if (opts.out) writeFileSync(opts.out, json);
  else process.stdout.write(json);
  for (const p of problems) process.stderr.write(`warning ${p}\n`);
  process.stderr.write(
    `${stats.records} gen_ai.evaluation.result records for ${stats.traces} traces; ${stats.linked} traces tied to their OTLP trace ids ` +
      `(${stats.on_step_span} findings on the span of the step they cite); ${stats.unlinked.length} without OTLP ids (not from OTLP input, or not re-readable): ` +
      `their records carry faultline.trace_id only.${opts.out ? ` Wrote ${displayPath(opts.out)}.` : ""}\n`,
  );
  return problems.length ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("export")
    .description("Export faultline's labels for other tools: --otlp writes OTLP/JSON log records (OpenTelemetry GenAI gen_ai.evaluation.result events)")
    .option("--otlp <findings>", "findings.jsonl to export as OTLP/JSON logs")
    .option("-o, --out <file>", "write here instead of stdout")
    .option("--present-only", "only the modes found (no `absent` records)")
    .option("--db <file>", "store to take traces from when their source files cannot be re-read", DEFAULT_DB)
    .addHelpText(
      "after",
      `
One record per finding (gen_ai.evaluation.name = mast.FM-<code>, score = confidence, label present, explanation with
the evidence quote), parented to the span of the step it cites; one absent record per mode judged absent, on the
root span. Traces read from OTLP keep their trace and span ids, so a backend shows the diagnosis on the trace.

Examples:
  faultline export --otlp out/findings.jsonl -o out/labels.otlp.json
  curl -X POST -H 'Content-Type: application/json' --data @out/labels.otlp.json http://collector:4318/v1/logs`,
    )
    .action((opts: ExportOptions) => run(runExport(opts)));
}
