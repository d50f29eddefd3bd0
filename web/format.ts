/** Number and date formatting shared by the views. */

const int = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });

export const count = (n: number | null | undefined): string => (n === null || n === undefined ? "–" : int.format(n));

/** A fraction as a percentage: 0.123 → "12%" (one decimal below 10%). */
export function pct(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  const p = 100 * x;
  return `${p > 0 && p < 10 ? p.toFixed(1) : p.toFixed(0)}%`;
}

/** Percentage points with a sign: +12.3 pp. */
export function pp(x: number | null | undefined, digits = 1): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  const shown = Math.abs(x).toFixed(digits);
  // Sign after rounding, so -0.04 reads ±0.0, not −0.0.
  return `${Number(shown) === 0 ? "±" : x > 0 ? "+" : "−"}${shown}`;
}

/** An interval "[lo, hi]" in the same unit. */
export function interval(lo: number | null | undefined, hi: number | null | undefined, f: (x: number | null | undefined) => string): string {
  if (lo === null || lo === undefined || hi === null || hi === undefined) return "";
  return `[${f(lo)}, ${f(hi)}]`;
}

export function num(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return x.toFixed(digits);
}

/** A p or q value: 3 significant digits, "<0.001" below. */
export function pval(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return x < 0.001 ? "<0.001" : x.toPrecision(2);
}

export function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString("en-GB", { year: "numeric", month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit" });
}

/** A run id as shown: a hash (stores of version 1) cut to 8 digits; a run name (`examples-20260115-122609`) whole. */
export const shortId = (id: string): string => (/^[0-9a-f]{16}$/.test(id) ? id.slice(0, 8) : id);

/** A long string cut for a table cell (the full text goes in a title). */
export function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
