import { buildTrace, compact, type GoldLabels, type StepDraft, type Trace } from "../../trace/index.js";
import { MAST_CODES, crosswalk, mast, roundOf } from "../../taxonomy/index.js";
import { isObj, normalizeModel, num, str } from "../common/index.js";
import { madTraceId } from "../common/mad-id.js";
import { segmentTrajectory } from "../segment/index.js";
import type { FormatAdapter, ReadContext, RecordItem, SourceFile } from "../types.js";

/**
 * MAST-Data (MAD, Hugging Face `mcemri/MAD`), trace-formats.md §6.
 *
 * Full file (`MAD_full_dataset.json`, a ~200 MB array, streamed element by element):
 *   `{mas_name, llm_name, benchmark_name, trace_id, trace{key, index, trajectory}, mast_annotation{"1.1"…: 1|0|null}}`
 *   → goldLabels `mast-data:o1` (the o1 judge's silver labels). Id `mad:<trace.key>:<trace_id>` (trace_id alone
 *   repeats), the same rule the label loader uses (src/formats/common/mad-id.ts).
 * Human file (`MAD_human_labelled_dataset.json`, 19 records, bare NaN):
 *   `{round, mas_name, benchmark_name, trace_id, trace (string), annotations[{"failure mode", annotator_1..3}]}`
 *   → goldLabels `mast-data:human`: per mode the majority of the three annotators, the round's code remapped to v3
 *   with the crosswalk of mast-taxonomy.md §4.1; old modes without a v3 equivalent are listed, never forced.
 * Trajectory text is split into steps per framework (src/formats/segment).
 */

const isFull = (v: unknown): boolean =>
  isObj(v) && typeof v.mas_name === "string" && isObj(v.trace) && "trajectory" in v.trace && "mast_annotation" in v;

const isHuman = (v: unknown): boolean =>
  isObj(v) &&
  typeof v.round === "string" &&
  Array.isArray(v.annotations) &&
  (v.annotations.length === 0 || (isObj(v.annotations[0]) && "failure mode" in v.annotations[0])) &&
  typeof v.trace === "string";

const FRAMEWORKS: Record<string, string> = { magentic: "magentic-one", magenticone: "magentic-one" };
const frameworkOf = (mas: string) => {
  const k = mas.toLowerCase().replace(/[^a-z0-9]/g, "");
  return FRAMEWORKS[k] ?? k;
};

/** Points the splitter's text-relative refs into this file: the record's line plus `<pointer>#L<n>`. */
function anchor(steps: StepDraft[], pointer: string, line: number | undefined): StepDraft[] {
  return steps.map((s) => {
    const inner = s.ref?.line !== undefined ? `L${s.ref.line}` : s.ref?.pointer;
    return { ...s, ref: compact({ line, pointer: inner ? `${pointer}#${inner}` : pointer, original: s.ref?.original }) };
  });
}

/** 1 / 0 / null from the label values MAD uses (numbers, booleans, numeric strings, null after NaN repair). */
function labelValue(v: unknown): 0 | 1 | null | undefined {
  if (v === null || v === undefined) return null;
  if (v === true || v === 1 || v === "1" || v === "yes") return 1;
  if (v === false || v === 0 || v === "0" || v === "no") return 0;
  return undefined;
}

function o1Labels(annotation: unknown): { mast: Record<string, 0 | 1 | null>; unknown: string[]; bad: string[] } {
  const out: Record<string, 0 | 1 | null> = {};
  const unknown: string[] = [];
  const bad: string[] = [];
  if (isObj(annotation)) {
    for (const [k, v] of Object.entries(annotation)) {
      const code = mast.normalize(k);
      const value = labelValue(v);
      if (!code) unknown.push(k);
      else if (value === undefined) bad.push(`${k}=${JSON.stringify(v)}`);
      else out[code] = value;
    }
  }
  return { mast: out, unknown, bad };
}

/** An annotator's vote: true, false, or null when missing (NaN in the file). */
const vote = (v: unknown): boolean | null => {
  const l = labelValue(v);
  return l === 1 ? true : l === 0 ? false : null;
};

interface HumanMode {
  code: string;
  title: string;
  votes: Array<boolean | null>;
  majority: 0 | 1 | null;
}

function humanLabels(rec: Record<string, unknown>, report: (m: string) => void): GoldLabels {
  const round = str(rec.round) ?? "";
  const generation = roundOf(round);
  const mastVector: Record<string, 0 | 1 | null> = Object.fromEntries(MAST_CODES.map((c) => [c, null]));
  const mapped: Array<HumanMode & { v3: string }> = [];
  const unmapped: Array<HumanMode & { why: string }> = [];
  for (const a of rec.annotations as unknown[]) {
    if (!isObj(a)) continue;
    const header = (str(a["failure mode"]) ?? "").split("\n")[0]!.trim();
    const m = /^(\d+\.\d+)\s*(.*)$/.exec(header);
    const votes = [vote(a.annotator_1), vote(a.annotator_2), vote(a.annotator_3)];
    const yes = votes.filter((v) => v === true).length;
    const no = votes.filter((v) => v === false).length;
    const majority: 0 | 1 | null = yes >= 2 ? 1 : no >= 2 ? 0 : null;
    if (!m) {
      report(`annotation without a mode code: ${JSON.stringify(header.slice(0, 60))}`);
      unmapped.push({ code: "", title: header, votes, majority, why: "no code" });
      continue;
    }
    const [, code, title] = m as unknown as [string, string, string];
    const v3 = crosswalk(generation, code);
    if (v3 === undefined) {
      report(`round "${round}": code ${code} is not in that round's taxonomy`);
      unmapped.push({ code, title, votes, majority, why: `not a ${generation} code` });
    } else if (v3 === null) {
      unmapped.push({ code, title, votes, majority, why: "no v3 equivalent" });
    } else {
      mapped.push({ code, title, votes, majority, v3 });
      const prev = mastVector[v3];
      // two old modes on one v3 code (never in the published crosswalk): a positive wins, an unknown yields
      mastVector[v3] = prev === 1 || majority === 1 ? 1 : prev === 0 || majority === 0 ? 0 : null;
    }
  }
  return {
    source: "mast-data:human",
    mast: mastVector,
    metadata: {
      round,
      taxonomy: generation,
      rule: "majority of annotator_1..3; codes remapped to MAST v3 by mast-taxonomy.md §4.1",
      modes: mapped.map((x) => ({ v3: x.v3, code: x.code, title: x.title, votes: x.votes, majority: x.majority })),
      unmapped: unmapped.map((x) => ({ code: x.code, title: x.title, votes: x.votes, majority: x.majority, why: x.why })),
    },
  };
}

function buildRecord(file: SourceFile, ctx: ReadContext, item: RecordItem): Trace | undefined {
  const rec = item.value as Record<string, unknown>;
  const line = item.line;
  const warn = (message: string) => ctx.report({ line, level: "warning", message });
  const full = isFull(rec);
  const mas = str(rec.mas_name) ?? "unknown";
  const traceObj = full ? (rec.trace as Record<string, unknown>) : undefined;
  const text = full ? str(traceObj!.trajectory) : str(rec.trace);
  const traceId = str(rec.trace_id);
  if (text === undefined) {
    ctx.report({ line, level: "error", message: `record ${item.index}: trajectory is not text`, skipped: "trace" });
    return undefined;
  }
  const seg = segmentTrajectory(text, mas);
  if (seg.metadata.segmentationNote) warn(`trace ${traceId ?? item.index}: ${seg.metadata.segmentationNote}`);
  if (seg.steps.length === 0) warn(`trace ${traceId ?? item.index}: the trajectory is empty`);
  const steps = anchor(seg.steps, full ? "/trace/trajectory" : "/trace", line);

  let id: string;
  const goldLabels: GoldLabels[] = [];
  const metadata: Record<string, unknown> = { mas: mas, benchmark: str(rec.benchmark_name), ...seg.metadata, segmenter: seg.splitter };
  if (full) {
    const key = str(traceObj!.key);
    // the label loader names this record's label row by the same rule, so `eval --reference` pairs the two
    const madId = madTraceId(rec);
    if (madId === undefined) warn(`record ${item.index}: trace_id is missing; the id falls back to the record index and no label row can match it`);
    else if (!key) warn(`record ${item.index}: trace.key is missing; the id is ${madId}, which may repeat`);
    id = madId ?? `mad:${key ?? mas}:record-${item.index}`;
    Object.assign(metadata, compact({ traceKey: key, traceIndex: num(traceObj!.index), traceId }));
    const labels = o1Labels(rec.mast_annotation);
    if (labels.unknown.length) warn(`trace ${id}: mast_annotation has codes outside MAST v3, not used: ${labels.unknown.join(", ")}`);
    if (labels.bad.length) warn(`trace ${id}: unreadable label values, not used: ${labels.bad.join(", ")}`);
    const known = Object.values(labels.mast);
    if (known.length === 0 || known.every((v) => v === null)) {
      warn(`trace ${id}: every mast_annotation label is null; no reference vector for this trace`);
      metadata.madLabels = "all-null";
    } else goldLabels.push({ source: "mast-data:o1", mast: labels.mast, ...(labels.unknown.length ? { metadata: { unknownCodes: labels.unknown } } : {}) });
  } else {
    id = `mad-human:${traceId ?? item.index}`;
    Object.assign(metadata, compact({ round: str(rec.round), traceId }));
    goldLabels.push(humanLabels(rec, (m) => warn(`trace ${id}: ${m}`)));
  }

  const llm = str(rec.llm_name);
  const model = normalizeModel(llm) ?? seg.model;
  if (llm && model !== llm) metadata.modelRaw = llm;
  try {
    return buildTrace(
      compact({
        id,
        source: compact({ file: file.path, format: "mast-data", index: item.index, line }),
        framework: frameworkOf(mas),
        model,
        task: compact({ ...seg.task, benchmark: str(rec.benchmark_name) }),
        outcome: seg.outcome,
        goldLabels: goldLabels.length ? goldLabels : undefined,
        metadata: compact(metadata),
      }),
      steps,
    );
  } catch (e) {
    ctx.report({ line, level: "error", message: (e as Error).message, skipped: "trace" });
    return undefined;
  }
}

export const mastData: FormatAdapter = {
  id: "mast-data",
  title: "MAST-Data (MAD) full and human-labelled records",
  detect(s) {
    if (s.kind !== "json-array" && s.kind !== "jsonl" && s.kind !== "json") return false;
    const first = s.records[0];
    return isFull(first) || isHuman(first);
  },
  async *read(file, ctx) {
    for await (const item of file.records()) {
      if (!isFull(item.value) && !isHuman(item.value)) {
        ctx.report({ line: item.line, level: "error", message: `record ${item.index} is neither a MAD full record (mas_name, trace.trajectory, mast_annotation) nor a human record (round, annotations, trace)`, skipped: "record" });
        continue;
      }
      const trace = buildRecord(file, ctx, item);
      if (trace) yield trace;
    }
  },
};
