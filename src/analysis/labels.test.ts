import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAll } from "../formats/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { corpus } from "../testing/corpus.js";
import { vectorFromFindings, type Finding } from "../trace/index.js";
import { groupStatistics } from "./groups.js";
import { LABEL_CSV_HEADER, labelsFromRecords, labelsFromText, loadLabels, madTraceId, parseCsvRecords, rowFromTrace } from "./labels.js";

const finding = (mode: string, steps: number[], agent?: string, confidence = 0.8): Finding => ({
  mode,
  confidence,
  steps,
  ...(agent ? { agent } : {}),
  evidence: "quoted text",
  detector: "rules/test",
});

function diagnosis(id: string, success: boolean | null, findings: Finding[], extra: Record<string, unknown> = {}) {
  return {
    schema: "faultline.diagnosis/1",
    trace_id: id,
    source: { file: "runs/a.jsonl", format: "openai-chat", index: 0 },
    model: "gpt-x",
    framework: "ag2",
    outcome: { success },
    taxonomy: "mast-v3",
    modes: vectorFromFindings(MAST_CODES, findings),
    findings,
    signals: {},
    annotator: "rules",
    ...extra,
  };
}

describe("findings.jsonl", () => {
  const lines = [
    JSON.stringify(diagnosis("r1", false, [finding("1.3", [7, 9], "Coder"), finding("1.3", [4], "Coder"), finding("3.1", [2, 3], "Planner", 0.6), finding("2.6", [2], "Coder", 0.9)])),
    "{not json",
    JSON.stringify({ trace_id: "r3", modes: {} }), // not a diagnosis: fields missing
    "",
    JSON.stringify(diagnosis("r5", null, [], { modes: null, error: "judge timed out" })),
    JSON.stringify(diagnosis("r6", true, [], { reference: { goldLabels: [{ source: "who_and_when", mistakeAgent: "WebSurfer", mistakeStep: 12 }] } })),
  ].join("\n");

  it("reads rows, first steps and the predicted attribution; reports bad lines by number", () => {
    const r = labelsFromText(lines, "run/findings.jsonl");
    expect(r.format).toBe("findings");
    expect(r.records).toBe(5);
    expect(r.skipped).toBe(2);
    expect(r.rows.map((x) => x.trace_id)).toEqual(["r1", "r5", "r6"]);
    const r1 = r.rows[0]!;
    expect(r1.success).toBe(false);
    expect(r1.fields).toMatchObject({ model: "gpt-x", framework: "ag2" });
    expect(r1.modes!["1.3"]).toBe(1);
    expect(r1.modes!["1.1"]).toBe(0);
    expect(r1.firstStep).toEqual({ "1.3": 4, "3.1": 2, "2.6": 2 }); // min of each finding's first step
    expect(r1.attribution).toEqual({ agent: "Coder", step: 2 }); // earliest finding; tie at step 2 → more confident
    expect(r.rows[1]!.modes).toBeNull();
    expect(r.diagnostics.filter((d) => d.level === "error").map((d) => [d.file, d.line])).toEqual([
      ["run/findings.jsonl", 2],
      ["run/findings.jsonl", 3],
    ]);
    expect(r.diagnostics.find((d) => d.line === 3)!.message).toMatch(/not a faultline diagnosis/);
  });

  it("reads the gold labels instead when asked (eval --reference)", () => {
    const r = labelsFromText(lines, "run/findings.jsonl", { findingsAs: "gold" });
    expect(r.rows.map((x) => x.trace_id)).toEqual(["r6"]);
    expect(r.rows[0]!.attribution).toEqual({ agent: "WebSurfer", step: 12 });
    expect(r.rows[0]!.modes).toBeNull();
    expect(r.diagnostics.filter((d) => d.level === "error")).toHaveLength(4); // 2 bad lines + r1 and r5 without gold labels
    const auto = labelsFromText(lines, "run/findings.jsonl", { findingsAs: "auto" });
    expect(auto.rows.map((x) => x.origin.format)).toEqual(["findings", "findings", "trace-gold"]);
  });
});

describe("label CSV", () => {
  const header = LABEL_CSV_HEADER.join(",");
  const z = (n: number) => Array(n).fill("0").join(",");

  it("reads good rows and names file and line of each bad one", () => {
    const text = [
      "\uFEFF" + header,
      `t1,gemini,1,${z(14)}`,
      `"t,2",gemini,0,1,${z(13)}`,
      `t3,kimi,,0,0,1,${z(11)}`,
      `t4,kimi,yes,${z(14)}`, // bad success
      `t5,kimi,0,2,${z(13)}`, // bad cell
      `t6,kimi,0,${z(13)}`, // one cell short
      `,kimi,0,${z(14)}`, // no id
      `t8,kimi,0,,${z(13)}`, // empty mode cell: not judged
    ].join("\r\n");
    const r = labelsFromText(text, "labels.csv");
    expect(r.format).toBe("csv");
    expect(r.records).toBe(8);
    expect(r.skipped).toBe(4);
    expect(r.rows.map((x) => [x.trace_id, x.fields.group, x.success])).toEqual([
      ["t1", "gemini", true],
      ["t,2", "gemini", false],
      ["t3", "kimi", null],
      ["t8", "kimi", false],
    ]);
    expect(r.rows[1]!.modes!["1.1"]).toBe(1);
    expect(r.rows[2]!.modes!["1.3"]).toBe(1);
    expect(r.rows[3]!.modes!["1.1"]).toBeNull();
    expect(r.diagnostics.map((d) => `${d.file}:${d.line}`)).toEqual(["labels.csv:5", "labels.csv:6", "labels.csv:7", "labels.csv:8"]);
    expect(r.diagnostics[0]!.message).toMatch(/t4: success must be 1, 0 or empty/);
    expect(r.diagnostics[1]!.message).toMatch(/1\.1="2"/);
    expect(r.diagnostics[2]!.message).toMatch(/expected 17 cells, got 16/);
  });

  it("refuses a file whose header is not exactly the documented one", () => {
    const r = labelsFromText(`trace_id,group,success,1.1\nt1,a,1,0\n`, "bad.csv");
    expect(r.rows).toEqual([]);
    expect(r.records).toBe(1);
    expect(r.skipped).toBe(1);
    expect(r.diagnostics[0]).toMatchObject({ level: "error", file: "bad.csv", line: 1, skipped: "file" });
    expect(r.diagnostics[0]!.message).toMatch(/header must be exactly/);
  });

  it("groups by the group column", () => {
    const text = [header, `a,x,1,${z(14)}`, `b,x,0,1,${z(13)}`, `c,y,0,${z(14)}`].join("\n");
    const report = groupStatistics(labelsFromText(text, "l.csv").rows, { by: "group" });
    expect(report.groups.map((g) => [g.value, g.traces, g.successes, g.failures])).toEqual([
      ["x", 2, 1, 1],
      ["y", 1, 0, 1],
    ]);
  });

  it("tokenises quotes and line breaks inside quotes", () => {
    expect(parseCsvRecords('a,"b ""q""",c\n"multi\nline",x\n')).toEqual([
      { cells: ["a", 'b "q"', "c"], line: 1 },
      { cells: ["multi\nline", "x"], line: 2 },
    ]);
  });
});

describe("MAST-Data records", () => {
  const rec = (id: number, key: string, ann: Record<string, unknown>) => ({
    mas_name: "AG2",
    llm_name: "GPT-4o",
    benchmark_name: "GSM",
    trace_id: id,
    trace: { key, index: id, trajectory: "…" },
    mast_annotation: ann,
  });
  const full = (on: string[]) => Object.fromEntries(MAST_CODES.map((c) => [c, on.includes(c) ? 1 : 0]));

  it("reads a JSON array element by element, reporting a broken element by line", () => {
    const text = [
      "[",
      JSON.stringify(rec(1, "k1", full(["1.1"]))) + ",",
      '{"trace_id": 2, "mast_annotation": {"1.1": tru}},', // broken element (balanced, invalid)
      JSON.stringify(rec(1, "k2", { ...full([]), "FM-3.3": 1, "3.3": undefined })) + ",",
      JSON.stringify(rec(3, "k3", Object.fromEntries(MAST_CODES.map((c) => [c, null])))),
      "]",
    ].join("\n");
    const r = labelsFromText(text, "MAD.json");
    expect(r.format).toBe("mast-annotation");
    expect(r.records).toBe(4);
    expect(r.skipped).toBe(1);
    expect(r.rows.map((x) => x.trace_id)).toEqual(["mad:k1:1", "mad:k2:1", "mad:k3:3"]);
    expect(r.rows[0]!.fields).toMatchObject({ model: "GPT-4o", framework: "AG2", benchmark: "GSM" });
    expect(r.rows[0]!.success).toBeNull();
    expect(r.rows[1]!.modes!["3.3"]).toBe(1); // "FM-3.3" normalised
    expect(r.rows[2]!.modes).toBeNull(); // all labels null: a trace without a vector
    const err = r.diagnostics.find((d) => d.level === "error")!;
    expect([err.file, err.line]).toEqual(["MAD.json", 3]);
    expect(r.diagnostics.some((d) => d.line === 5 && /every label is null/.test(d.message))).toBe(true);
  });

  it("reads JSONL too, and streamed records", async () => {
    const text = [rec(1, "a", full(["2.6"])), rec(2, "b", { "1.1": 1 })].map((x) => JSON.stringify(x)).join("\n");
    const r = labelsFromText(text, "mad.jsonl");
    expect(r.rows).toHaveLength(2);
    expect(r.rows[1]!.modes!["1.1"]).toBe(1);
    expect(r.rows[1]!.modes!["1.2"]).toBeNull(); // not given: not judged, and said so
    expect(r.diagnostics.some((d) => /1\.2 missing in 1/.test(d.message))).toBe(true);
    const streamed = await labelsFromRecords(
      text.split("\n").map((l, i) => ({ value: JSON.parse(l), line: i + 1 })),
      "mad.jsonl",
    );
    expect(streamed.rows.map((x) => x.trace_id)).toEqual(r.rows.map((x) => x.trace_id));
  });

  it("keys ids on (trace.key, trace_id), since trace_id alone repeats", () => {
    expect(madTraceId({ trace_id: 7, trace: { key: "chatdev-12" } })).toBe("mad:chatdev-12:7");
    expect(madTraceId({ trace_id: "7" })).toBe("mad:7");
    expect(madTraceId({})).toBeUndefined();
  });

  it("does not mistake MAST-Data's human file (annotations[], no mast_annotation) for labels", async () => {
    const r = await loadLabels(corpus("mast", "mad_human_sample.json"));
    expect(r.rows).toEqual([]);
    expect(r.skipped).toBe(4);
    expect(r.diagnostics.every((d) => d.level === "error" && /not a label record/.test(d.message))).toBe(true);
  });
});

describe("loadLabels", () => {
  it("merges a folder, reports unreadable paths, and warns on duplicate ids", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-labels-"));
    mkdirSync(join(dir, "sub"));
    const header = LABEL_CSV_HEADER.join(",");
    writeFileSync(join(dir, "a.csv"), `${header}\nt1,g,1,${Array(14).fill(0).join(",")}\nt1,g,0,${Array(14).fill(0).join(",")}\n`);
    writeFileSync(join(dir, "sub", "b.jsonl"), JSON.stringify(diagnosis("r1", false, [finding("1.1", [0])])) + "\n");
    writeFileSync(join(dir, "notes.txt"), "ignored: not a label extension");
    const r = await loadLabels(dir);
    expect(r.rows.map((x) => x.trace_id)).toEqual(["t1", "t1", "r1"]);
    expect(r.diagnostics.some((d) => d.level === "warning" && /t1 appears 2 times \(lines 2, 3\)/.test(d.message))).toBe(true);
    const missing = await loadLabels(join(dir, "nope.csv"));
    expect(missing.diagnostics[0]).toMatchObject({ level: "error", skipped: "file" });
  });
});

describe("rowFromTrace (gold labels carried by traces)", () => {
  it("reads Who&When's blamed agent and step from a real trace", async () => {
    const { traces } = await readAll(corpus("who_and_when", "Hand-Crafted", "1.json"));
    const { row, warnings } = rowFromTrace(traces[0]!);
    expect(warnings).toEqual([]);
    expect(row).toMatchObject({ success: false, modes: null, attribution: { agent: "WebSurfer", step: 12 } });
    expect(row!.aliases).toContain("6e3be83d1949fa52cba03fb1ce4b5b3bf7e37a83fd7d67694b10b2e439d90cf8");
    expect(rowFromTrace(traces[0]!, { goldSource: "agentrx" }).row).toBeUndefined();
  });
});
