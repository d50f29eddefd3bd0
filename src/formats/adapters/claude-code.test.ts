import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

describe("claude-code adapter (corpus)", async () => {
  const { traces, files, diagnostics } = await readAll(corpus("claude-code"));
  const session = (dir: string) => traces.find((t) => t.source.file.includes(dir))!;

  it("reads the 4 sessions of the MANIFEST; metadata.json and prompt.txt are supporting files", () => {
    expect(traces).toHaveLength(4);
    expect(files.filter((f) => f.path.endsWith("metadata.json") || f.path.endsWith("prompt.txt")).every((f) => f.role === "supporting")).toBe(true);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    expect(traces.map((t) => t.model)).toEqual(["claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-opus-4-6"]);
    // tool_result.is_error per session, as the MANIFEST counts them
    expect(traces.map((t) => t.steps.filter((s) => s.tool?.isError === true).length)).toEqual([2, 8, 0, 1]);
  });

  it("joins metadata.json by session id and takes prompt.txt as the task", () => {
    const t = session("0c/c3173e5050/2");
    expect(t.id).toBe("4efcdcef-7acb-46ab-bd4a-59763e574cc4");
    expect(t.task?.text).toBe(readFileSync(corpus("claude-code", "0c", "c3173e5050", "2", "prompt.txt"), "utf8").trim());
    expect(t.metadata.entire).toMatchObject({ checkpointId: "0cc3173e5050", filesTouched: ["CLAUDE.md", "docs/agent_skills.md", "documentation/agent_skills.md"] });
    expect(t.source.sidecars).toHaveLength(2);
    expect(t.metadata.bookkeepingLines).toMatchObject({ "progress:hook_progress": 7, "file-history-snapshot": 4 });
  });

  it("maps thinking, text and tool_use blocks, linking each tool_use to its tool_result", () => {
    const t = session("0c/c3173e5050/2");
    const read = t.steps.find((s) => s.kind === "tool_call")!;
    expect(read).toMatchObject({ agent: "claude-code", model: "claude-opus-4-6", tool: { name: "Read", callId: "toolu_01EpL2jR1zgVymDVsXbynPYP", args: { file_path: "/Users/ob1/projects/opus-hackathon/napoli-matcha/CLAUDE.md" } } });
    const result = t.steps[read.tool!.resultIndex!]!;
    expect(result).toMatchObject({ kind: "tool_result", role: "tool", tool: { name: "Read", callIndex: read.index } });
    expect(result.tool!.isError).toBeUndefined(); // this result carries no is_error flag
    expect(result.text).toMatch(/^ {5}1→# TypeScript \/ OOP Code Style/);
    expect(t.steps.find((s) => s.kind === "reasoning")!.text).toMatch(/^The user wants me to analyze the DeepWiki conversation/);
    // the user's follow-up typed alongside a tool result stays a user message
    expect(t.steps.some((s) => s.role === "user" && s.text === "Edit plan to NOT mention Instructor in the CLAUDE.md file. Use Instructor as a model example, that's all.")).toBe(true);
    // usage once per API message: the first message's first step has it
    expect(t.steps.find((s) => s.role === "assistant")!.usage).toMatchObject({ cachedInput: 19804 });
    expect(t.steps.find((s) => s.tags?.includes("injected-context"))!.text).toMatch(/^<local-command-caveat>/);
  });

  it("reports a broken line with its number and keeps the rest of the session", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-cc-"));
    const path = join(dir, "session.jsonl");
    const base = { sessionId: "s-1", isSidechain: false, timestamp: "2026-01-01T00:00:00Z" };
    const lines = [
      JSON.stringify({ ...base, type: "user", uuid: "u1", message: { role: "user", content: "list files" } }),
      JSON.stringify({ ...base, type: "assistant", uuid: "a1", message: { model: "claude-x", id: "m1", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }], usage: { input_tokens: 5, output_tokens: 2 } } }),
      '{"type": "user", "uuid": "u2", "message": {"content": [',
      JSON.stringify({ ...base, type: "user", uuid: "u3", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ls: denied", is_error: true }] } }),
      JSON.stringify({ ...base, type: "user", uuid: "u3", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ls: denied", is_error: true }] } }),
    ];
    writeFileSync(path, lines.join("\n") + "\n");
    const r = await readAll(path);
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ level: "error", line: 3, skipped: "line" }));
    const t = r.traces[0]!;
    expect(t.steps.map((s) => s.kind)).toEqual(["message", "tool_call", "tool_result"]);
    expect(t.steps[2]!.tool).toMatchObject({ name: "Bash", isError: true, callIndex: 1 });
    expect(t.metadata).toMatchObject({ duplicateLines: 1, toolErrors: 1 });
    expect(t.task?.text).toBe("list files");
  });
});
