import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { crosswalk, loadTaxonomy, mast, MAST_CODES, MAST_V3, roundOf, Taxonomy } from "./index.js";

describe("MAST v3 as data", () => {
  it("has the paper's 14 modes in 3 categories, in code order", () => {
    expect(MAST_CODES).toEqual(["1.1", "1.2", "1.3", "1.4", "1.5", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "3.1", "3.2", "3.3"]);
    expect(mast.categories.map((c) => [c.id, c.name])).toEqual([["FC1", "System Design Issues"], ["FC2", "Inter-Agent Misalignment"], ["FC3", "Task Verification"]]);
    expect(mast.modes.filter((m) => m.category === "FC1")).toHaveLength(5);
    expect(mast.modes.filter((m) => m.category === "FC2")).toHaveLength(6);
    expect(mast.version).toBe("mast-v3");
  });

  it("pins 3.2 and 3.3 to the paper's meaning", () => {
    expect(mast.mode("3.2")!.name).toBe("No or incomplete verification");
    expect(mast.mode("3.3")!.name).toBe("Incorrect verification");
    // the swapped names of other artefacts are not aliases: they would point to the wrong code
    expect(mast.normalize("Weak Verification")).toBeUndefined();
    expect(mast.normalize("No or Incorrect Verification")).toBeUndefined();
  });

  it("normalises codes, FM- codes, names and aliases seen in the wild", () => {
    expect(mast.normalize("FM-1.3")).toBe("1.3");
    expect(mast.normalize("fm_2.6")).toBe("2.6");
    expect(mast.normalize("Action-Reasoning Mismatch")).toBe("2.6");
    expect(mast.normalize("reasoning action mismatch")).toBe("2.6");
    expect(mast.normalize("Information Witholding")).toBe("2.4");
    expect(mast.normalize("Ignored Other Agents' Input")).toBe("2.5");
    expect(mast.normalize("Unaware of Stopping Conditions")).toBe("1.5");
    expect(mast.normalize("1.5 Unaware of Termination Conditions")).toBe("1.5");
    expect(mast.normalize("9.9")).toBeUndefined();
    expect(mast.normalize("1.6")).toBeUndefined();
  });

  it("maps MAD human-file legacy codes through the crosswalk", () => {
    expect(roundOf("Round 1")).toBe("round1");
    expect(roundOf("Round 3")).toBe("round2-3");
    expect(roundOf("Generlazability")).toBe("final");
    expect(crosswalk("round1", "2.2")).toBe("1.3"); // Round-1 2.2 is step repetition
    expect(crosswalk("round1", "3.4")).toBeNull(); // waiting for known information: no v3 equivalent
    expect(crosswalk("round2-3", "3.2")).toBe("3.3"); // weak verifier, by meaning
    expect(crosswalk("final", "2.2")).toBe("2.2");
  });

  it("loads and validates a custom taxonomy from JSON, naming the file and the field", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-tax-"));
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ id: "mini", version: "mini-1", title: "Mini", categories: [{ id: "A", name: "All" }], modes: [{ code: "1.1", name: "Looping", category: "A", definition: "Repeats itself.", aliases: ["loop"] }] }));
    const t = loadTaxonomy(good);
    expect(t.codes).toEqual(["1.1"]);
    expect(t.normalize("LOOP")).toBe("1.1");
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ...MAST_V3, modes: [{ code: "x", name: "n", category: "FC9", definition: "d" }] }));
    expect(() => loadTaxonomy(bad)).toThrow(/bad\.json: invalid taxonomy — modes\.0\.code: a mode code looks like 1\.3/);
    expect(() => new Taxonomy({ ...MAST_V3, modes: [...MAST_V3.modes, MAST_V3.modes[0]!] })).toThrow(/duplicate code 1\.1/);
  });
});
