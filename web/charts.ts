import { s } from "./dom.js";

/*
 * Charts as inline SVG drawn here: a heatmap, a forest plot of differences with intervals, and a small bar chart.
 * Labels are Text nodes like everywhere else; colours are attributes, so the strict CSP needs no inline styles.
 */

function title(text: string): SVGTitleElement {
  return s("title", null, text);
}

/** Interpolates white → a deep red by t in [0, 1]. */
export function heat(t: number): string {
  const c = Math.max(0, Math.min(1, t));
  const from = [250, 250, 250];
  const to = [176, 30, 42];
  const mix = from.map((f, i) => Math.round(f + (to[i]! - f) * c));
  return `rgb(${mix.join(",")})`;
}

export interface HeatRow {
  key: string;
  label: string;
  /** Small text under the label, e.g. "120 traces". */
  note?: string;
}

export interface HeatCol {
  key: string;
  label: string;
  title: string;
  group: string;
}

export interface HeatCell {
  value: number | null;
  text: string;
  title: string;
  /** No detector or judge examined the mode: drawn hatched-grey with a dashed edge, never like a white 0%. */
  notMeasured?: boolean;
}

export function heatmap(opts: {
  rows: HeatRow[];
  cols: HeatCol[];
  groups: { id: string; label: string }[];
  cell: (row: string, col: string) => HeatCell;
  onSelect?: (row: string, col: string) => void;
  label: string;
}): SVGSVGElement {
  const labelW = 215;
  const cellW = 48;
  const cellH = 34;
  const top = 46;
  const width = labelW + opts.cols.length * cellW + 8;
  const height = top + opts.rows.length * cellH + 44;
  const values = opts.rows.flatMap((r) => opts.cols.map((c) => opts.cell(r.key, c.key).value)).filter((v): v is number => v !== null);
  const max = Math.max(0.05, ...values);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "chart heatmap", role: "img", "aria-label": opts.label });
  // category bands above the codes
  let x = labelW;
  for (const g of opts.groups) {
    const n = opts.cols.filter((c) => c.group === g.id).length;
    if (!n) continue;
    svg.append(
      s("rect", { x: x + 1, y: 2, width: n * cellW - 2, height: 18, rx: 3, class: "band" }),
      s("text", { x: x + (n * cellW) / 2, y: 15, "text-anchor": "middle", class: "band-label" }, n >= 3 ? g.label : g.id, title(`${g.id}: ${g.label}`)),
    );
    x += n * cellW;
  }
  opts.cols.forEach((c, i) => {
    svg.append(s("text", { x: labelW + i * cellW + cellW / 2, y: top - 8, "text-anchor": "middle", class: "col-label" }, c.label, title(c.title)));
  });
  opts.rows.forEach((r, ri) => {
    const y = top + ri * cellH;
    svg.append(
      s("text", { x: labelW - 10, y: y + (r.note ? cellH / 2 - 2 : cellH / 2 + 4), "text-anchor": "end", class: "row-label" }, cut(r.label, 26), title(r.label)),
    );
    if (r.note) svg.append(s("text", { x: labelW - 10, y: y + cellH / 2 + 11, "text-anchor": "end", class: "row-note" }, r.note));
    opts.cols.forEach((c, ci) => {
      const v = opts.cell(r.key, c.key);
      const t = v.value === null ? 0 : v.value / max;
      const g = s(
        "g",
        {
          class: `cell${v.notMeasured ? " not-measured" : ""}${opts.onSelect ? " clickable" : ""}`,
          "data-row": r.key,
          "data-col": c.key,
          ...(opts.onSelect ? { role: "link", tabindex: 0, "aria-label": v.title } : {}),
        },
        s("rect", {
          x: labelW + ci * cellW + 1,
          y: y + 1,
          width: cellW - 2,
          height: cellH - 2,
          rx: 3,
          fill: v.value === null ? "#eef0f3" : heat(t),
          ...(v.notMeasured ? { stroke: "#a3abb9", "stroke-dasharray": "3 2" } : {}),
        }),
        s(
          "text",
          { x: labelW + ci * cellW + cellW / 2, y: y + cellH / 2 + 4, "text-anchor": "middle", class: t > 0.55 ? "cell-text dark" : "cell-text" },
          v.text,
        ),
        title(v.title),
      );
      if (opts.onSelect) {
        const select = () => opts.onSelect!(r.key, c.key);
        g.addEventListener("click", select);
        g.addEventListener("keydown", (e) => {
          if ((e as KeyboardEvent).key === "Enter" || (e as KeyboardEvent).key === " ") {
            e.preventDefault();
            select();
          }
        });
      }
      svg.append(g);
    });
  });
  // legend
  const ly = top + opts.rows.length * cellH + 14;
  const steps = 6;
  svg.append(s("text", { x: labelW - 10, y: ly + 10, "text-anchor": "end", class: "row-note" }, "prevalence"));
  for (let i = 0; i < steps; i++)
    svg.append(s("rect", { x: labelW + i * 28, y: ly, width: 28, height: 12, fill: heat(i / (steps - 1)) }));
  svg.append(
    s("text", { x: labelW, y: ly + 24, class: "row-note" }, "0%"),
    s("text", { x: labelW + steps * 28, y: ly + 24, "text-anchor": "end", class: "row-note" }, `${Math.round(max * 100)}%`),
  );
  if (opts.rows.some((r) => opts.cols.some((c) => opts.cell(r.key, c.key).notMeasured)))
    svg.append(
      s("rect", { x: labelW + steps * 28 + 24, y: ly, width: 28, height: 12, fill: "#eef0f3", stroke: "#a3abb9", "stroke-dasharray": "3 2" }),
      s("text", { x: labelW + steps * 28 + 58, y: ly + 10, class: "row-note" }, "n/m: not measured (unknown, not 0%)"),
    );
  return svg;
}

export interface ForestRow {
  key: string;
  label: string;
  title?: string;
  est: number | null;
  lo: number | null;
  hi: number | null;
  /** CSS class of the marker: fatal, benign, undetermined, up, down, flat. */
  cls: string;
  /** Text at the right, e.g. "+12.0 pp [3.1, 20.4]". */
  note: string;
  /** A second estimate drawn as a hollow circle (e.g. the circular all-findings delta), with what it is. */
  alt?: { value: number; title: string } | null;
}

/** Differences with intervals on one axis, one row each (a forest plot), with a zero line. */
export function forest(opts: { rows: ForestRow[]; label: string; axis: string; onSelect?: (key: string) => void }): SVGSVGElement {
  const labelW = 250;
  const plotW = 340;
  const noteW = 300;
  const rowH = 24;
  const top = 10;
  const width = labelW + plotW + noteW;
  const height = top + opts.rows.length * rowH + 36;
  const ext = Math.max(10, ...opts.rows.flatMap((r) => [r.lo, r.hi, r.est, r.alt?.value ?? null]).filter((v): v is number => v !== null).map(Math.abs));
  const bound = Math.ceil(ext / 10) * 10;
  const xOf = (v: number) => labelW + ((v + bound) / (2 * bound)) * plotW;
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "chart forest", role: "img", "aria-label": opts.label });
  const bottom = top + opts.rows.length * rowH;
  const tickStep = bound <= 20 ? 5 : bound <= 50 ? 10 : 25;
  for (let t = -bound; t <= bound; t += tickStep) {
    svg.append(
      s("line", { x1: xOf(t), x2: xOf(t), y1: top, y2: bottom, class: t === 0 ? "zero" : "grid" }),
      s("text", { x: xOf(t), y: bottom + 14, "text-anchor": "middle", class: "tick" }, `${t > 0 ? "+" : ""}${t}`),
    );
  }
  svg.append(s("text", { x: labelW + plotW / 2, y: bottom + 30, "text-anchor": "middle", class: "axis-label" }, opts.axis));
  opts.rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    const g = s("g", {
      class: `row ${r.cls}${opts.onSelect ? " clickable" : ""}`,
      "data-key": r.key,
      ...(opts.onSelect ? { role: "link", tabindex: 0, "aria-label": `${r.label}: ${r.note}` } : {}),
    });
    if (opts.onSelect) {
      const select = () => opts.onSelect!(r.key);
      g.addEventListener("click", select);
      g.addEventListener("keydown", (e) => {
        if ((e as KeyboardEvent).key === "Enter") select();
      });
    }
    if (i % 2 === 0) g.append(s("rect", { x: 0, y: y - rowH / 2, width, height: rowH, class: "stripe" }));
    g.append(s("text", { x: 6, y: y + 4, class: "row-label" }, cut(r.label, 38), title(r.title ?? r.label)));
    if (r.est !== null && r.lo !== null && r.hi !== null) {
      g.append(
        s("line", { x1: xOf(r.lo), x2: xOf(r.hi), y1: y, y2: y, class: "whisker" }),
        s("circle", { cx: xOf(r.est), cy: y, r: 4.5, class: "point" }),
      );
    }
    if (r.alt) g.append(s("circle", { cx: xOf(r.alt.value), cy: y, r: 4, class: "alt", fill: "none", stroke: "#6b7383", "stroke-width": 1.3 }, title(r.alt.title)));
    g.append(s("text", { x: labelW + plotW + 12, y: y + 4, class: "note" }, r.note));
    g.append(title(r.title ? `${r.title}\n${r.note}` : r.note));
    svg.append(g);
  });
  return svg;
}

/** A small vertical bar chart, e.g. a histogram. */
export function bars(opts: { values: number[]; labels: string[]; label: string; axis: string }): SVGSVGElement {
  const barW = 30;
  const gap = 6;
  const h = 90;
  const left = 8;
  const top = 16;
  const width = left + opts.values.length * (barW + gap) + 8;
  const height = top + h + 34;
  const max = Math.max(1, ...opts.values);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, class: "chart bars", role: "img", "aria-label": opts.label });
  opts.values.forEach((v, i) => {
    const bh = (v / max) * h;
    const x = left + i * (barW + gap);
    svg.append(
      s("rect", { x, y: top + h - bh, width: barW, height: Math.max(bh, v > 0 ? 1 : 0), rx: 2, class: "bar" }, title(`${opts.labels[i]}: ${v}`)),
      s("text", { x: x + barW / 2, y: top + h - bh - 4, "text-anchor": "middle", class: "tick" }, String(v)),
      s("text", { x: x + barW / 2, y: top + h + 14, "text-anchor": "middle", class: "tick" }, opts.labels[i] ?? ""),
    );
  });
  svg.append(s("text", { x: width / 2, y: top + h + 30, "text-anchor": "middle", class: "axis-label" }, opts.axis));
  return svg;
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
