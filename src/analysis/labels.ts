import { extname } from "node:path";
import { madTraceId, parseJsonLenient, readText, textInput } from "../formats/index.js";
import { mast, type Taxonomy } from "../taxonomy/index.js";
import { DiagnosisSchema, GoldLabelsSchema, outcomeIndependent, type Diagnosis, type Finding, type GoldLabels, type Trace } from "../trace/index.js";
import type { Attribution, LabelDiagnostic, LabelFormat, LabelRow, ModeValue } from "./types.js";

/*
 * Loaders that turn label files into LabelRows, so faultline's own findings and published label sets go through the
 * same statistics: (a) findings.jsonl (one Diagnosis per line), (b) the simple CSV below, (c) MAST-Data style
 * records with `mast_annotation` (JSON array or JSONL), and (d) the gold labels a Trace carries (Who&When, AgentRx…).
 * A bad record is reported with its file and line and skipped; the rest are still read.
 */

/** The CSV header, exactly. */
export const LABEL_CSV_HEADER = [
  "trace_id", "group", "success",
  "1.1", "1.2", "1.3", "1.4", "1.5", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "3.1", "3.2", "3.3",
] as const;

export interface LabelOptions {
  taxonomy?: Taxonomy;
  /**
   * What a findings.jsonl line stands for: `diagnosis` (default) = faultline's own verdict (its modes and its
   * attribution); `gold` = the dataset labels copied into `reference` (for `eval --reference`); `auto` = gold when
   * the line carries any, else the diagnosis.
   */
  findingsAs?: "diagnosis" | "gold" | "auto";
  /** Which gold label set to use when a trace carries several (e.g. `who_and_when`, `agentrx`). */
  goldSource?: string;
}

export interface LabelLoad {
  /** Detected format (null when the file was not recognised). */
  format: LabelFormat | null;
  rows: LabelRow[];
  diagnostics: LabelDiagnostic[];
  /** Records seen (CSV data lines, JSON records), good or bad: rows + skipped = records. */
  records: number;
  skipped: number;
}

interface RawRecord {
  value: unknown;
  line?: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

class Collector {
  readonly rows: LabelRow[] = [];
  readonly diagnostics: LabelDiagnostic[] = [];
  records = 0;
  skipped = 0;
  constructor(
    readonly file: string,
    public format: LabelFormat | null,
  ) {}
  error(line: number | undefined, message: string): void {
    this.skipped++;
    this.diagnostics.push({ level: "error", file: this.file, line, message, skipped: "row" });
  }
  warn(line: number | undefined, message: string, skipped?: LabelDiagnostic["skipped"]): void {
    this.diagnostics.push({ level: "warning", file: this.file, line, message, ...(skipped ? { skipped } : {}) });
  }
  result(): LabelLoad {
    const lines = new Map<string, (number | undefined)[]>();
    for (const r of this.rows) lines.set(r.trace_id, [...(lines.get(r.trace_id) ?? []), r.origin.line]);
    for (const [id, at] of lines)
      if (at.length > 1)
        this.warn(at[1], `trace id ${id} appears ${at.length} times (lines ${at.map((l) => l ?? "?").join(", ")}); every copy is kept and counted`);
    return { format: this.format, rows: this.rows, diagnostics: this.diagnostics, records: this.records, skipped: this.skipped };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Text splitting

/** RFC 4180 records (quoted fields, doubled quotes, CRLF), each with the line it starts on. */
export function parseCsvRecords(text: string): { cells: string[]; line: number }[] {
  const out: { cells: string[]; line: number }[] = [];
  let cells: string[] = [];
  let cell = "";
  let quoted = false;
  let line = 1;
  let start = 1;
  let any = false; // the current record has content
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === "\n") line++;
        cell += ch;
      }
      continue;
    }
    if (ch === '"' && cell === "") {
      quoted = true;
      any = true;
    } else if (ch === ",") {
      cells.push(cell);
      cell = "";
      any = true;
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      if (any || cell !== "") out.push({ cells: [...cells, cell], line: start });
      cells = [];
      cell = "";
      any = false;
      line++;
      start = line;
    } else {
      cell += ch;
      any = true;
    }
  }
  if (any || cell !== "") out.push({ cells: [...cells, cell], line: start });
  return out;
}

/**
 * The elements of a top-level JSON array, each with its start line, parsed one by one so a bad element costs only
 * itself. Returns undefined when the text is not an array.
 */
function splitJsonArray(text: string): { text: string; line: number }[] | undefined {
  let i = 0;
  let line = 1;
  while (i < text.length && /\s/.test(text[i]!)) if (text[i++] === "\n") line++;
  if (text[i] !== "[") return undefined;
  const out: { text: string; line: number }[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let elemStart = -1;
  let elemLine = line;
  const flush = (end: number) => {
    if (elemStart >= 0) out.push({ text: text.slice(elemStart, end), line: elemLine });
    elemStart = -1;
  };
  for (; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\n") line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    if (ch === "[" || ch === "{") {
      depth++;
      if (depth === 1) continue; // the outer [
    } else if (ch === "]" || ch === "}") {
      depth--;
      if (depth === 0) {
        flush(i);
        return out;
      }
    } else if (ch === "," && depth === 1) {
      flush(i);
      continue;
    }
    if (depth >= 1 && elemStart < 0 && !/\s/.test(ch)) {
      elemStart = i;
      elemLine = line;
    }
  }
  flush(text.length); // unterminated array: the last element will fail to parse and be reported
  return out;
}

/** JSON records of a text: a top-level array's elements, JSONL lines, or one document. */
function jsonRecords(text: string, c: Collector): RawRecord[] {
  const parse = (t: string, line: number): RawRecord | undefined => {
    try {
      // lenient like the trace reader: MAST-Data records carry bare NaN labels, and must not be lost on this side only
      const r = parseJsonLenient(t);
      for (const repair of r.repairs) c.warn(line, `repaired: ${repair}`);
      return { value: r.value, line };
    } catch (e) {
      c.records++; // good records are counted when they are read
      c.error(line, `invalid JSON: ${(e as Error).message}`);
      return undefined;
    }
  };
  const elements = splitJsonArray(text);
  if (elements) return elements.map((e) => parse(e.text, e.line)).filter((r): r is RawRecord => r !== undefined);
  try {
    const doc = JSON.parse(text);
    return [{ value: doc, line: 1 }];
  } catch {
    // not one document: JSONL
  }
  const out: RawRecord[] = [];
  text.split("\n").forEach((l, i) => {
    if (l.trim() === "") return;
    const r = parse(l, i + 1);
    if (r) out.push(r);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Findings (faultline's findings.jsonl)

/** The gold label sets a Diagnosis `reference` carries: `{goldLabels: [...]}`, an array, or one label set. */
function goldSets(reference: unknown): GoldLabels[] {
  const candidates = isObj(reference)
    ? Array.isArray(reference.goldLabels)
      ? reference.goldLabels
      : "source" in reference
        ? [reference]
        : []
    : Array.isArray(reference)
      ? reference
      : [];
  return candidates.flatMap((g) => {
    const r = GoldLabelsSchema.safeParse(g);
    return r.success ? [r.data] : [];
  });
}

function pickGold(sets: GoldLabels[], opts: LabelOptions, warn: (m: string) => void): GoldLabels | undefined {
  if (opts.goldSource) return sets.find((g) => g.source === opts.goldSource);
  if (sets.length > 1)
    warn(`${sets.length} gold label sets (${sets.map((g) => g.source).join(", ")}); using ${sets[0]!.source} — choose one with goldSource`);
  return sets[0];
}

/**
 * The trace's predicted attribution: the record's `decisive` step when it has one (none when it is null), else
 * `signals.attribution {agent, step}` when the annotator wrote one, else the earliest finding (lowest first step; ties go to the more confident finding) — the earliest decisive mistake.
 */
export function predictedAttribution(d: Pick<Diagnosis, "findings" | "signals" | "decisive">): Attribution | undefined {
  if (d.decisive) return { agent: d.decisive.agent, step: d.decisive.step };
  // a record that says nothing supports a decisive step predicts none (rather than falling back to a late symptom)
  if (d.decisive === null) return undefined;
  const s = d.signals?.attribution;
  if (isObj(s) && (typeof s.agent === "string" || typeof s.step === "number"))
    return { agent: typeof s.agent === "string" ? s.agent : null, step: typeof s.step === "number" ? s.step : null };
  const timed = d.findings.filter((f) => f.steps.length > 0);
  if (timed.length === 0) return undefined;
  const first = timed.reduce((a, b) => (b.steps[0]! < a.steps[0]! || (b.steps[0] === a.steps[0] && b.confidence > a.confidence) ? b : a));
  return { agent: first.agent ?? null, step: first.steps[0]! };
}

/** ModeValues keyed by canonical code; unknown codes are returned apart so the caller can report them. */
function normaliseVector(
  raw: Record<string, unknown>,
  tax: Taxonomy,
): { modes: Record<string, ModeValue>; unknown: string[]; bad: string[] } {
  const modes: Record<string, ModeValue> = Object.fromEntries(tax.codes.map((c) => [c, null]));
  const unknown: string[] = [];
  const bad: string[] = [];
  for (const [k, v] of Object.entries(raw)) {
    const code = tax.normalize(k);
    if (!code) {
      unknown.push(k);
      continue;
    }
    const value = v === 1 || v === true || v === "1" ? 1 : v === 0 || v === false || v === "0" ? 0 : v === null ? null : undefined;
    if (value === undefined) bad.push(`${k}=${JSON.stringify(v)}`);
    else modes[code] = value;
  }
  return { modes, unknown, bad };
}

function rowFromDiagnosis(value: unknown, line: number | undefined, c: Collector, opts: LabelOptions): void {
  const parsed = DiagnosisSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    c.error(line, `not a faultline diagnosis record — ${issues.join("; ")}`);
    return;
  }
  const d = parsed.data;
  const tax = opts.taxonomy ?? mast;
  const warn = (m: string) => c.warn(line, `${d.trace_id}: ${m}`);
  const gold = opts.findingsAs === "diagnosis" || opts.findingsAs === undefined ? undefined : pickGold(goldSets(d.reference), opts, warn);
  if (opts.findingsAs === "gold" && !gold) {
    c.error(line, `${d.trace_id}: no gold labels${opts.goldSource ? ` from ${opts.goldSource}` : ""} in reference`);
    return;
  }
  const fields: Record<string, unknown> = {
    model: d.model,
    framework: d.framework,
    benchmark: (isObj(d.reference) && d.reference.benchmark) || (isObj(d.signals) && d.signals.benchmark) || undefined,
    annotator: d.annotator,
    taxonomy: d.taxonomy,
    source: d.source,
    outcome: d.outcome,
    signals: d.signals,
    reference: d.reference,
  };
  const tail = idTail(d.trace_id);
  const base = {
    trace_id: d.trace_id,
    ...(tail ? { aliases: tail } : {}),
    fields,
    success: d.outcome.success,
    origin: { file: c.file, line, format: gold ? ("trace-gold" as const) : ("findings" as const) },
  };
  if (gold) {
    c.rows.push({ ...base, ...goldPart(gold, tax, warn) });
    return;
  }
  let modes: Record<string, ModeValue> | null = null;
  if (d.modes) {
    const v = normaliseVector(d.modes, tax);
    if (v.unknown.length) warn(`codes not in taxonomy ${tax.id} ignored: ${v.unknown.join(", ")}`);
    modes = v.modes;
  } else if (!d.error) warn("modes is null but no error is given; counted as not annotated");
  const firstStep: Record<string, number> = {};
  for (const f of d.findings) {
    const code = tax.normalize(f.mode);
    const s = f.steps[0];
    if (code === undefined || s === undefined) continue;
    firstStep[code] = Math.min(firstStep[code] ?? Infinity, s);
  }
  const attribution = predictedAttribution(d);
  c.rows.push({ ...base, modes, independent: independentVector(modes, d.findings, tax), firstStep, ...(attribution ? { attribution } : {}) });
}

/**
 * The failure vector from outcome-independent evidence: a present mode stays 1 only when at least one of its findings
 * does not rest on the outcome (`outcomeIndependent`); a mode found only because the run failed becomes 0 (examined,
 * not supported without the outcome). Unmeasured (null) modes stay null. A present mode without any finding on the
 * record (a hand-written vector) has no basis to doubt and stays 1, as findings without `basis` count as steps-only.
 */
export function independentVector(modes: Record<string, ModeValue> | null, findings: readonly Pick<Finding, "mode" | "basis">[], tax: Taxonomy = mast): Record<string, ModeValue> | null {
  if (!modes) return null;
  const outcomeOnly = new Map<string, boolean>();
  for (const f of findings) {
    const code = tax.normalize(f.mode);
    if (code === undefined) continue;
    outcomeOnly.set(code, (outcomeOnly.get(code) ?? true) && !outcomeIndependent(f));
  }
  const out: Record<string, ModeValue> = { ...modes };
  for (const [code, only] of outcomeOnly) if (only && out[code] === 1) out[code] = 0;
  return out;
}

/** The labels part of a row from one gold label set. */
function goldPart(gold: GoldLabels, tax: Taxonomy, warn: (m: string) => void): Pick<LabelRow, "modes" | "attribution"> {
  let modes: Record<string, ModeValue> | null = null;
  if (gold.mast) {
    const v = normaliseVector(gold.mast, tax);
    if (v.unknown.length) warn(`gold codes not in taxonomy ${tax.id} ignored: ${v.unknown.join(", ")}`);
    modes = Object.values(v.modes).some((x) => x !== null) ? v.modes : null;
  }
  const attribution =
    gold.mistakeAgent !== undefined || gold.mistakeStep !== undefined
      ? { agent: gold.mistakeAgent ?? null, step: gold.mistakeStep ?? null }
      : undefined;
  return { modes, ...(attribution ? { attribution } : {}) };
}

/** `who_and_when:hand-crafted:<qid>` → [`<qid>`]: lets labels keyed by the bare dataset id meet prefixed trace ids. */
function idTail(id: string): string[] | undefined {
  const i = id.lastIndexOf(":");
  return i > 0 && i < id.length - 1 ? [id.slice(i + 1)] : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Gold labels carried by a Trace (Who&When, AgentRx, MAST-Data…)

/** A reference row from the gold labels a Trace carries; undefined when it has none (from `goldSource`). */
export function rowFromTrace(trace: Trace, opts: LabelOptions = {}): { row?: LabelRow; warnings: string[] } {
  const warnings: string[] = [];
  const gold = pickGold(trace.goldLabels ?? [], opts, (m) => warnings.push(`${trace.id}: ${m}`));
  if (!gold) return { warnings };
  const tax = opts.taxonomy ?? mast;
  const aliases = [...new Set([trace.task?.id, ...(idTail(trace.id) ?? [])].filter((x): x is string => !!x))];
  const row: LabelRow = {
    trace_id: trace.id,
    ...(aliases.length ? { aliases } : {}),
    fields: {
      model: trace.model,
      framework: trace.framework,
      benchmark: trace.task?.benchmark,
      source: trace.source,
      metadata: trace.metadata,
      gold_source: gold.source,
    },
    success: trace.outcome?.success ?? null,
    ...goldPart(gold, tax, (m) => warnings.push(`${trace.id}: ${m}`)),
    origin: { file: trace.source.file, line: trace.source.line, format: "trace-gold" },
  };
  return { row, warnings };
}

// ---------------------------------------------------------------------------------------------------------------
// MAST-Data records

// The id rule of a MAST-Data record (`mad:<trace.key>:<trace_id>`) lives with the format, so that the mast-data
// adapter names its traces exactly as these label rows: src/formats/common/mad-id.ts.
export { madTraceId };

function rowFromMast(value: unknown, line: number | undefined, c: Collector, opts: LabelOptions, missing: Map<string, number>): void {
  if (!isObj(value) || !isObj(value.mast_annotation)) {
    c.error(line, "not a MAST-Data record: expected an object with mast_annotation {code: 1|0|null}");
    return;
  }
  const id = madTraceId(value);
  if (id === undefined) {
    c.error(line, "MAST-Data record without a trace_id");
    return;
  }
  const tax = opts.taxonomy ?? mast;
  const v = normaliseVector(value.mast_annotation, tax);
  if (v.unknown.length) c.warn(line, `${id}: codes not in taxonomy ${tax.id} ignored: ${v.unknown.join(", ")}`, "value");
  if (v.bad.length) c.warn(line, `${id}: values that are not 1, 0 or null read as not judged: ${v.bad.join(", ")}`, "value");
  const given = new Set(Object.keys(value.mast_annotation).map((k) => tax.normalize(k)));
  for (const code of tax.codes) if (!given.has(code)) missing.set(code, (missing.get(code) ?? 0) + 1);
  const judged = Object.values(v.modes).some((x) => x !== null);
  if (!judged) c.warn(line, `${id}: every label is null; kept as a trace without a failure vector`);
  const success = typeof value.success === "boolean" ? value.success : typeof value.is_correct === "boolean" ? value.is_correct : null;
  c.rows.push({
    trace_id: id,
    aliases: [String(value.trace_id)],
    fields: {
      model: value.llm_name,
      framework: value.mas_name,
      benchmark: value.benchmark_name,
      llm_name: value.llm_name,
      mas_name: value.mas_name,
      benchmark_name: value.benchmark_name,
    },
    success,
    modes: judged ? v.modes : null,
    origin: { file: c.file, line, format: "mast-annotation" },
  });
}

// ---------------------------------------------------------------------------------------------------------------
// CSV

function parseCsv(text: string, c: Collector, opts: LabelOptions): void {
  const tax = opts.taxonomy ?? mast;
  const records = parseCsvRecords(text.replace(/^\uFEFF/, ""));
  const header = records.shift();
  if (!header) {
    c.diagnostics.push({ level: "error", file: c.file, line: 1, message: "empty CSV: no header", skipped: "file" });
    return;
  }
  const got = header.cells.map((h) => h.trim());
  if (got.join(",") !== LABEL_CSV_HEADER.join(",")) {
    c.diagnostics.push({
      level: "error",
      file: c.file,
      line: header.line,
      message: `CSV header must be exactly ${LABEL_CSV_HEADER.join(",")} — got ${got.join(",")}`,
      skipped: "file",
    });
    c.records += records.length;
    c.skipped += records.length;
    return;
  }
  const codes = LABEL_CSV_HEADER.slice(3);
  const unmapped = codes.filter((code) => !tax.codes.includes(code));
  if (unmapped.length) c.warn(header.line, `columns not in taxonomy ${tax.id} ignored: ${unmapped.join(", ")}`, "value");
  for (const { cells, line } of records) {
    c.records++;
    if (cells.length !== LABEL_CSV_HEADER.length) {
      c.error(line, `expected ${LABEL_CSV_HEADER.length} cells, got ${cells.length}`);
      continue;
    }
    const [id, group, success, ...values] = cells.map((x) => x.trim()) as [string, string, string, ...string[]];
    if (!id) {
      c.error(line, "empty trace_id");
      continue;
    }
    if (success !== "1" && success !== "0" && success !== "") {
      c.error(line, `${id}: success must be 1, 0 or empty, got ${JSON.stringify(success)}`);
      continue;
    }
    const bad = values.map((v, i) => [codes[i]!, v] as const).filter(([, v]) => v !== "1" && v !== "0" && v !== "");
    if (bad.length) {
      c.error(line, `${id}: mode cells must be 1, 0 or empty — ${bad.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")}`);
      continue;
    }
    const modes: Record<string, ModeValue> = Object.fromEntries(tax.codes.map((code) => [code, null]));
    values.forEach((v, i) => {
      const code = codes[i]!;
      if (code in modes) modes[code] = v === "" ? null : v === "1" ? 1 : 0;
    });
    c.rows.push({
      trace_id: id,
      fields: { group },
      success: success === "" ? null : success === "1",
      // A row with every mode cell empty has no failure vector (not annotated), as in MAST-Data.
      modes: Object.values(modes).some((v) => v !== null) ? modes : null,
      origin: { file: c.file, line, format: "csv" },
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Entry points

/** Which label format a record looks like. */
function recordFormat(v: unknown): LabelFormat | null {
  if (!isObj(v)) return null;
  if ("mast_annotation" in v) return "mast-annotation";
  if ("trace_id" in v && ("modes" in v || "findings" in v)) return "findings";
  return null;
}

/** Reads label rows from JSON records (e.g. streamed from a large file); the format comes from the first record. */
export async function labelsFromRecords(
  records: Iterable<RawRecord> | AsyncIterable<RawRecord>,
  file: string,
  opts: LabelOptions = {},
): Promise<LabelLoad> {
  const c = new Collector(file, null);
  const missing = new Map<string, number>();
  for await (const r of records as AsyncIterable<RawRecord>) {
    c.records++;
    addRecord(r, c, opts, missing);
  }
  finishMast(c, missing);
  return c.result();
}

function addRecord(r: RawRecord, c: Collector, opts: LabelOptions, missing: Map<string, number>): void {
  c.format ??= recordFormat(r.value);
  if (c.format === "mast-annotation") rowFromMast(r.value, r.line, c, opts, missing);
  else if (c.format === "findings") rowFromDiagnosis(r.value, r.line, c, opts);
  else c.error(r.line, "not a label record: expected a faultline diagnosis (trace_id, modes, findings) or a MAST-Data record (mast_annotation)");
}

function finishMast(c: Collector, missing: Map<string, number>): void {
  if (missing.size)
    c.warn(
      undefined,
      `records without some codes (read as not judged): ${[...missing].map(([k, n]) => `${k} missing in ${n}`).join(", ")}`,
      "value",
    );
}

/** Detects the format of a label file's text and reads it. */
export function labelsFromText(text: string, file: string, opts: LabelOptions = {}): LabelLoad {
  const body = text.replace(/^\uFEFF/, "");
  const newline = body.indexOf("\n");
  const firstLine = (newline < 0 ? body : body.slice(0, newline)).trim();
  if (extname(file).toLowerCase() === ".csv" || firstLine.startsWith("trace_id,")) {
    const c = new Collector(file, "csv");
    parseCsv(body, c, opts);
    return c.result();
  }
  const c = new Collector(file, null);
  const missing = new Map<string, number>();
  for (const r of jsonRecords(body, c)) {
    c.records++;
    addRecord(r, c, opts, missing);
  }
  finishMast(c, missing);
  if (body.trim() === "") c.diagnostics.push({ level: "error", file, message: "empty file", skipped: "file" });
  return c.result();
}

/**
 * Reads a label file, or every .csv / .json / .jsonl file under a folder (sorted, merged). Files that are not label
 * files are reported, never silently passed over. For very large JSON arrays (MAD_full_dataset.json, ~200 MB) the
 * whole text is held once; a caller can stream records into labelsFromRecords instead.
 */
export async function loadLabels(path: string, opts: LabelOptions = {}): Promise<LabelLoad> {
  const input = await textInput(path, /\.(csv|json|jsonl)$/i);
  if ("error" in input) return { format: null, rows: [], records: 0, skipped: 0, diagnostics: [{ level: "error", file: path, message: input.error, skipped: "file" }] };
  if (!input.folder) return labelsFromText(await readText(path), path, opts);
  const { files } = input;
  const merged: LabelLoad = { format: null, rows: [], diagnostics: [], records: 0, skipped: 0 };
  for (const f of files) {
    const one = labelsFromText(await readText(f), f, opts);
    if (merged.format !== null && one.format !== null && one.format !== merged.format)
      one.diagnostics.push({ level: "warning", file: f, message: `format ${one.format} differs from ${merged.format} of earlier files` });
    merged.format ??= one.format;
    merged.rows.push(...one.rows);
    merged.diagnostics.push(...one.diagnostics);
    merged.records += one.records;
    merged.skipped += one.skipped;
  }
  if (files.length === 0) merged.diagnostics.push({ level: "error", file: path, message: "no .csv, .json or .jsonl files in folder", skipped: "file" });
  return merged;
}

/** Ids that occur more than once among rows: they would be counted twice, so callers report them. */
export function duplicateIds(rows: readonly LabelRow[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const r of rows) (seen.has(r.trace_id) ? dup : seen).add(r.trace_id);
  return [...dup];
}
