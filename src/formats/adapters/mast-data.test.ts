import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";
import { loadLabels, matchRows, rowFromTrace } from "../../analysis/index.js";

const positives = (mast: Record<string, 0 | 1 | null> | undefined) =>
  Object.entries(mast ?? {})
    .filter(([, v]) => v === 1)
    .map(([k]) => k)
    .sort();

describe("mast-data adapter: human-labelled records (corpus)", async () => {
  const { traces, files, diagnostics } = await readAll(corpus("mast"));

  it("reads the 4 records of the MANIFEST and skips the annotator's definitions and examples", () => {
    expect(traces).toHaveLength(4);
    expect(traces.map((t) => t.id)).toEqual(["mad-human:2", "mad-human:7", "mad-human:4", "mad-human:16"]);
    const role = (name: string) => files.find((f) => f.path.endsWith(name))!.role;
    expect(role("mad_human_sample.json")).toBe("trace");
    expect(role("definitions.txt")).toBe("skipped");
    expect(role("examples.txt")).toBe("skipped");
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
  });

  it("takes the majority of three annotators per mode (Generlazability round: final codes, 2-of-3 votes count)", () => {
    const t = traces.find((x) => x.id === "mad-human:16")!;
    const g = t.goldLabels![0]!;
    expect(g.source).toBe("mast-data:human");
    expect(positives(g.mast)).toEqual(["1.1", "3.2", "3.3"]);
    expect(Object.keys(g.mast!)).toHaveLength(14);
    expect(g.metadata).toMatchObject({ round: "Generlazability", taxonomy: "final", unmapped: [] });
    expect(t).toMatchObject({ framework: "metagpt", task: { benchmark: "MMLU" } });
  });

  it("remaps older rounds with the crosswalk and lists modes that have no v3 equivalent", () => {
    // Round 1: 1.5 "Unaware of stopping conditions" → 1.5, 3.3 "Ignoring suggestions from agents" → 2.5
    expect(positives(traces.find((x) => x.id === "mad-human:2")!.goldLabels![0]!.mast)).toEqual(["1.5", "2.5"]);
    // Round 2: 3.3 "Lack of result verification" → 3.2 (by meaning)
    expect(positives(traces.find((x) => x.id === "mad-human:7")!.goldLabels![0]!.mast)).toEqual(["3.2"]);
    const metagpt = traces.find((x) => x.id === "mad-human:4")!.goldLabels![0]!;
    expect(positives(metagpt.mast)).toEqual(["1.2", "1.3", "1.5", "2.1", "2.3", "2.6", "3.2", "3.3"]);
    const unmapped = (metagpt.metadata as { unmapped: Array<{ code: string; title: string; majority: number }> }).unmapped;
    expect(unmapped.find((u) => u.majority === 1)).toMatchObject({ code: "3.4", title: "Waiting for known information", why: "no v3 equivalent" });
  });

  it("segments each trace and points steps back into the record", () => {
    const ag2 = traces.find((x) => x.id === "mad-human:7")!;
    expect(ag2.steps.map((s) => s.agent)).toEqual(["mathproxyagent", "assistant", "mathproxyagent", "assistant"]);
    expect(ag2.steps[2]).toMatchObject({ text: "29.0", ref: { line: ag2.source.line, pointer: "/trace#/trajectory/2" } });
    expect(ag2.outcome).toMatchObject({ success: false });
    const log = traces.find((x) => x.id === "mad-human:16")!;
    expect(log.steps.find((s) => s.agent === "SimpleTester")!.ref!.pointer).toMatch(/^\/trace#L\d+$/);
  });
});

describe("mast-data adapter: full-file records (synthetic fixture)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-mad-"));
  const path = join(dir, "MAD_full_dataset.json");
  const labels = (over: Record<string, unknown>) => ({ "1.1": 0, "1.2": 0, "1.3": 0, "1.4": 0, "1.5": 0, "2.1": 0, "2.2": 0, "2.3": 0, "2.4": 0, "2.5": 0, "2.6": 0, "3.1": 0, "3.2": 0, "3.3": 0, ...over });
  const ag2 = {
    mas_name: "AG2",
    llm_name: "GPT-4o",
    benchmark_name: "GSM-Plus",
    trace_id: 0,
    trace: {
      key: "ag2_gsm",
      index: 0,
      trajectory: JSON.stringify({ problem_statement: ["What is 2+2?"], other_data: { correct: true }, trajectory: [{ content: ["Solve it."], role: "assistant", name: "mathproxyagent" }, { content: ["\\boxed{4}"], role: "user", name: "assistant" }] }),
    },
    mast_annotation: labels({ "1.5": 1 }),
  };
  const chatdev = {
    mas_name: "ChatDev",
    llm_name: "GPT-4o",
    benchmark_name: "ProgramDev",
    trace_id: 0,
    trace: { key: "chatdev_programdev", index: 3, trajectory: "[2025-17-01 11:37:52 INFO] Programmer: **Programmer<->Code Reviewer on : Coding, turn 0**\n\nmain.py done" },
    mast_annotation: "LABELS",
  };
  const allNull = { mas_name: "Magentic", llm_name: "GPT-4o", benchmark_name: "GAIA", trace_id: 7, trace: { key: "magentic_gaia", index: 7, trajectory: "---------- Orchestrator ----------\nplan\n---------- WebSurfer ----------\nclicked" }, mast_annotation: Object.fromEntries(Object.keys(labels({})).map((k) => [k, null])) };
  const stray = { ...ag2, trace_id: 9, trace: { ...ag2.trace, index: 9 }, mast_annotation: labels({ "1.6": 1 }) };
  // the ChatDev labels carry a bare NaN, as the real file does
  const chatdevJson = JSON.stringify(chatdev, null, 2).replace('"LABELS"', JSON.stringify(labels({ "3.3": 1 })).replace('"2.4":0', '"2.4":NaN'));
  const text = `[\n${JSON.stringify(ag2)},\n${chatdevJson},\n{"mas_name": "AG2", broken},\n${JSON.stringify(allNull)},\n${JSON.stringify(stray)}\n]\n`;
  writeFileSync(path, text);
  const brokenLine = text.split("\n").findIndex((l) => l.includes("broken")) + 1;
  const { traces, diagnostics, files } = await readAll(path);

  it("names records mad:<trace.key>:<trace_id>, and keeps the o1 labels as mast-data:o1", () => {
    expect(files[0]).toMatchObject({ format: "mast-data", role: "trace", traces: 4 });
    expect(traces.map((t) => t.id)).toEqual(["mad:ag2_gsm:0", "mad:chatdev_programdev:0", "mad:magentic_gaia:7", "mad:ag2_gsm:9"]);
    const [a, c] = traces;
    expect(a).toMatchObject({ framework: "ag2", model: "GPT-4o", task: { text: "What is 2+2?", benchmark: "GSM-Plus" }, outcome: { success: true } });
    expect(a!.goldLabels).toEqual([{ source: "mast-data:o1", mast: labels({ "1.5": 1 }) }]);
    expect(a!.steps.map((s) => [s.agent, s.ref?.pointer])).toEqual([
      ["mathproxyagent", "/trace/trajectory#/trajectory/0"],
      ["assistant", "/trace/trajectory#/trajectory/1"],
    ]);
    expect(c).toMatchObject({ framework: "chatdev", metadata: { traceIndex: 3, segmentation: "framework" } });
    expect(c!.goldLabels![0]!.mast).toMatchObject({ "2.4": null, "3.3": 1 });
    expect(c!.steps[0]).toMatchObject({ agent: "Programmer", text: "main.py done", time: "2025-01-17T11:37:52" });
  });

  it("reports bad input with its line and carries on; all-null rows get no vector and a warning", () => {
    expect(diagnostics).toContainEqual(expect.objectContaining({ level: "error", line: brokenLine, skipped: "record" }));
    expect(diagnostics.some((d) => d.level === "warning" && /repaired: replaced 1 bare NaN/.test(d.message))).toBe(true);
    const magentic = traces.find((t) => t.id === "mad:magentic_gaia:7")!;
    expect(magentic.goldLabels).toBeUndefined();
    expect(magentic.metadata).toMatchObject({ madLabels: "all-null", segmentation: "heuristic" });
    expect(magentic.steps.map((s) => s.agent)).toEqual(["Orchestrator", "WebSurfer"]);
    expect(diagnostics.some((d) => d.level === "warning" && d.message === "trace mad:magentic_gaia:7: every mast_annotation label is null; no reference vector for this trace")).toBe(true);
    expect(diagnostics.some((d) => d.level === "warning" && /mad:ag2_gsm:9: mast_annotation has codes outside MAST v3, not used: 1\.6/.test(d.message))).toBe(true);
  });

  it("gives a record the same id read as a trace and read as a label row, so eval --reference pairs them by id", async () => {
    const labels = await loadLabels(path);
    expect(labels.format).toBe("mast-annotation");
    // the broken record is lost on both sides; the other four carry the same ids, in the same order (the ChatDev
    // record's bare NaN is repaired on both sides too)
    expect(labels.rows.map((r) => r.trace_id)).toEqual(traces.map((t) => t.id));
    expect(labels.diagnostics).toContainEqual(expect.objectContaining({ level: "warning", message: expect.stringMatching(/repaired: replaced 1 bare NaN/) }));
    // trace_id 0 repeats across keys: only the full id can pair them, and it does, without falling back to aliases
    const predicted = traces.flatMap((t) => rowFromTrace(t).row ?? []);
    const { pairs, matching } = matchRows(labels.rows, predicted);
    expect(pairs.map(([ref, pred]) => [ref.trace_id, pred.trace_id])).toEqual(
      predicted.map((p) => [p.trace_id, p.trace_id]),
    );
    expect(matching).toMatchObject({ matched: 3, matched_by_alias: 0, predicted_only: [] });
    expect(matching.reference_only).toEqual(["mad:magentic_gaia:7"]); // every label null: no gold on the trace either
  });

  it("names a record without trace.key mad:<trace_id>, as the label loader does, and says so", async () => {
    const loose = join(dir, "loose.jsonl");
    const { key: _key, ...traceNoKey } = ag2.trace;
    writeFileSync(loose, `${JSON.stringify({ ...ag2, trace_id: 42, trace: traceNoKey })}\n`);
    const r = await readAll(loose);
    expect(r.traces.map((t) => t.id)).toEqual(["mad:42"]);
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ level: "warning", line: 1, message: expect.stringMatching(/trace\.key is missing; the id is mad:42/) }));
    expect((await loadLabels(loose)).rows.map((x) => x.trace_id)).toEqual(["mad:42"]);
  });
});
