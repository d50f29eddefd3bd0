/**
 * Guards against single values that would otherwise take a whole file (or a whole run) down:
 * - values nested so deep that recursive code (JSON.stringify, adapters, renderers) overflows the stack — a
 *   100 000-level array parses fine with JSON.parse but "Maximum call stack size exceeded" later;
 * - numbers that overflow a double (`1e400` parses to Infinity; `BigInt(Infinity)` throws).
 * Both are repaired in place, iteratively (this code never recurses), and counted so the caller can say so.
 */

/** Nesting deeper than this is cut. Real traces stay below 20 levels (the corpus: 13). */
export const MAX_DEPTH = 512;
export const CUT_MARKER = `[faultline: value nested deeper than ${MAX_DEPTH} levels, cut]`;

export interface SanitizeResult {
  value: unknown;
  /** Values replaced by CUT_MARKER because they sat deeper than the limit. */
  cut: number;
  /** Non-finite numbers replaced by null. */
  nonFinite: number;
}

const isPlainContainer = (v: unknown): v is Record<string, unknown> | unknown[] => {
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};

/**
 * Cuts values nested deeper than `maxDepth` and (unless `keepNonFinite`) replaces non-finite numbers with null, in
 * place. Objects reached twice (shared references, cycles in built objects) are visited once.
 */
export function sanitizeValue(root: unknown, opts: { maxDepth?: number; keepNonFinite?: boolean } = {}): SanitizeResult {
  const maxDepth = opts.maxDepth ?? MAX_DEPTH;
  const fixNumbers = !opts.keepNonFinite;
  if (typeof root === "number") return fixNumbers && !Number.isFinite(root) ? { value: null, cut: 0, nonFinite: 1 } : { value: root, cut: 0, nonFinite: 0 };
  if (!isPlainContainer(root)) return { value: root, cut: 0, nonFinite: 0 };
  let cut = 0;
  let nonFinite = 0;
  const seen = new Set<object>([root]);
  const stack: (Record<string, unknown> | unknown[])[] = [root];
  const depths: number[] = [1];
  while (stack.length) {
    const v = stack.pop()!;
    const d = depths.pop()!;
    const visit = (c: unknown): unknown => {
      if (typeof c === "number") {
        if (fixNumbers && !Number.isFinite(c)) {
          nonFinite++;
          return null;
        }
        return c;
      }
      if (!isPlainContainer(c) || seen.has(c)) return c;
      if (d >= maxDepth) {
        cut++;
        return CUT_MARKER;
      }
      seen.add(c);
      stack.push(c);
      depths.push(d + 1);
      return c;
    };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c = v[i];
        if (c !== null && (typeof c === "object" || typeof c === "number")) {
          const r = visit(c);
          if (r !== c) v[i] = r;
        }
      }
    } else {
      for (const k in v) {
        const c = v[k];
        if (c !== null && (typeof c === "object" || typeof c === "number")) {
          const r = visit(c);
          if (r !== c) v[k] = r;
        }
      }
    }
  }
  return { value: root, cut, nonFinite };
}

/** The repairs a sanitize pass made, as `repaired: …` messages. */
export function sanitizeRepairs(r: Pick<SanitizeResult, "cut" | "nonFinite">): string[] {
  const out: string[] = [];
  if (r.nonFinite) out.push(`replaced ${r.nonFinite} number(s) too large for a double (such as 1e400) with null`);
  if (r.cut) out.push(`cut ${r.cut} value(s) nested deeper than ${MAX_DEPTH} levels`);
  return out;
}
