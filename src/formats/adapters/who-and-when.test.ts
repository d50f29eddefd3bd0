import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import type { Trace } from "../../trace/index.js";
import { readAll } from "../read.js";

const byTaskId = (traces: Trace[], id: string, variant: string) => {
  const t = traces.find((x) => x.task?.id === id && x.metadata.variant === variant);
  if (!t) throw new Error(`no trace for task ${id}`);
  return t;
};

describe("who-and-when on the corpus", () => {
  let result: Awaited<ReturnType<typeof readAll>>;
  beforeAll(async () => {
    result = await readAll(corpus("who_and_when"));
  });

  it("reads all 184 traces: 126 Algorithm-Generated (AG2) and 58 Hand-Crafted (Magentic-One), without errors", () => {
    const { traces, files, diagnostics } = result;
    expect(traces).toHaveLength(184);
    expect(traces.filter((t) => t.framework === "ag2" && t.source.file.includes("/Algorithm-Generated/"))).toHaveLength(126);
    expect(traces.filter((t) => t.framework === "magentic-one" && t.source.file.includes("/Hand-Crafted/"))).toHaveLength(58);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    expect(traces.every((t) => t.source.format === "who-and-when" && t.outcome?.success === false)).toBe(true);
    // 45 question_IDs occur in both variants; the ids stay distinct without the reader's #n suffix
    expect(traces.filter((t) => t.metadata.originalId !== undefined)).toEqual([]);
  });

  it("maps one step per history item and keeps every label's 0-based step as the canonical index", () => {
    for (const folder of ["Algorithm-Generated", "Hand-Crafted"]) {
      for (const name of readdirSync(corpus("who_and_when", folder))) {
        const raw = JSON.parse(readFileSync(corpus("who_and_when", folder, name), "utf8"));
        const t = byTaskId(result.traces, raw.question_ID, folder.toLowerCase());
        // an AG2 history cut at the 10-message cap has one more step after its own: the step-limit termination
        const cut = folder === "Algorithm-Generated" && raw.history.length === 10 && !/TERMINATE\s*$/.test(raw.history.at(-1).content ?? "");
        expect(t.steps).toHaveLength(raw.history.length + (cut ? 1 : 0));
        expect(t.steps.slice(0, raw.history.length).every((s, i) => s.ref?.pointer === `/history/${i}`)).toBe(true);
        const gold = t.goldLabels![0]!;
        expect(gold.source).toBe("who_and_when");
        expect(gold.mistakeStep).toBe(Number(raw.mistake_step));
        expect(gold.mistakeAgent!.toLowerCase()).toBe(String(raw.mistake_agent).toLowerCase());
        expect(gold.mistakeReason).toBe(raw.mistake_reason);
      }
    }
  });

  it("parses Magentic-One roles in Hand-Crafted 1.json and its label (WebSurfer, step 12)", () => {
    const t = byTaskId(result.traces, "6e3be83d1949fa52cba03fb1ce4b5b3bf7e37a83fd7d67694b10b2e439d90cf8", "hand-crafted");
    expect(t.id).toBe("who_and_when:hand-crafted:6e3be83d1949fa52cba03fb1ce4b5b3bf7e37a83fd7d67694b10b2e439d90cf8");
    expect(t.task?.expected).toBe("Renzo Gracie Jiu-Jitsu Wall Street");
    expect(t.goldLabels![0]).toMatchObject({ mistakeAgent: "WebSurfer", mistakeStep: 12 });
    expect(t.steps[12]).toMatchObject({ agent: "WebSurfer", role: "assistant", kind: "message" });
    expect(t.steps[12]!.text!.startsWith("I clicked 'NY Jidokwan Taekwondo'.")).toBe(true);
    expect(t.steps[0]).toMatchObject({ agent: "user", role: "user", kind: "message" });
    expect(t.steps[1]).toMatchObject({ agent: "Orchestrator", kind: "reasoning" });
    expect(t.steps[3]).toMatchObject({ agent: "Orchestrator", kind: "handoff", tool: { name: "handoff", args: { to: "WebSurfer" } } });
    expect(t.steps.filter((s) => s.kind === "termination")).toHaveLength(0);
  });

  it("normalises the label spelling Websurfer to the agent WebSurfer (Hand-Crafted 13.json)", () => {
    const raw = JSON.parse(readFileSync(corpus("who_and_when", "Hand-Crafted", "13.json"), "utf8"));
    expect(raw.mistake_agent).toBe("Websurfer");
    const t = byTaskId(result.traces, raw.question_ID, "hand-crafted");
    expect(t.goldLabels![0]!.mistakeAgent).toBe("WebSurfer");
    expect(t.steps[12]!.agent).toBe("WebSurfer");
  });

  it("reads termination steps and ComputerTerminal exit codes", () => {
    const terminations = result.traces.flatMap((t) => t.steps.filter((s) => s.kind === "termination" && s.ref?.pointer !== "/history"));
    expect(terminations).toHaveLength(31);
    const hc58 = byTaskId(result.traces, JSON.parse(readFileSync(corpus("who_and_when", "Hand-Crafted", "58.json"), "utf8")).question_ID, "hand-crafted");
    expect(hc58.steps[67]).toMatchObject({ agent: "ComputerTerminal", role: "tool", kind: "tool_result", tool: { exitCode: 0, isError: false } });
  });

  it("maps Algorithm-Generated 1.json: named AG2 experts, Computer_terminal results, label at step 0", () => {
    const t = byTaskId(result.traces, "4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2", "algorithm-generated");
    expect(t.framework).toBe("ag2");
    expect(t.task?.expected).toBe("8");
    expect(t.goldLabels![0]).toMatchObject({ mistakeAgent: "Excel_Expert", mistakeStep: 0 });
    expect(t.steps[0]).toMatchObject({ agent: "Excel_Expert", role: "assistant" });
    expect(t.steps[1]).toMatchObject({ agent: "Computer_terminal", kind: "tool_result", tool: { name: "Computer_terminal", exitCode: 0 } });
    expect(t.steps[5]).toMatchObject({ agent: "DataVerification_Expert", text: "TERMINATE" });
    expect(Object.keys(t.metadata.systemPrompts as object)).toContain("Excel_Expert");
    expect(t.metadata.level).toBe("2");
  });

  it("keeps the one mistake category an Algorithm-Generated file has (30.json labels)", () => {
    const raw = JSON.parse(readFileSync(corpus("who_and_when", "Algorithm-Generated", "30.json"), "utf8"));
    const t = byTaskId(result.traces, raw.question_ID, "algorithm-generated");
    expect(t.goldLabels![0]!.failures).toEqual([expect.objectContaining({ category: "Factual_Error", rootCause: true, step: Number(raw.mistake_step) })]);
  });
});

describe("who-and-when on malformed and AgenTracer input", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-ww-"));

  it("reports a label past the end of history and a non-object item, and keeps the trace", async () => {
    const p = join(dir, "bad.json");
    writeFileSync(
      p,
      JSON.stringify({
        is_corrected: false, question: "q", question_ID: "q1", ground_truth: "a", mistake_agent: "websurfer", mistake_step: "7", mistake_reason: "r",
        history: [{ content: "task", role: "human" }, { content: "plan", role: "Orchestrator (thought)" }, 42],
      }),
    );
    const { traces, diagnostics } = await readAll(p);
    expect(traces).toHaveLength(1);
    expect(traces[0]!.steps).toHaveLength(3);
    expect(traces[0]!.steps[2]).toMatchObject({ kind: "event", text: "42" });
    expect(traces[0]!.goldLabels![0]!.mistakeStep).toBeUndefined();
    expect(traces[0]!.goldLabels![0]!.mistakeAgent).toBe("WebSurfer"); // Magentic-One spelling even with no WebSurfer step
    expect(diagnostics.map((d) => d.message)).toEqual(
      expect.arrayContaining([expect.stringContaining("item 2 has no role"), expect.stringContaining("mistake_step 7 is past the end")]),
    );
  });

  it("reads AgenTracer JSONL rows (integer step per item) and skips a row without history", async () => {
    const p = join(dir, "tracer.jsonl");
    const row = (id: string) => ({
      question_ID: id, question: "build it", ground_truth: "ok", mistake_agent: "engineer", mistake_step: "1", mistake_reason: "bug",
      history: [{ content: "plan", name: "Team Leader", role: "user", step: 0 }, { content: "code", name: "Engineer", role: "assistant", step: 1 }],
    });
    writeFileSync(p, [JSON.stringify(row("a_attacked_1")), JSON.stringify({ question_ID: "x", mistake_agent: "a", mistake_step: "0" }), JSON.stringify(row("b"))].join("\n"));
    const { traces, diagnostics } = await readAll(p);
    expect(traces.map((t) => t.id)).toEqual(["agentracer:a_attacked_1", "agentracer:b"]);
    expect(traces[0]!.goldLabels![0]).toMatchObject({ source: "agentracer", mistakeAgent: "Engineer", mistakeStep: 1 });
    expect(traces[0]!.steps[1]!.ref).toMatchObject({ original: 1, line: 1 });
    expect(diagnostics.find((d) => d.level === "error")).toMatchObject({ line: 2, skipped: "trace" });
  });
});
