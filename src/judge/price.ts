import { readFileSync } from "node:fs";
import { z } from "zod";
import type { ProviderConfig } from "./client.js";

/**
 * Prices for cost accounting, from a JSON file (`faultline judge --price-table prices.json`):
 *
 *   {
 *     "gpt-4o-mini": { "input_per_mtok": 0.15, "output_per_mtok": 0.6 },
 *     "claude-*":    { "input_per_mtok": 3,    "output_per_mtok": 15 }
 *   }
 *
 * Keys are model names as passed to `--model`; `*` matches any run of characters. An exact key wins, otherwise the
 * matching pattern with the most literal characters. Prices are USD per million tokens. Keys starting with `$` are
 * comments (`"$comment": "…"`, `"$source": "https://…"`) and are ignored. faultline ships no prices: they change.
 */

export type Price = NonNullable<ProviderConfig["price"]>;

export interface PriceTable {
  file: string;
  entries: { pattern: string; price: Price }[];
}

const EntrySchema = z.strictObject({
  input_per_mtok: z.number().nonnegative(),
  output_per_mtok: z.number().nonnegative(),
});

export class PriceTableError extends Error {}

/** Parses a price table; every problem names the file and the key. */
export function parsePriceTable(text: string, file: string): PriceTable {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new PriceTableError(`${file}: not JSON: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new PriceTableError(`${file}: expected an object mapping model names to {"input_per_mtok", "output_per_mtok"}`);
  const entries: PriceTable["entries"] = [];
  for (const [pattern, value] of Object.entries(raw as Record<string, unknown>)) {
    if (pattern.startsWith("$")) continue;
    const r = EntrySchema.safeParse(value);
    if (!r.success) {
      const why = r.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "value"}: ${i.message}`).join("; ");
      throw new PriceTableError(`${file}: "${pattern}": ${why} (expected {"input_per_mtok": number, "output_per_mtok": number}, USD per million tokens)`);
    }
    entries.push({ pattern, price: { inputPerMTok: r.data.input_per_mtok, outputPerMTok: r.data.output_per_mtok } });
  }
  return { file, entries };
}

export function loadPriceTable(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new PriceTableError(`${file}: cannot read the price table: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parsePriceTable(text, file);
}

const globToRegExp = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);

/** The price of `model`: the exact key, else the most specific matching `*` pattern; undefined when none matches. */
export function priceFor(table: PriceTable, model: string): Price | undefined {
  const exact = table.entries.find((e) => e.pattern === model);
  if (exact) return exact.price;
  const matches = table.entries
    .filter((e) => e.pattern.includes("*") && globToRegExp(e.pattern).test(model))
    .sort((a, b) => b.pattern.replace(/\*/g, "").length - a.pattern.replace(/\*/g, "").length);
  return matches[0]?.price;
}
