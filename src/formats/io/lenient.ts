import { sanitizeRepairs, sanitizeValue } from "./sanitize.js";

/**
 * JSON parsing that survives what real trace files contain: bare NaN/Infinity (Python's json.dump), and Python
 * literal reprs (tau-bench `info`). Every repair is reported so callers can record it.
 */
export interface LenientResult {
  value: unknown;
  repairs: string[];
}

/** Replaces bare NaN / Infinity / -Infinity tokens outside strings with null. */
function replaceNonFinite(text: string): { text: string; count: number } {
  let out = "";
  let count = 0;
  let i = 0;
  let last = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92) i += 2;
        else if (d === 34) {
          i++;
          break;
        } else i++;
      }
      continue;
    }
    if (c === 78 /* N */ && text.startsWith("NaN", i)) {
      out += text.slice(last, i) + "null";
      i += 3;
      last = i;
      count++;
      continue;
    }
    if ((c === 73 /* I */ && text.startsWith("Infinity", i)) || (c === 45 && text.startsWith("-Infinity", i))) {
      const len = c === 45 ? 9 : 8;
      out += text.slice(last, i) + "null";
      i += len;
      last = i;
      count++;
      continue;
    }
    i++;
  }
  return count ? { text: out + text.slice(last), count } : { text, count: 0 };
}

/**
 * JSON.parse, then: bare NaN/Infinity repaired to null; numbers that overflow a double (`1e400`) replaced by null;
 * values nested deeper than MAX_DEPTH cut (see sanitize.ts). Each repair is listed.
 */
export function parseJsonLenient(text: string): LenientResult {
  let value: unknown;
  const repairs: string[] = [];
  try {
    value = JSON.parse(text);
  } catch (first) {
    const r = replaceNonFinite(text);
    if (r.count === 0) throw first;
    try {
      value = JSON.parse(r.text);
    } catch {
      throw first;
    }
    repairs.push(`replaced ${r.count} bare NaN/Infinity value(s) with null`);
  }
  if (value !== null && (typeof value === "object" || typeof value === "number")) {
    const s = sanitizeValue(value);
    value = s.value;
    repairs.push(...sanitizeRepairs(s));
  }
  return { value, repairs };
}

/**
 * Parses a Python literal repr (dicts, lists, tuples, str, int, float, True/False/None) into JSON values.
 * Returns undefined when the text is not such a literal; callers then keep the raw string.
 */
export function parsePythonLiteral(text: string): unknown {
  let i = 0;
  const s = text;
  const ws = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const fail = (): never => {
    throw new Error(`unexpected ${JSON.stringify(s[i] ?? "end")} at ${i}`);
  };
  const str = (): string => {
    const q = s[i]!;
    i++;
    let out = "";
    while (i < s.length && s[i] !== q) {
      if (s[i] === "\\") {
        const e = s[i + 1];
        const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };
        if (e === "x") {
          out += String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16));
          i += 4;
        } else if (e === "u") {
          out += String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          out += e !== undefined && e in map ? map[e] : `\\${e ?? ""}`;
          i += 2;
        }
      } else out += s[i++];
    }
    if (s[i] !== q) fail();
    i++;
    return out;
  };
  const val = (): unknown => {
    ws();
    const c = s[i];
    if (c === "{") {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (s[i] === "}") return i++, o;
      for (;;) {
        const k = val();
        ws();
        if (s[i] !== ":") fail();
        i++;
        o[String(k)] = val();
        ws();
        if (s[i] === ",") {
          i++;
          ws();
          if (s[i] === "}") return i++, o;
          continue;
        }
        if (s[i] === "}") return i++, o;
        fail();
      }
    }
    if (c === "[" || c === "(") {
      const close = c === "[" ? "]" : ")";
      i++;
      const a: unknown[] = [];
      ws();
      if (s[i] === close) return i++, a;
      for (;;) {
        a.push(val());
        ws();
        if (s[i] === ",") {
          i++;
          ws();
          if (s[i] === close) return i++, a;
          continue;
        }
        if (s[i] === close) return i++, a;
        fail();
      }
    }
    if (c === "'" || c === '"') return str();
    const m = /^(True|False|None|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|nan|inf|-inf)/.exec(s.slice(i, i + 40));
    if (!m) fail();
    i += m![0].length;
    const t = m![0];
    if (t === "True") return true;
    if (t === "False") return false;
    if (t === "None" || t === "nan" || t === "inf" || t === "-inf") return null;
    return Number(t);
  };
  try {
    const v = val();
    ws();
    return i === s.length ? v : undefined;
  } catch {
    return undefined;
  }
}
