/**
 * The id of a MAST-Data (MAD) full-format record: `mad:<trace.key>:<trace_id>`, or `mad:<trace_id>` when the record
 * has no `trace.key`. `trace_id` alone is not unique in MAD_full_dataset.json; the key is (`trace.key`, `trace_id`).
 *
 * One rule for both readers of that file: the mast-data adapter names its traces with it, and the label loader
 * (src/analysis/labels.ts) names its label rows with it, so `faultline eval --reference MAD.json` finds the findings
 * of those traces. Undefined when the record has no usable `trace_id`.
 */
export function madTraceId(rec: Record<string, unknown>): string | undefined {
  const id = rec.trace_id;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const trace = rec.trace;
  const key = typeof trace === "object" && trace !== null && !Array.isArray(trace) ? (trace as Record<string, unknown>).key : undefined;
  return typeof key === "string" || typeof key === "number" ? `mad:${key}:${id}` : `mad:${id}`;
}
