import { h } from "./dom.js";

/*
 * Trace text is untrusted. It is only ever rendered as Text nodes; the one thing made interactive is a link whose
 * scheme is http or https, and even that opens in a new tab without a referrer or an opener.
 */

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`]+/gi;

/** The URL when its scheme is http(s), else null (javascript:, data:, file:, …). */
export function safeHref(raw: string): string | null {
  try {
    const u = new URL(raw);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/** Trailing punctuation that usually ends a sentence rather than a URL. */
function trimUrl(raw: string): string {
  let url = raw.replace(/[.,;:!?]+$/, "");
  for (const [open, close] of [["(", ")"], ["[", "]"]] as const) {
    while (url.endsWith(close) && url.split(open).length < url.split(close).length) url = url.slice(0, -1);
  }
  return url;
}

/** Bidirectional-text controls: invisible, yet they can make text read differently from what it is. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Appends plain text; bidi controls are shown as visible codes instead of silently reordering what follows. */
function appendPlain(parent: Node, text: string): void {
  let last = 0;
  for (const m of text.matchAll(BIDI_CONTROLS)) {
    const at = m.index ?? 0;
    if (at > last) parent.appendChild(document.createTextNode(text.slice(last, at)));
    const code = `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    parent.appendChild(h("span", { class: "ctrl", title: `invisible text-direction control ${code}` }, `[${code}]`));
    last = at + m[0].length;
  }
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
}

/** Appends text, turning http(s) URLs into links. */
export function appendLinked(parent: Node, text: string): void {
  let last = 0;
  for (const m of text.matchAll(URL_PATTERN)) {
    const url = trimUrl(m[0]);
    const href = safeHref(url);
    const start = m.index ?? 0;
    if (!href) continue;
    if (start > last) appendPlain(parent, text.slice(last, start));
    parent.appendChild(h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow", class: "ext" }, url));
    last = start + url.length;
  }
  if (last < text.length) appendPlain(parent, text.slice(last));
}

export interface Highlight {
  start: number;
  end: number;
}

/**
 * A block of untrusted text: linkified, with one optional highlighted range (the evidence of the selected finding),
 * and optionally cut to its first `limit` characters.
 */
export function textBlock(text: string, opts: { highlight?: Highlight | null; limit?: number } = {}): DocumentFragment {
  const frag = document.createDocumentFragment();
  const hl = opts.highlight;
  const shown = opts.limit !== undefined && opts.limit < text.length ? text.slice(0, opts.limit) : text;
  if (!hl || hl.start >= shown.length) {
    appendLinked(frag, shown);
  } else {
    const end = Math.min(hl.end, shown.length);
    appendLinked(frag, shown.slice(0, hl.start));
    const mark = h("mark", { class: "evidence" });
    appendLinked(mark, shown.slice(hl.start, end));
    frag.appendChild(mark);
    appendLinked(frag, shown.slice(end));
  }
  return frag;
}
