import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { profileSimilarity, textProfile, textSimilarity } from "../guards/equivalence.js";
import { jaccard, wordGrams, words } from "./similarity.js";

describe("text similarity: one Jaccard measure over word n-grams", () => {
  it("n-grams and Jaccard", () => {
    expect([...wordGrams(["a", "b", "c", "d"], 3)]).toEqual(["a b c", "b c d"]);
    expect(wordGrams(["a", "b"], 3).size).toBe(0);
    expect(jaccard(new Set(["x", "y"]), new Set(["y", "z"]))).toBeCloseTo(1 / 3, 12);
    expect(jaccard(new Set(), new Set(["y"]))).toBe(0);
    expect(words("Déjà vu, ÉTÉ_2 x")).toEqual(["déjà", "vu", "été_2", "x"]);
  });

  it("the loop guard's message similarity is that measure on word bigrams (words for texts under three words)", () => {
    const a = "I will now check the deployment status again";
    const b = "I will now check the deployment logs again";
    expect(textSimilarity(a, b)).toBe(jaccard(wordGrams(words(a), 2), wordGrams(words(b), 2)));
    expect(profileSimilarity(textProfile("ok done"), textProfile("done"))).toBe(0.5);
    expect(textSimilarity("Same text.", "same   TEXT")).toBe(1);
  });

  it("no other source file computes a Jaccard overlap of its own", () => {
    const src = join(import.meta.dirname, "..");
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    const own = files.filter((f) => /\.size\s*\+\s*\w+(\.\w+)?\.size\s*-\s*\w+/.test(readFileSync(join(src, f), "utf8"))).map((f) => relative(src, join(src, f)));
    expect(own).toEqual(["trace/similarity.ts"]);
  });
});
