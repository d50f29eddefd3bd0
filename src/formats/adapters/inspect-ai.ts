import { buildTrace, compact, type OutcomeInput, type StepDraft } from "../../trace/index.js";
import { arr, asText, isObj, normalizeModel, num, str } from "../common/index.js";
import { parseJsonLenient } from "../io/lenient.js";
import type { FormatAdapter, ReadContext, SourceFile } from "../types.js";

/**
 * Inspect AI eval logs: `.json` (one EvalLog: `version, status, eval, plan, results, stats, samples[]`) and `.eval`
 * (a zip: `header.json` with the same header fields, `samples/<id>_epoch_<n>.json` one sample each, summaries,
 * journal). One trace per sample: messages → steps (assistant `tool_calls[]{id, function, arguments}`, tool
 * messages `{tool_call_id, function, error?}`), outcome from `scores` (value C = correct, I = incorrect, P = partial,
 * numbers and booleans as they are; the first scorer decides, all are kept raw), model from `eval.model`.
 * `events` repeat the messages with timing; only their counts are kept. `attachment://<hash>` references in message
 * text are resolved from the sample's `attachments`.
 */

const isHeader = (v: unknown): v is Record<string, unknown> => isObj(v) && isObj(v.eval) && typeof v.eval.task === "string" && ("model" in v.eval || "status" in v);

const isEvalZip = (entries: string[] | undefined) => !!entries && entries.includes("header.json") && entries.some((e) => e.startsWith("samples/") || e.startsWith("_journal/"));

const LETTER: Record<string, number> = { C: 1, I: 0, P: 0.5, N: 0 };

/** Outcome of a sample from its first scorer; undefined when it has no scores. */
function outcomeOf(scores: unknown): OutcomeInput | undefined {
  if (!isObj(scores)) return undefined;
  const [name, first] = Object.entries(scores)[0] ?? [];
  if (!name || !isObj(first)) return undefined;
  const v = first.value;
  if (typeof v === "string" && v in LETTER) return { success: v === "C", score: LETTER[v], metric: name, raw: scores };
  if (typeof v === "boolean") return { success: v, score: v ? 1 : 0, metric: name, raw: scores };
  const n = num(v);
  if (n !== undefined) return compact({ score: n, success: n === 1 ? true : n === 0 ? false : undefined, metric: name, raw: scores });
  return { metric: name, raw: scores };
}

function resolver(attachments: unknown): (s: string | undefined) => string | undefined {
  if (!isObj(attachments)) return (s) => s;
  return (s) => s?.replace(/attachment:\/\/([0-9a-f]+)/g, (whole, hash: string) => str(attachments[hash]) ?? whole);
}

/** Text and reasoning of an Inspect content value (string or `[{type: text|reasoning|image|…}]`). */
function contentParts(content: unknown, resolve: (s: string | undefined) => string | undefined): { text?: string; reasoning?: string } {
  if (typeof content === "string") return { text: resolve(content) };
  const text: string[] = [];
  const reasoning: string[] = [];
  for (const p of arr(content)) {
    if (!isObj(p)) continue;
    if (p.type === "reasoning") reasoning.push(resolve(str(p.reasoning) ?? str(p.summary)) ?? (p.redacted ? "[redacted reasoning]" : ""));
    else if (p.type === "text") text.push(resolve(str(p.text)) ?? "");
    else text.push(`[${String(p.type ?? "content")}]`);
  }
  return compact({ text: text.length ? text.join("\n") : undefined, reasoning: reasoning.length ? reasoning.join("\n") : undefined });
}

function sampleSteps(sample: Record<string, unknown>, pointer: string): StepDraft[] {
  const resolve = resolver(sample.attachments);
  const steps: StepDraft[] = [];
  arr(sample.messages).forEach((m, i) => {
    if (!isObj(m)) return;
    const ref = { pointer: `${pointer}/messages/${i}` };
    const role = str(m.role);
    const { text, reasoning } = contentParts(m.content, resolve);
    const model = normalizeModel(str(m.model));
    if (role === "system") steps.push(compact({ agent: "system", role: "system" as const, kind: "message" as const, text, ref }));
    else if (role === "user") steps.push(compact({ agent: "user", role: "user" as const, kind: "message" as const, text, ref, tags: m.source && m.source !== "input" ? [`source:${String(m.source)}`] : undefined }));
    else if (role === "tool") {
      const err = isObj(m.error) ? m.error : undefined;
      const name = str(m.function) ?? "tool";
      const output = text ?? (err ? str(err.message) : undefined);
      steps.push(compact({ agent: name, role: "tool" as const, kind: "tool_result" as const, text: output, ref, tool: compact({ name, callId: str(m.tool_call_id), output, isError: err ? true : undefined }) }));
    } else if (role === "assistant") {
      const turn: StepDraft[] = [];
      if (reasoning) turn.push({ agent: "assistant", role: "assistant", kind: "reasoning", text: reasoning, ref, model });
      if (text) turn.push({ agent: "assistant", role: "assistant", kind: "message", text, ref, model });
      for (const c of arr(m.tool_calls)) {
        if (!isObj(c)) continue;
        const name = str(c.function) ?? (isObj(c.function) ? str(c.function.name) : undefined) ?? "unknown";
        turn.push({ agent: "assistant", role: "assistant", kind: "tool_call", text: `${name}(${asText(c.arguments ?? {})})`, ref, model, tool: compact({ name, callId: str(c.id), args: c.arguments }) });
        if (c.parse_error) turn.push({ agent: "assistant", role: "assistant", kind: "error", text: `tool call ${name}: ${String(c.parse_error)}`, ref, model });
      }
      if (turn.length === 0) turn.push({ agent: "assistant", role: "assistant", kind: "message", text: "", ref, model, tags: ["empty"] });
      steps.push(...turn.map((s) => compact(s)));
    } else steps.push(compact({ agent: role ?? "unknown", role: "user" as const, kind: "message" as const, text, ref }));
  });
  if (isObj(sample.error)) steps.push({ agent: "system", role: "system", kind: "error", text: str(sample.error.message) ?? asText(sample.error), ref: { pointer: `${pointer}/error` } });
  if (isObj(sample.limit)) steps.push({ agent: "system", role: "system", kind: "termination", text: `limit reached: ${asText(sample.limit)}`, ref: { pointer: `${pointer}/limit` } });
  return steps;
}

function inputText(input: unknown): string | undefined {
  if (typeof input === "string") return input;
  const parts = arr(input).flatMap((m) => (isObj(m) ? [contentParts(m.content, (s) => s).text ?? ""] : []));
  return parts.length ? parts.join("\n\n") : undefined;
}

function* samplesToTraces(file: SourceFile, ctx: ReadContext, header: Record<string, unknown>, samples: Array<{ value: unknown; pointer: string }>) {
  const ev = header.eval as Record<string, unknown>;
  const task = str(ev.task) ?? "task";
  const rawModel = str(ev.model);
  const model = normalizeModel(rawModel);
  let index = 0;
  for (const { value, pointer } of samples) {
    if (!isObj(value)) {
      ctx.report({ level: "error", message: `${pointer}: sample is not an object`, skipped: "trace" });
      continue;
    }
    const sid = str(value.id) ?? String(index);
    const epoch = num(value.epoch) ?? 1;
    const events: Record<string, number> = {};
    for (const e of arr(value.events)) if (isObj(e) && str(e.event)) events[str(e.event)!] = (events[str(e.event)!] ?? 0) + 1;
    const outcome = outcomeOf(value.scores);
    if (!outcome && !value.error) ctx.report({ level: "notice", message: `${pointer}: sample ${sid} has no scores` });
    try {
      yield buildTrace(
        compact({
          id: `${task}/${sid}/${epoch}`,
          source: { file: file.path, format: "inspect-ai", index: index++, pointer },
          framework: "inspect-ai",
          model,
          task: compact({ id: sid, text: inputText(value.input), expected: value.target === "" ? undefined : value.target, benchmark: task }),
          outcome,
          metadata: compact({
            modelRaw: rawModel !== model ? rawModel : undefined,
            evalId: str(ev.eval_id),
            runId: str(ev.run_id),
            epoch,
            status: str(header.status),
            sampleUuid: str(value.uuid),
            sampleMetadata: isObj(value.metadata) && Object.keys(value.metadata).length ? value.metadata : undefined,
            modelUsage: value.model_usage,
            totalTimeS: num(value.total_time),
            workingTimeS: num(value.working_time),
            eventCounts: Object.keys(events).length ? events : undefined,
            sandbox: ev.sandbox,
          }),
        }),
        sampleSteps(value, pointer),
      );
    } catch (e) {
      ctx.report({ level: "error", message: `${pointer}: ${(e as Error).message}`, skipped: "trace" });
    }
  }
}

/** `samples/10_epoch_1.json` after `samples/9_epoch_1.json`: numeric parts compare as numbers. */
const natural = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

export const inspectAi: FormatAdapter = {
  id: "inspect-ai",
  title: "Inspect AI eval log (.json / .eval)",
  detect: (s) => (s.kind === "zip" ? isEvalZip(s.entries) : s.kind === "json" && isHeader(s.records[0]) && "samples" in (s.records[0] as object)),
  async *read(file, ctx) {
    if (file.sample.kind === "zip") {
      const entries = file.zipEntries ?? {};
      const parse = (name: string): unknown => {
        const bytes = entries[name];
        if (!bytes) return undefined;
        try {
          const r = parseJsonLenient(new TextDecoder().decode(bytes));
          for (const rep of r.repairs) ctx.report({ level: "warning", message: `${name}: repaired: ${rep}` });
          return r.value;
        } catch (e) {
          ctx.report({ level: "error", message: `${name}: invalid JSON (${(e as Error).message})`, skipped: name.startsWith("samples/") ? "trace" : "record" });
          return undefined;
        }
      };
      const header = parse("header.json") ?? parse("_journal/start.json");
      if (!isHeader(header)) {
        ctx.report({ level: "error", message: "header.json has no eval{task, model}", skipped: "file" });
        return;
      }
      const names = Object.keys(entries).filter((n) => /^samples\/.+\.json$/.test(n)).sort(natural);
      if (names.length === 0) ctx.report({ level: "warning", message: `the log has no samples (status ${str(header.status) ?? "unknown"})` });
      // samples that do not parse were reported by parse()
      const samples = names.map((n) => ({ value: parse(n), pointer: n })).filter((x) => x.value !== undefined);
      yield* samplesToTraces(file, ctx, header, samples);
      return;
    }
    const doc = await file.document();
    if (!isHeader(doc)) {
      ctx.report({ level: "error", message: "not an Inspect eval log: no eval{task, model}", skipped: "file" });
      return;
    }
    const samples = arr(doc.samples);
    if (samples.length === 0) ctx.report({ level: "warning", message: `the log has no samples (status ${str(doc.status) ?? "unknown"})` });
    yield* samplesToTraces(file, ctx, doc, samples.map((v, i) => ({ value: v, pointer: `/samples/${i}` })));
  },
};
