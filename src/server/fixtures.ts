import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { analyze } from "../pipeline/index.js";
import { traceDiagnosis, type Store } from "../store/index.js";
import { buildTrace, type Decisive, type Diagnosis, type StepDraft, type Trace } from "../trace/index.js";

/*
 * Small synthetic trace sets for the dashboard's tests, written as canonical JSONL and run through the real pipeline
 * (`analyze`: ingest → detect → outcome → store). Some traces carry hostile text: markup, script URLs, a real https
 * link and broken Unicode, in step text, tool arguments and outputs, agent, tool and model names and the task.
 */

export const XSS = {
  script: "<script>window.__xss = 'script'</script>",
  img: `<img src=x onerror="window.__xss = 'img'">`,
  jsLink: "[click me](javascript:window.__xss='link')",
  bareJs: "javascript:window.__xss='bare'",
  svg: `<svg onload="window.__xss = 'svg'"></svg>`,
  safeUrl: "https://example.com/docs?page=1",
  /** Lone surrogates, a right-to-left override and a zero-width joiner. */
  unicode: "broken \ud800 surrogate \udfff and \u202eevil\u202c \u200d end",
} as const;

/** The model name that carries markup (it shows up in tables, the heatmap and filters). */
export const HOSTILE_MODEL = `model-<img src=x onerror="window.__xss='model'">`;

const HOSTILE = [XSS.script, XSS.img, XSS.jsLink, XSS.bareJs, XSS.svg, XSS.safeUrl, XSS.unicode].join("\n");

let callSeq = 0;
function call(name: string, args: unknown, output: string, agent = "agent"): StepDraft[] {
  const callId = `c${callSeq++}`;
  return [
    { agent, role: "assistant", kind: "tool_call", text: `${name}(${JSON.stringify(args)})`, tool: { name, callId, args } },
    { agent: name, role: "tool", kind: "tool_result", text: output, tool: { name, callId, output } },
  ];
}

export interface FixtureTrace {
  id: string;
  model?: string;
  success: boolean;
  /** Repeat the same lookup three times (step repetition, 1.3). */
  repeats: boolean;
  /** End on an announced action that never comes (premature termination, 3.1). */
  stops: boolean;
  hostile?: boolean;
  /** Lines of filler output, to make long, collapsed tool results. */
  longOutput?: number;
}

export function fixtureTrace(f: FixtureTrace): Trace {
  const payload = f.hostile ? HOSTILE : "plain text";
  const agent = f.hostile ? `agent-<b onmouseover="window.__xss='agent'">` : "agent";
  const steps: StepDraft[] = [
    { agent: "user", role: "user", kind: "message", text: `Find the order status for customer 42. ${f.hostile ? HOSTILE : ""}` },
    ...call("lookup_order", { customer: 42, note: payload }, `status: pending\n${payload}`, agent),
  ];
  if (f.longOutput) steps.push(...call("read_log", { lines: f.longOutput }, Array.from({ length: f.longOutput }, (_, i) => `log line ${i}: nothing to see`).join("\n"), agent));
  if (f.repeats) for (let i = 0; i < 2; i++) steps.push(...call("lookup_order", { customer: 42, note: payload }, `status: pending\n${payload}`, agent));
  steps.push(
    f.stops
      ? { agent, role: "assistant", kind: "message", text: `Let me check the shipping system next. ${f.hostile ? XSS.script : ""}` }
      : { agent, role: "assistant", kind: "message", text: `The order is pending. See ${XSS.safeUrl} for details. Task complete.` },
  );
  return buildTrace(
    {
      id: f.id,
      source: { file: "fixture.jsonl", format: "faultline", index: 0 },
      ...(f.model ? { model: f.model } : {}),
      framework: "fixture",
      task: { id: f.id, text: `Report the order status. ${f.hostile ? HOSTILE : ""}` },
      outcome: { success: f.success },
    },
    steps,
  );
}

/** A deterministic mix: two models plus traces without one, failures that repeat or stop, some successes. */
export function fixtureSet(n: number, opts: { hostileEvery?: number; variant?: "a" | "b" } = {}): FixtureTrace[] {
  const out: FixtureTrace[] = [];
  for (let i = 0; i < n; i++) {
    const model = i % 5 === 4 ? undefined : i % 2 === 0 ? "model-alpha" : "model-beta";
    const success = i % 3 === 0;
    // Variant b: model-beta stops repeating itself, so 1.3 falls for that model between the two runs.
    const repeats = !success && i % 2 === 0 ? true : !success && model === "model-beta" && opts.variant !== "b";
    out.push({ id: `fixture:${String(i).padStart(4, "0")}`, model, success, repeats, stops: !success && i % 4 === 1, longOutput: i % 7 === 0 ? 80 : undefined });
  }
  if (opts.hostileEvery) for (let i = 0; i < n; i += opts.hostileEvery) out[i] = { ...out[i]!, hostile: true, id: `hostile:<b>${i}</b>/x`, model: HOSTILE_MODEL, repeats: true, success: false };
  return out;
}

/** Writes traces as canonical JSONL. (Invalid UTF-8 bytes never get this far: the reader refuses such lines.) */
export function writeTraces(dir: string, traces: Trace[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "traces.jsonl"), traces.map((t) => JSON.stringify(t)).join("\n") + "\n");
  return dir;
}

export interface FixtureStore {
  db: string;
  /** Run of variant a (with hostile traces). */
  runA: string;
  /** Run of variant b: the same trace ids, model-beta no longer repeats itself. */
  runB: string;
}

/** Two analysed runs in one store under `root`. */
export async function buildFixtureStore(root: string, n = 60): Promise<FixtureStore> {
  const db = join(root, "store.db");
  const a = writeTraces(join(root, "a"), fixtureSet(n, { hostileEvery: 10, variant: "a" }).map(fixtureTrace));
  const b = writeTraces(join(root, "b"), fixtureSet(n, { hostileEvery: 10, variant: "b" }).map(fixtureTrace));
  const runA = (await analyze([a], { out: join(root, "out-a"), db })).runId;
  const runB = (await analyze([b], { out: join(root, "out-b"), db })).runId;
  return { db, runA, runB };
}

/**
 * Records a decisive step on one stored diagnosis (the run's own annotator), as the pipeline would: `decisive` is
 * given without its agent, which is read off the trace's step; null records "no decisive step" with `reason`.
 * Returns the stored diagnosis.
 */
export function recordDecisive(store: Store, runId: string, traceId: string, decisive: Omit<Decisive, "agent"> | null, reason = ""): Diagnosis {
  const run = store.run(runId);
  const trace = store.trace(runId, traceId);
  const diagnosis = run && trace ? traceDiagnosis(store, runId, traceId, run.annotator) : undefined;
  if (!trace || !diagnosis) throw new Error(`no diagnosed trace ${traceId} in run ${runId}`);
  const updated: Diagnosis =
    decisive === null
      ? { ...diagnosis, decisive: null, decisive_reason: reason }
      : { ...diagnosis, decisive: { ...decisive, agent: trace.steps[decisive.step]?.agent ?? null } };
  if (decisive !== null) delete updated.decisive_reason;
  store.saveBatch(runId, [{ trace, diagnosis: updated }]);
  return updated;
}
