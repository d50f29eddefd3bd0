import { sanitizeValue } from "../io/sanitize.js";
/** Small, strict readers for untyped JSON: they return undefined instead of guessing. */
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const str = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? String(v) : undefined;

export const num = (v: unknown): number | undefined => {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
};

export const bool = (v: unknown): boolean | undefined => {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "True") return true;
  if (v === "false" || v === "False") return false;
  return undefined;
};

export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Parses a JSON string if it is one; otherwise returns the value as it was. */
export function maybeJson(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return v;
  try {
    // a value nested 10⁵ levels deep would overflow recursive code later: cut like the file reader does
    return sanitizeValue(JSON.parse(t)).value;
  } catch {
    return v;
  }
}

/** Text of a value for display in a step: strings as they are, anything else as compact JSON. */
export function asText(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/**
 * Text of a chat `content` that may be a string, null, or an array of parts ({type:"text", text} and variants).
 * Non-text parts are named in brackets so nothing disappears without a trace.
 */
export function contentText(content: unknown): string | undefined {
  if (content === null || content === undefined) return undefined;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const parts = content.map((p) => {
      if (typeof p === "string") return p;
      if (!isObj(p)) return "";
      const t = str(p.text) ?? str(p.content) ?? str(p.input_text) ?? str(p.output_text);
      if (t !== undefined) return t;
      return p.type ? `[${String(p.type)}]` : asText(p) ?? "";
    });
    return parts.filter((s) => s !== "").join("\n");
  }
  if (isObj(content)) return str(content.text) ?? asText(content);
  return String(content);
}

/** Normalises a model name for grouping: strips routing prefixes such as `openai/` or `watsonx/openai/`. */
export function normalizeModel(model: string | undefined): string | undefined {
  if (!model) return undefined;
  const m = model.trim();
  if (!m) return undefined;
  const parts = m.split("/");
  return parts[parts.length - 1] || m;
}
