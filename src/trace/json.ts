/*
 * JSON written by a model (a judge's answer, an agent's deliverable): the one lenient repairer both the judge and
 * the ITBench deliverable loader use. Each fix is named, so callers can say a value needed repair.
 */

/** A parser for one attempt: plain JSON.parse by default; the trace reader's lenient parse adds its own repairs. */
export type JsonAttempt = (text: string) => { value: unknown; repairs: string[] };

export type RepairResult = { ok: true; value: unknown; repairs: string[] } | { ok: false; error: string; repairs: string[] };

const plain: JsonAttempt = (text) => ({ value: JSON.parse(text), repairs: [] });

/** Removes commas before `]` / `}` outside strings. */
function removeTrailingCommas(text: string): { text: string; count: number } {
  let out = "";
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += text[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === "]" || text[j] === "}") {
        count++;
        continue;
      }
    }
    out += c;
  }
  return { text: out, count };
}

/** The ITBench official fixer's missing-comma rules (`"a"\n"b"`, `}\n{`, …); used only when everything else failed. */
function addMissingCommas(text: string): string {
  return text
    .replace(/(")(\s*\n\s*)(")/g, "$1,$2$3")
    .replace(/(\})(\s+)(\{)/g, "$1,$2$3")
    .replace(/(\])(\s+)(\[)/g, "$1,$2$3")
    .replace(/([}\]])(\s*\n\s*)(")/g, "$1,$2$3")
    .replace(/(\d|true|false|null)(\s*\n\s*)(["{[])/g, "$1,$2$3");
}

/**
 * Parses JSON the way model-written text needs, trying in turn: the text as it is; a JSON document stored as a JSON
 * string; the first markdown code fence; the value without the text around it (from the first `{`/`[` to the last
 * `}`/`]`, then the outermost `{…}`); trailing commas removed; missing commas between lines added.
 */
export function repairJson(text: string, parse: JsonAttempt = plain): RepairResult {
  const repairs: string[] = [];
  let t = text.replace(/^\uFEFF/, "");
  if (t.trim() === "") return { ok: false, error: "the text is empty", repairs };
  const attempt = (s: string): { ok: true; value: unknown } | { ok: false; error: string } => {
    try {
      const r = parse(s);
      repairs.push(...r.repairs);
      return { ok: true, value: r.value };
    } catch (e) {
      return { ok: false, error: (e as Error).message };
    }
  };
  const done = (value: unknown): RepairResult => ({ ok: true, value, repairs });
  let r = attempt(t);
  if (r.ok && typeof r.value === "string") {
    // a document written as a JSON string (sometimes with fences inside)
    repairs.push("the JSON document was a string holding JSON");
    t = r.value;
    r = attempt(t);
  }
  if (r.ok && typeof r.value !== "string") return done(r.value);
  const firstError = r.ok ? "a string, not an object" : r.error;

  const fence = t.match(/```(?:json|JSON)?\s*\n?([\s\S]*?)```/);
  if (fence) {
    t = fence[1]!;
    repairs.push("removed markdown code fences");
    r = attempt(t);
    if (r.ok) return done(r.value);
  }
  const start = t.search(/[{[]/);
  const end = Math.max(t.lastIndexOf("}"), t.lastIndexOf("]"));
  if (start > 0 || (end >= 0 && end < t.trimEnd().length - 1)) {
    if (start >= 0 && end > start) {
      t = t.slice(start, end + 1);
      repairs.push("dropped text around the JSON value");
      r = attempt(t);
      if (r.ok) return done(r.value);
    }
  }
  // prose with brackets of its own before the object ("[step 3] failed: {…}"): the outermost object alone. Only
  // when what precedes it is words, not JSON (no quotes), so an array of objects is never cut to its first element.
  const open = t.indexOf("{");
  const close = t.lastIndexOf("}");
  const before = t.slice(0, Math.max(0, open));
  if (open > 0 && close > open && !before.includes('"') && /[A-Za-z]{2}/.test(before)) {
    const obj = attempt(t.slice(open, close + 1));
    if (obj.ok) {
      if (!repairs.includes("dropped text around the JSON value")) repairs.push("dropped text around the JSON value");
      return done(obj.value);
    }
  }
  const tc = removeTrailingCommas(t);
  if (tc.count > 0) {
    t = tc.text;
    repairs.push(`removed ${tc.count} trailing comma(s)`);
    r = attempt(t);
    if (r.ok) return done(r.value);
  }
  const mc = addMissingCommas(t);
  if (mc !== t) {
    r = attempt(mc);
    if (r.ok) {
      repairs.push("added missing commas between values");
      return done(r.value);
    }
  }
  return { ok: false, error: `not valid JSON even after repairs (${firstError})`, repairs };
}
