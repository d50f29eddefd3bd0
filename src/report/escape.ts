import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/*
 * The one gate every piece of untrusted text (anything from a trace: ids, model names, evidence, file names) passes
 * before it goes into HTML. The report never builds a URL, a script or a style from such text, so escaping it as
 * text (and as a double-quoted attribute value, which the same function covers) is enough.
 */

// Unpaired UTF-16 surrogates (broken Unicode from a truncated or mis-decoded source).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// C0 controls other than tab / newline / carriage return, DEL, C1 controls, and the noncharacters U+FFFE / U+FFFF.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]/g;
// Bidirectional overrides and isolates can reorder what a reader sees (the "Trojan Source" trick): shown, not obeyed.
const BIDI = /[\u202A-\u202E\u2066-\u2069]/g;

/** Makes text safe to display: broken or invisible code points become visible replacements. */
export function cleanText(value: unknown): string {
  const s = value === null || value === undefined ? "" : typeof value === "string" ? value : String(value);
  return s
    .replace(LONE_SURROGATE, "\uFFFD")
    .replace(CONTROL, "\uFFFD")
    .replace(BIDI, (c) => `⟦U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and for double- or single-quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return cleanText(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** An HTML fragment: hono/html's escaped string, which `h` interpolates as it is. */
export type Html = HtmlEscapedString;
type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

const cleanValue = (v: HtmlValue): HtmlValue => (typeof v === "string" ? cleanText(v) : Array.isArray(v) ? v.map(cleanValue) : v);

/**
 * The report's HTML template tag: hono/html's `html`, which escapes every interpolated string (text and double- or
 * single-quoted attribute values alike), after {@link cleanText}. Fragments made by `h` go in unescaped, arrays of them
 * are concatenated; null, undefined and false render nothing.
 */
export function h(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  return html(strings, ...values.map(cleanValue)) as Html;
}

/** Trusted markup made by this module (a style block, a policy): never text from a trace. */
export const trusted = (markup: string): Html => raw(markup) as Html;
