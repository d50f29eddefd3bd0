import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { CHATDEV_HEADER, chatdevModelName, looksLikeChatDev, segmentChatDev } from "./chatdev.js";

const log = (name: string) => readFileSync(corpus("chatdev", "WareHouse", name), "utf8");
const MAZE = "Maze_THUNLP_20231006154305/maze_DefaultOrganization_20231006154305.log";
const GOMOKU = "Gomoku_THUNLP_20230625201030/20230625201030.log";
const WEBSITE = "Website_THUNLP_20230725154612/20230725154612.log";

/** Lines of a section of the MAST few-shot examples file, from the first line matching `from` to the next `####`. */
function mastExampleFrom(title: string, from: RegExp): string {
  const lines = readFileSync(corpus("mast", "examples.txt"), "utf8").split("\n");
  const start = lines.indexOf(`### ${title} ###`);
  const first = lines.findIndex((l, i) => i > start && from.test(l));
  const end = lines.findIndex((l, i) => i > first && l.startsWith("#####"));
  return lines.slice(first, end).join("\n");
}

describe("ChatDev splitter", () => {
  it("accounts for every log record of a real run: a step, a usage record folded into its reply, or counted noise", () => {
    const text = log(MAZE);
    const seg = segmentChatDev(text)!;
    const headers = text.split("\n").filter((l) => CHATDEV_HEADER.test(l)).length;
    const noise = Object.values(seg.metadata.harnessNoise as Record<string, number>).reduce((a, b) => a + b, 0);
    const foldedUsage = seg.steps.filter((s) => s.usage && s.kind !== "llm_call").length;
    expect(seg.steps.length + noise + foldedUsage).toBe(headers);
    expect(seg.metadata.harnessNoise).toEqual({ flaskNotice: text.split("\n").filter((l) => l.endsWith("flask app.py did not start for online log")).length });
  });

  it("reads the Maze run: day-month timestamps, agents from role tags, model_type, task, Software Info", () => {
    const seg = segmentChatDev(log(MAZE))!;
    expect(seg.segmentation).toBe("framework");
    expect(seg.model).toBe("gpt-3.5-turbo");
    expect(seg.metadata.modelRaw).toBe("ModelType.GPT_3_5_TURBO");
    expect(seg.task?.text).toBe("please design a maze game");
    // `[2023-06-10 15:43:05 INFO]` is 6 October (the folder is …_20231006154305)
    expect(seg.steps[0]!.time).toBe("2023-10-06T15:43:05");
    const start = seg.steps.find((s) => s.tags?.includes("injected-context"))!;
    expect(start).toMatchObject({ agent: "Chief Executive Officer", role: "user", kind: "message" });
    // the first reply: the echoed role prompt in brackets is dropped, the answer stays
    const reply = seg.steps.find((s) => s.role === "assistant" && s.kind === "message")!;
    expect(reply).toMatchObject({ agent: "Chief Product Officer", text: "<INFO> Application", usage: { input: 429, output: 4 } });
    const info = seg.metadata.softwareInfo as Array<Record<string, unknown>>;
    expect(info.at(-1)).toMatchObject({ final: true, num_code_files: 2, code_lines: 71, num_utterances: 24, cost: 0.056264 });
    expect(seg.steps.find((s) => s.tags?.includes("test-report"))!.text).toContain("The software run successfully without errors.");
    expect(seg.steps.at(-1)!.kind).toBe("termination");
  });

  it("reads the older AgentTech logs (ANSI colour codes, `[0] AI Assistant (…)` tags, no model_type)", () => {
    const gomoku = segmentChatDev(log(GOMOKU))!;
    expect(gomoku.model).toBeUndefined();
    const first = gomoku.steps.find((s) => s.role === "assistant")!;
    expect(first).toMatchObject({ agent: "Chief Product Officer", kind: "message", text: "<INFO> GUI Application.", time: "2023-06-25T20:10:32" });
    expect(gomoku.steps.some((s) => s.text?.includes("\x1b"))).toBe(false);
    expect(gomoku.steps.at(-1)).toMatchObject({ kind: "termination", text: "AgentTech Ends (20230625201655)" });

    const website = segmentChatDev(log(WEBSITE))!;
    expect(website.task?.text).toMatch(/^Generate a website using html that shows the basic introduction of the Transformer model/);
    expect((website.metadata.softwareInfo as Array<Record<string, unknown>>).at(-1)).toMatchObject({ num_code_files: 0, code_lines: 0 });
    expect(website.steps.find((s) => s.kind === "message" && s.role === "system")).toMatchObject({ agent: "Chief Product Officer" });
  });

  it("splits the ChatDev excerpt of MAST's few-shot examples (2025 log, HTTP request noise)", () => {
    const seg = segmentChatDev(mastExampleFrom("Weak Verification", /^\[2025-/))!;
    expect(seg.steps[0]!.time).toBe("2025-01-17T11:37:52");
    expect(seg.metadata.harnessNoise).toMatchObject({ httpRequest: 1 });
    const review = seg.steps.find((s) => s.agent === "Code Reviewer" && s.role === "assistant")!;
    expect(review.text).toMatch(/^The code is mostly well-structured/);
    expect(review.usage).toEqual({ input: 1554, output: 331 });
  });

  it("does not claim text that merely contains a ChatDev line, and reads month-first headers", () => {
    expect(looksLikeChatDev(readFileSync(corpus("mast", "examples.txt"), "utf8"))).toBe(false);
    expect(segmentChatDev("[2024-01-02 10:00:00 INFO] just a log line\n")).toBeUndefined();
    const seg = segmentChatDev("[2024-03-25 10:00:00 INFO] Programmer: **Programmer<->CTO on : Coding, turn 0**\n\nhello\n")!;
    expect(seg.steps).toEqual([{ agent: "Programmer", role: "assistant", kind: "message", text: "hello", time: "2024-03-25T10:00:00", ref: { line: 1 } }]);
    expect(chatdevModelName("ModelType.GPT_4O_MINI")).toBe("gpt-4o-mini");
  });
});
