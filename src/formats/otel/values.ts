import { isObj, str } from "../common/index.js";
import { sanitizeValue } from "../io/sanitize.js";

/**
 * Low-level OpenTelemetry value readers shared by every OTel-family adapter: OTLP `AnyValue` attributes (camel and
 * snake case), trace/span ids (hex, `0x` hex, base64), span times (nanosecond strings, numbers, hrtime pairs, ISO),
 * and OpenInference's flattened indexed keys.
 */

/** One OTLP `AnyValue` → plain JS. `intValue` arrives as a decimal string; it stays a string when not a safe integer. */
export function decodeAnyValue(v: unknown): unknown {
  if (!isObj(v)) return v;
  const pick = (camel: string, snake: string) => (camel in v ? v[camel] : v[snake]);
  if ("stringValue" in v || "string_value" in v) return pick("stringValue", "string_value");
  if ("boolValue" in v || "bool_value" in v) return pick("boolValue", "bool_value");
  if ("intValue" in v || "int_value" in v) {
    const raw = pick("intValue", "int_value");
    const n = typeof raw === "number" ? raw : typeof raw === "string" && /^-?\d+$/.test(raw) ? Number(raw) : undefined;
    return n !== undefined && Number.isSafeInteger(n) ? n : raw;
  }
  if ("doubleValue" in v || "double_value" in v) {
    const raw = pick("doubleValue", "double_value");
    return typeof raw === "string" && raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  if ("arrayValue" in v || "array_value" in v) {
    const a = pick("arrayValue", "array_value");
    const values = isObj(a) && Array.isArray(a.values) ? a.values : [];
    return values.map(decodeAnyValue);
  }
  if ("kvlistValue" in v || "kvlist_value" in v) {
    const kv = pick("kvlistValue", "kvlist_value");
    return attributesToRecord(isObj(kv) ? kv.values : undefined);
  }
  if ("bytesValue" in v || "bytes_value" in v) return pick("bytesValue", "bytes_value");
  return v; // an empty AnyValue ({}), or something already plain
}

/**
 * Attributes as a flat record: OTLP `[{key, value: AnyValue}]` lists are decoded; flat dicts (OTel-JS and Python
 * span dumps) pass through as they are.
 */
export function attributesToRecord(attrs: unknown): Record<string, unknown> {
  if (Array.isArray(attrs)) {
    const out: Record<string, unknown> = {};
    for (const a of attrs) {
      if (!isObj(a)) continue;
      const key = str(a.key);
      if (key !== undefined) out[key] = decodeAnyValue(a.value);
    }
    return out;
  }
  return isObj(attrs) ? { ...attrs } : {};
}

const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Trace id (16 bytes) or span id (8 bytes) as lower-case hex. Accepts hex, `0x` hex with dropped leading zeros
 * (Python `hex()`), and base64 (protobuf-JSON exporters): a 24/12-character value or one with non-hex characters.
 * Anything else is returned as given, so a foreign id is never lost.
 */
export function normalizeOtelId(v: unknown, bytes: 16 | 8): string | undefined {
  if (typeof v === "bigint") return v >= 0n ? v.toString(16).padStart(bytes * 2, "0") : undefined;
  // a number id must be a non-negative integer (1e400 is Infinity, 1.5 no id at all: BigInt would throw)
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 ? BigInt(v).toString(16).padStart(bytes * 2, "0") : undefined;
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (s === "") return undefined;
  const width = bytes * 2;
  if (/^0x/i.test(s) && HEX.test(s.slice(2)) && s.length - 2 <= width) return s.slice(2).toLowerCase().padStart(width, "0");
  if (HEX.test(s) && (s.length === 32 || s.length === 16)) return s.toLowerCase();
  const looksBase64 = s.length === 24 || s.length === 12 || !HEX.test(s);
  if (looksBase64 && BASE64.test(s)) {
    const buf = Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (buf.length === 16 || buf.length === 8) return buf.toString("hex");
  }
  return HEX.test(s) ? s.toLowerCase() : s;
}

/**
 * A span time as nanoseconds since the epoch. Accepts decimal strings (OTLP), numbers in ns (Python dumps; precision
 * beyond 2^53 is already lost by JSON.parse), OTel-JS hrtime `[seconds, nanos]`, and ISO-8601 strings.
 */
export function toNanos(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isFinite(v)) return BigInt(Math.round(v));
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === "number" && typeof v[1] === "number" && Number.isFinite(v[0]) && Number.isFinite(v[1]))
    return BigInt(Math.trunc(v[0])) * 1_000_000_000n + BigInt(Math.trunc(v[1]));
  if (typeof v === "string") {
    const t = v.trim();
    if (/^\d+$/.test(t)) return BigInt(t);
    if (/^\d{4}-\d{2}-\d{2}T/.test(t)) {
      const ms = Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(t) ? t : `${t}Z`);
      if (Number.isNaN(ms)) return undefined;
      // keep sub-millisecond digits, which Date drops
      const frac = t.match(/\.(\d+)/)?.[1] ?? "";
      const subMs = frac.length > 3 ? BigInt(frac.slice(3, 9).padEnd(6, "0")) : 0n;
      return BigInt(ms) * 1_000_000n + subMs;
    }
  }
  return undefined;
}

/** Nanoseconds since the epoch → ISO-8601 (millisecond precision); undefined for a missing or zero time. */
export function nanosToIso(ns: bigint | undefined): string | undefined {
  if (ns === undefined || ns <= 0n) return undefined;
  const d = new Date(Number(ns / 1_000_000n));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** OTel status code from its integer, enum string (`STATUS_CODE_ERROR`, `StatusCode.ERROR`) or name (`Error`). */
export function statusCode(v: unknown): 0 | 1 | 2 {
  if (v === 1 || v === 2) return v;
  const s = str(v)?.toUpperCase() ?? "";
  if (s === "1" || s.endsWith("OK")) return 1;
  if (s === "2" || s.endsWith("ERROR")) return 2;
  return 0;
}

/**
 * Rebuilds OpenInference-style flattened keys under `prefix` into nested values: `llm.input_messages.0.message.role`
 * → `[{message: {role}}]`. Objects whose keys are all integers become arrays ordered by index.
 */
export function unflatten(attrs: Record<string, unknown>, prefix: string): unknown {
  const root: Record<string, unknown> = {};
  const p = `${prefix}.`;
  let found = false;
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(p)) continue;
    found = true;
    const path = key.slice(p.length).split(".");
    let node = root;
    path.forEach((seg, i) => {
      if (i === path.length - 1) {
        if (isObj(node[seg])) (node[seg] as Record<string, unknown>)._value = value;
        else node[seg] = value;
        return;
      }
      if (!isObj(node[seg])) node[seg] = node[seg] === undefined ? {} : { _value: node[seg] };
      node = node[seg] as Record<string, unknown>;
    });
  }
  return found ? arraysFromIndexedObjects(root) : undefined;
}

function arraysFromIndexedObjects(v: unknown): unknown {
  if (!isObj(v)) return v;
  const keys = Object.keys(v);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k)))
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((k) => arraysFromIndexedObjects(v[String(k)]));
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = arraysFromIndexedObjects(v[k]);
  return out;
}

/** Parses a JSON-encoded value, also when it is encoded twice (a JSON string holding JSON); else returns it as given. */
export function decodeJsonish(v: unknown): unknown {
  let cur = v;
  for (let i = 0; i < 3 && typeof cur === "string"; i++) {
    const t = cur.trim();
    if (!(t.startsWith("{") || t.startsWith("[") || (t.startsWith('"') && t.endsWith('"') && t.length >= 2))) break;
    try {
      cur = sanitizeValue(JSON.parse(t)).value;
    } catch {
      break;
    }
  }
  return cur;
}

/**
 * Attributes stored nested (`{llm: {model_name, input_messages: [{message: {…}}]}}`, as Phoenix span exports do)
 * as the flat dotted keys every interpreter reads (`llm.model_name`, `llm.input_messages.0.message.role`). Applied
 * only when no key is dotted already, so flat dicts whose values happen to be objects are left alone.
 */
export function flattenNestedAttributes(attrs: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(attrs);
  if (keys.some((k) => k.includes(".")) || !keys.some((k) => isObj(attrs[k]))) return attrs;
  const out: Record<string, unknown> = {};
  const walk = (v: unknown, path: string) => {
    if (isObj(v) && Object.keys(v).length > 0) for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
    else if (Array.isArray(v) && v.some((x) => isObj(x))) v.forEach((x, i) => walk(x, `${path}.${i}`));
    else out[path] = v;
  };
  for (const k of keys) walk(attrs[k], k);
  return out;
}
