import { h, type Child } from "./dom.js";

/** Small building blocks shared by the views. */

export function section(title: string, intro: Child, ...body: Child[]): HTMLElement {
  return h("section", { class: "panel" }, h("h2", null, title), intro ? h("p", { class: "intro" }, intro) : null, ...body);
}

export function outcomeBadge(success: boolean | null | undefined, extra?: string): HTMLElement {
  const [cls, text] = success === true ? ["ok", "success"] : success === false ? ["bad", "failure"] : ["unknown", "unknown"];
  return h("span", { class: `badge ${cls}`, "data-outcome": text }, extra ? `${text} · ${extra}` : text);
}

/** Marks a run that was interrupted (or is still running): its numbers cover only the traces stored so far. */
export function incompleteBadge(): HTMLElement {
  return h("span", { class: "badge incomplete", title: "Interrupted or still running: only the traces stored so far" }, "incomplete");
}

export function modeChip(code: string, name?: string, active = false): HTMLElement {
  return h("span", { class: `chip${active ? " active" : ""}`, title: name ?? code, "data-mode": code }, code);
}

export function select<T extends string>(opts: {
  label: string;
  value: T | "";
  /** A disabled option is listed for information only (e.g. a mode that was not measured). */
  options: { value: T | ""; label: string; disabled?: boolean }[];
  onChange: (v: T | "") => void;
  name: string;
}): HTMLLabelElement {
  const sel = h("select", { name: opts.name, "aria-label": opts.label });
  for (const o of opts.options) {
    const opt = h("option", { value: o.value }, o.label);
    if (o.value === opts.value) opt.selected = true;
    if (o.disabled) opt.disabled = true;
    sel.append(opt);
  }
  sel.addEventListener("change", () => opts.onChange(sel.value as T | ""));
  return h("label", { class: "field" }, h("span", null, opts.label), sel);
}

export function loading(what: string): HTMLElement {
  return h("p", { class: "loading", role: "status" }, `Loading ${what}…`);
}

export function failure(message: string): HTMLElement {
  return h("div", { class: "error", role: "alert" }, message);
}

export function keyValues(pairs: [string, Child][]): HTMLElement {
  return h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== "").map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
}
