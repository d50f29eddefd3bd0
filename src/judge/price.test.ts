import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { costUsd } from "./client.js";
import { loadPriceTable, parsePriceTable, priceFor, PriceTableError } from "./price.js";

const dir = mkdtempSync(join(tmpdir(), "fl-price-"));

describe("price table", () => {
  const file = join(dir, "prices.json");
  writeFileSync(
    file,
    JSON.stringify({
      $comment: "USD per million tokens, checked 2026-01",
      "gpt-4o-mini": { input_per_mtok: 0.15, output_per_mtok: 0.6 },
      "gpt-4o*": { input_per_mtok: 2.5, output_per_mtok: 10 },
      "gpt-*": { input_per_mtok: 1, output_per_mtok: 4 },
      "*": { input_per_mtok: 0, output_per_mtok: 0 },
    }),
  );
  const table = loadPriceTable(file);

  it("loads the documented shape and skips $-keys", () => {
    expect(table.entries.map((e) => e.pattern)).toEqual(["gpt-4o-mini", "gpt-4o*", "gpt-*", "*"]);
  });

  it("prefers the exact name, then the most specific pattern", () => {
    expect(priceFor(table, "gpt-4o-mini")).toEqual({ inputPerMTok: 0.15, outputPerMTok: 0.6 });
    expect(priceFor(table, "gpt-4o-2024-08-06")).toEqual({ inputPerMTok: 2.5, outputPerMTok: 10 });
    expect(priceFor(table, "gpt-5")).toEqual({ inputPerMTok: 1, outputPerMTok: 4 });
    expect(priceFor(table, "llama3.1:8b")).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
    // pattern characters other than * are literal
    expect(priceFor(parsePriceTable('{"a.b*": {"input_per_mtok": 1, "output_per_mtok": 1}}', "t.json"), "aXb-1")).toBeUndefined();
    expect(priceFor(parsePriceTable("{}", "t.json"), "gpt-4o")).toBeUndefined();
  });

  it("gives the cost of a usage", () => {
    const price = priceFor(table, "gpt-4o-mini");
    expect(costUsd({ input: 2_000_000, output: 500_000, reportedCalls: 1, estimatedCalls: 0 }, price)).toBeCloseTo(0.3 + 0.3, 12);
  });

  it("names the file and the key on bad input", () => {
    expect(() => parsePriceTable("{", "p.json")).toThrow(/^p\.json: not JSON/);
    expect(() => parsePriceTable("[]", "p.json")).toThrow(/p\.json: expected an object/);
    expect(() => parsePriceTable('{"m": {"input_per_mtok": -1, "output_per_mtok": 1}}', "p.json")).toThrow(/p\.json: "m": input_per_mtok/);
    expect(() => parsePriceTable('{"m": {"input": 1, "output": 2}}', "p.json")).toThrow(PriceTableError);
    expect(() => parsePriceTable('{"m": {"input_per_mtok": 1}}', "p.json")).toThrow(/"m": output_per_mtok/);
    expect(() => loadPriceTable(join(dir, "missing.json"))).toThrow(/missing\.json: cannot read the price table: ENOENT/);
  });
});
