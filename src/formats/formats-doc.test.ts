import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ADAPTERS } from "./registry.js";

/** docs/formats.md is the user's reference of every format: it must follow the registry, not drift from it. */
describe("docs/formats.md", () => {
  const doc = readFileSync(fileURLToPath(new URL("../../docs/formats.md", import.meta.url)), "utf8");

  it("has one section per adapter, in detection order", () => {
    const sections = [...doc.matchAll(/^## `([^`]+)`/gm)].map((m) => m[1]);
    expect(sections).toEqual(ADAPTERS.map((a) => a.id));
  });

  it("lists every adapter in the detection-order table, in order", () => {
    const rows = [...doc.matchAll(/^\| (\d+) \| `([^`]+)` \|/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(rows).toEqual(ADAPTERS.map((a, i) => [i + 1, a.id]));
  });
});
