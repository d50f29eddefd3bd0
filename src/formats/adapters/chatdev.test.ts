import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { readAll } from "../read.js";

describe("chatdev adapter (corpus)", async () => {
  const { traces, files, diagnostics } = await readAll(corpus("chatdev"));

  it("reads the 3 runs of the MANIFEST, one trace per log, named by their WareHouse folder", () => {
    expect(traces).toHaveLength(3);
    expect(traces.map((t) => t.id)).toEqual(["Gomoku_THUNLP_20230625201030", "Maze_THUNLP_20231006154305", "Website_THUNLP_20230725154612"]);
    expect(files.filter((f) => f.role === "refused")).toEqual([]);
    expect(diagnostics.filter((d) => d.level === "error" || d.level === "warning")).toEqual([]);
    expect(traces.every((t) => t.framework === "chatdev" && t.outcome === undefined)).toBe(true);
  });

  it("takes the model from model_type and the Software Info summaries into metadata", () => {
    const maze = traces.find((t) => t.id.startsWith("Maze"))!;
    expect(maze.model).toBe("gpt-3.5-turbo");
    expect(maze.metadata.modelRaw).toBe("ModelType.GPT_3_5_TURBO");
    expect(maze.task?.text).toBe("please design a maze game");
    expect(maze.metadata.finalSoftwareInfo).toMatchObject({ num_code_files: 2, code_lines: 71, version_updates: 5 });
    expect(maze.agents).toEqual(expect.arrayContaining(["Chief Executive Officer", "Chief Product Officer", "Chief Technology Officer", "Programmer", "Code Reviewer", "Counselor"]));
    // the Website run produced no code, as its last Software Info says
    expect(traces.find((t) => t.id.startsWith("Website"))!.metadata.finalSoftwareInfo).toMatchObject({ num_code_files: 0 });
    expect(traces.find((t) => t.id.startsWith("Gomoku"))!.model).toBeUndefined();
  });

  it("refuses a file forced to chatdev that is not a ChatDev log, naming the file and line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-chatdev-"));
    const path = join(dir, "notes.log");
    writeFileSync(path, "ChatDev notes\n[2023-25-06 20:10:30 INFO] AgentTech Starts\n");
    const r = await readAll(path, { format: "chatdev" });
    expect(r.traces).toEqual([]);
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ file: path, line: 1, level: "error", skipped: "file" }));
    // without forcing, it is not mistaken for a log
    expect((await readAll(path)).files[0]!.role).toBe("skipped");
  });
});
