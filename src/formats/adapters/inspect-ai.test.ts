import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

describe("inspect-ai adapter (corpus)", async () => {
  const { traces, files, diagnostics } = await readAll(corpus("inspect-ai"));
  const of = (task: string) => traces.filter((t) => t.task?.benchmark === task);

  it("reads the 14 samples of the MANIFEST from .json and zipped .eval logs", () => {
    expect(traces).toHaveLength(14);
    expect(files.filter((f) => f.format === "inspect-ai").map((f) => f.traces)).toEqual([1, 3, 10]);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    expect(new Set(traces.map((t) => t.model))).toEqual(new Set(["gpt-4o-mini"]));
    expect(traces[0]!.metadata.modelRaw).toBe("openai/gpt-4o-mini");
  });

  it("takes the outcome from the scores: browser 1 C, security_guide 3 C, popularity 8 C / 2 I", () => {
    const tally = (ts: typeof traces) => [ts.filter((t) => t.outcome?.success === true).length, ts.filter((t) => t.outcome?.success === false).length];
    expect(tally(of("browser"))).toEqual([1, 0]);
    expect(tally(of("security_guide"))).toEqual([3, 0]);
    expect(tally(of("popularity"))).toEqual([8, 2]);
    const wrong = of("popularity").find((t) => t.outcome?.success === false)!;
    expect(wrong.outcome).toMatchObject({ score: 0, metric: "match", raw: { match: { value: "I" } } });
    expect(of("popularity").map((t) => t.id)).toEqual(Array.from({ length: 10 }, (_, i) => `popularity/${i + 1}/1`));
  });

  it("maps the browser agent's messages to steps with tool calls linked to results", () => {
    const t = of("browser")[0]!;
    expect(t.id).toBe("browser/1/1");
    expect(t.task?.text).toMatch(/^Use the web browser tool to navigate to https:\/\/www\.aisi\.gov\.uk\//);
    const go = t.steps.find((s) => s.kind === "tool_call")!;
    expect(go).toMatchObject({ model: "gpt-4o-mini-2024-07-18", tool: { name: "web_browser_go", callId: "call_35FTpd6shR9efioDgeEBZ33s", args: { url: "https://www.aisi.gov.uk/" } } });
    const result = t.steps[go.tool!.resultIndex!]!;
    expect(result).toMatchObject({ kind: "tool_result", agent: "web_browser_go", tool: { callIndex: go.index } });
    expect(result.text).toMatch(/^\[132\] link "We are now the AI Security Institute"/);
    expect(t.steps.filter((s) => s.kind === "tool_call").map((s) => s.tool!.name)).toEqual(["web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click"]);
    expect(t.steps.at(-1)!.text).toMatch(/^The AI Security Institute \(AISI\) is the premier governmental organization/);
    expect(t.metadata.eventCounts).toMatchObject({ tool: 4, model: 5 });
  });

  it("reports a corrupt sample of a .eval zip and reads the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-inspect-"));
    const path = join(dir, "run.eval");
    const header = { version: 2, status: "success", eval: { task: "demo", model: "anthropic/claude-x" } };
    const sample = { id: 1, epoch: 1, input: "2+2?", target: "4", messages: [{ role: "user", content: "2+2?" }, { role: "assistant", content: [{ type: "reasoning", reasoning: "add" }, { type: "text", text: "4" }] }], scores: { match: { value: "C" } } };
    writeFileSync(path, zipSync({ "header.json": strToU8(JSON.stringify(header)), "samples/1_epoch_1.json": strToU8(JSON.stringify(sample)), "samples/2_epoch_1.json": strToU8('{"id": 2, "epoch"') }));
    const r = await readAll(path);
    expect(r.files[0]).toMatchObject({ format: "inspect-ai", traces: 1 });
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ level: "error", skipped: "trace", message: expect.stringMatching(/^samples\/2_epoch_1\.json: invalid JSON/) }));
    expect(r.traces[0]!.steps.map((s) => [s.kind, s.text])).toEqual([
      ["message", "2+2?"],
      ["reasoning", "add"],
      ["message", "4"],
    ]);
    expect(r.traces[0]).toMatchObject({ id: "demo/1/1", model: "claude-x", outcome: { success: true } });
  });
});
