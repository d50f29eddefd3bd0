import type { Command } from "commander";
import { readTraces, type Diagnostic } from "../formats/index.js";
import { GUARD_PRESETS } from "../guards/index.js";
import { diagnoseTrace, ReplayCollector } from "../pipeline/index.js";
import { HIGHLIGHT_TITLES, type HighlightKind, type ReplayInterventionEntry, type ReplaySummary, type TraceReplay } from "../trace/index.js";
import { displayPath, EXIT, table, UsageError, writeJson } from "./io.js";
import { fileProgress } from "./progress.js";

interface ReplayCliOptions {
  guards: string;
  json?: boolean;
  format?: string;
  groundTruth?: string;
  all?: boolean;
  quiet?: boolean;
}

/** How many traces each closing-note category lists before "… and N more". */
const NOTE_LIMIT = 12;

const stepText = (s: number | null) => (s === null ? "-" : String(s));

/** Interventions of one guard, decision and mode fold into one line ("steps 7, 9, 11 (×3)"), in order of first appearance. */
function foldInterventions(list: readonly ReplayInterventionEntry[]): string[] {
  const groups = new Map<string, ReplayInterventionEntry[]>();
  for (const i of list) {
    const key = `${i.guard}|${i.decision}|${i.mode}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const lines: string[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const where = group.length > 1 ? `steps ${group.map((g) => stepText(g.step)).join(", ")} (×${group.length})` : `step ${stepText(first.step)}`;
    const addressed = [...new Set(group.flatMap((g) => g.addresses.map((f) => `${f.detector} [${f.steps.join(",")}]`)))];
    lines.push(`    ${where}  ${first.decision} ${first.guard} (MAST ${first.mode}): ${first.reason.length > 150 ? `${first.reason.slice(0, 149)}…` : first.reason}`);
    if (addressed.length) lines.push(`      addresses ${addressed.join("; ")}`);
  }
  return lines;
}

function traceBlock(r: TraceReplay): string[] {
  const saved = r.steps_saved ? `; would save ${r.steps_saved} steps, ${r.tokens_saved} tokens (${r.tokens_source})` : "";
  const stop = r.stopped_at !== null ? `; stopped at step ${r.stopped_at}` : "";
  return [`  ${r.trace_id}  [${r.model}]  ${r.steps} steps, ${r.interventions.length} interventions${stop}${saved}`, ...foldInterventions(r.interventions)];
}

function closingNote(s: ReplaySummary): string[] {
  const lines = ["What the guards would have caught:"];
  const kinds = Object.keys(HIGHLIGHT_TITLES) as HighlightKind[];
  for (const kind of kinds) {
    const hits = s.highlights.filter((h) => h.kind === kind);
    lines.push(`  ${HIGHLIGHT_TITLES[kind]}: ${hits.length} trace${hits.length === 1 ? "" : "s"}`);
    for (const h of hits.slice(0, NOTE_LIMIT))
      lines.push(`    ${h.trace_id} [${h.model}] step ${stepText(h.step)}: ${h.guard} ${h.decision} — ${h.reason.length > 110 ? `${h.reason.slice(0, 109)}…` : h.reason}`);
    if (hits.length > NOTE_LIMIT) lines.push(`    … and ${hits.length - NOTE_LIMIT} more (--json lists every intervention)`);
  }
  return lines;
}

export function renderReplayText(s: ReplaySummary, opts: { all?: boolean } = {}): string {
  const out: string[] = [];
  out.push(`Guard replay (guards: ${s.guards}): ${s.totals.traces} traces, ${s.totals.intervened} with interventions, ${s.totals.stopped} ended early.`);
  out.push("");
  out.push(
    table(
      ["model", "traces", "intervened", "warn", "block", "require", "stop", "steps saved", "tokens saved", "findings addressed"],
      s.models.map((m) => [m.model, m.traces, m.intervened, m.decisions.warn, m.decisions.block, m.decisions.require, m.decisions.stop, m.steps_saved, m.tokens_saved, `${m.findings_addressed}/${m.findings}`]),
    ),
  );
  out.push("");
  out.push(
    table(
      ["guard", "modes", "traces", "warn", "block", "require", "stop", "findings addressed"],
      s.guards_summary.map((g) => [g.guard, g.modes.join(",") || "-", g.traces, g.decisions.warn, g.decisions.block, g.decisions.require, g.decisions.stop, g.findings_addressed]),
    ),
  );
  const shown = s.traces.filter((r) => (opts.all ? r.interventions.length > 0 : r.interventions.some((i) => i.decision !== "warn")));
  const hidden = s.traces.filter((r) => r.interventions.length > 0).length - shown.length;
  out.push("", `Per trace (${opts.all ? "every trace with an intervention" : "traces with a block, require or stop; --all adds warning-only traces"}):`);
  for (const r of shown) out.push(...traceBlock(r));
  if (!shown.length) out.push("  (none)");
  if (hidden > 0) out.push(`  … ${hidden} more traces with warnings only`);
  out.push("", "Cross-tab with the rule detectors (traces):");
  out.push(
    table(
      ["mode", "name", "guards", "interventions", "intervened", "with finding", "caught", "guard only"],
      s.crosstab.map((c) => [c.mode, c.name, c.guards.join(",") || "-", c.interventions, c.traces_intervened, c.traces_with_finding, c.traces_caught, c.traces_guard_only]),
    ),
  );
  out.push("  caught: an intervention of the mode addresses a finding of it; guard only: an intervention with no finding of the mode.");
  const errs = s.traces.flatMap((r) => r.errors.map((e) => `${r.trace_id}${e.step !== undefined ? ` step ${e.step}` : ""}: ${e.source}: ${e.message}`));
  if (errs.length) {
    out.push("", `Errors during the replay (${errs.length}; the rest of each replay still ran):`);
    for (const e of errs.slice(0, 20)) out.push(`  ${e}`);
    if (errs.length > 20) out.push(`  … ${errs.length - 20} more (--json lists them)`);
  }
  out.push("", ...closingNote(s));
  out.push("", `steps saved: ${s.definitions.steps_saved}`, `tokens saved: ${s.definitions.tokens_saved}`);
  return out.join("\n");
}

export async function runReplay(paths: string[], opts: ReplayCliOptions): Promise<number> {
  let collector: ReplayCollector;
  try {
    collector = new ReplayCollector(opts.guards);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const progress = fileProgress(!opts.json && !opts.quiet);
  const problems: Diagnostic[] = [];
  let errors = 0;
  for await (const ev of readTraces(paths, { format: opts.format, groundTruth: opts.groundTruth, onFile: progress.update })) {
    if (ev.type === "diagnostic") {
      if (ev.diagnostic.level === "error") errors++;
      if (ev.diagnostic.level !== "notice") problems.push(ev.diagnostic);
    } else if (ev.type === "trace") {
      // the same findings analyze replays with: the rules diagnosis with its scored outcome and contract
      const d = await diagnoseTrace(ev.trace);
      collector.add(ev.trace, d.modes === null && ev.trace.steps.length > 0 ? undefined : d.findings);
    }
  }
  progress.stop();
  const summary = collector.summary();
  if (opts.json) writeJson(summary);
  else {
    console.log(renderReplayText(summary, { all: opts.all }));
    if (problems.length) {
      console.log(`\nInput problems (${problems.length}):`);
      for (const d of problems.slice(0, 20)) console.log(`  ${d.level.padEnd(7)} ${displayPath(d.file)}${d.line ? `:${d.line}` : ""}  ${d.message}`);
      if (problems.length > 20) console.log(`  … ${problems.length - 20} more: run \`faultline inspect\` on the inputs for the full list`);
    }
  }
  return errors > 0 || summary.totals.errors > 0 ? EXIT.partial : EXIT.ok;
}

export function register(program: Command, run: (p: Promise<number>) => void): void {
  program
    .command("replay")
    .description("Replay recorded traces through the runtime guards: where each would have intervened, what it would have saved, which findings it addresses")
    .argument("<paths...>", "trace files or folders (read recursively)")
    .option("--guards <config>", `guard configuration: a preset (${Object.keys(GUARD_PRESETS).join(", ")}) or a JSON file`, "default")
    .option("--json", "print one JSON document instead of tables")
    .option("--all", "text mode: list every trace with an intervention, not only those with a block, require or stop")
    .option("--format <id>", "skip detection and read every file with this format")
    .option("--ground-truth <file>", "ITBench ground-truth YAML for rollouts that have none beside them")
    .option("-q, --quiet", "no progress bar")
    .addHelpText(
      "after",
      `
--json prints {"guards","definitions","totals","models":[…],"guards_summary":[…],"crosstab":[…],"highlights":[…],
  "traces":[{"trace_id","model","interventions":[{"guard","step","decision","mode","reason","event","addresses":[…]}],
             "stopped_at","steps_saved","tokens_saved","tokens_source","findings":[…],"errors":[…]}]}

The replay ends at the first stop. steps_saved counts the agent steps that would not have happened (everything after
a stop, and blocked tool calls with their results); tokens_saved uses recorded usage, else an estimate.

Examples:
  faultline replay --guards default ../shared/corpus/itbench
  faultline replay --guards itbench-sre runs/ --json | jq '.highlights'
  faultline replay --guards my-guards.json traces/`,
    )
    .action((paths: string[], opts: ReplayCliOptions) => run(runReplay(paths, opts)));
}
