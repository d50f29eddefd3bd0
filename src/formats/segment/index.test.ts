import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import { segmentTrajectory } from "./index.js";

const human = JSON.parse(readFileSync(corpus("mast", "mad_human_sample.json"), "utf8")) as Array<{ trace_id: number; mas_name: string; trace: string }>;

describe("segmentTrajectory", () => {
  it("picks the framework's splitter for every MAD human record, with or without the mas_name hint", () => {
    for (const r of human) {
      const hinted = segmentTrajectory(r.trace, r.mas_name);
      expect(hinted.splitter).toBe(r.mas_name.toLowerCase());
      expect(hinted.metadata.segmentation).toBe("framework");
      expect(segmentTrajectory(r.trace).steps).toEqual(hinted.steps);
    }
  });

  it("reads a ChatDev log named as ChatDev", () => {
    const text = readFileSync(corpus("chatdev", "WareHouse", "Gomoku_THUNLP_20230625201030", "20230625201030.log"), "utf8");
    expect(segmentTrajectory(text, "ChatDev")).toMatchObject({ splitter: "chatdev", segmentation: "framework" });
  });

  it("falls back to heuristic splitting, and says so when the named framework's pattern did not match", () => {
    const seg = segmentTrajectory("Orchestrator: plan\n\nWebSurfer: clicked", "ChatDev");
    expect(seg.segmentation).toBe("heuristic");
    expect(seg.metadata).toMatchObject({ segmentation: "heuristic", segmentationNote: "the text did not match the ChatDev pattern; split heuristically" });
    expect(seg.steps.map((s) => s.agent)).toEqual(["Orchestrator", "WebSurfer"]);
    expect(segmentTrajectory("a\n\nb", "Magentic").metadata.segmentationNote).toBeUndefined();
  });

  it("notes a named framework whose text matched another splitter", () => {
    const metagpt = human.find((r) => r.mas_name === "MetaGPT")!.trace;
    const seg = segmentTrajectory(metagpt, "AG2");
    expect(seg.splitter).toBe("metagpt");
    expect(seg.metadata.segmentationNote).toBe("named AG2, but the text matched the metagpt pattern");
  });
});
