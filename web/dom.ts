/*
 * DOM building without HTML strings. Every piece of text goes in as a Text node, so nothing from a trace is ever
 * parsed as markup; attributes are set one by one, and event handlers only as functions.
 */

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Attrs {
  [name: string]: string | number | boolean | null | undefined | EventListener | Record<string, string>;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function append(parent: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(parent, c);
    return;
  }
  parent.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
}

function setAttrs(el: Element, attrs: Attrs | undefined): void {
  if (!attrs) return;
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") {
      el.addEventListener(name.replace(/^on/, "").toLowerCase(), value);
      continue;
    }
    if (name === "dataset" && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) (el as HTMLElement).dataset[k] = v;
      continue;
    }
    // No attribute named on* ever comes from data: handlers are passed as functions above.
    if (/^on/i.test(name)) throw new Error(`refusing to set event attribute ${name}`);
    el.setAttribute(name, value === true ? "" : String(value));
  }
}

/** An HTML element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs ?? undefined);
  append(el, children);
  return el;
}

/** An SVG element with attributes and children. */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs ?? undefined);
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function replace(el: Element, ...children: Child[]): void {
  clear(el);
  append(el, children);
}

/** A link inside the app (the router intercepts clicks on it). */
export function nav(href: string, attrs: Attrs | null, ...children: Child[]): HTMLAnchorElement {
  return h("a", { ...attrs, href, "data-nav": "" }, ...children);
}
