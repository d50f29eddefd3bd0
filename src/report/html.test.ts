import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildReportData } from "./data.js";
import { readFileSync } from "node:fs";
import ts from "typescript";
import { cleanText, escapeHtml, h } from "./escape.js";
import { decisiveRun, HOSTILE, hostileReplay, hostileRun } from "../testing/report-fixtures.js";
import { INTERVENTIONS } from "../analysis/index.js";
import { HIGHLIGHT_TITLES, type HighlightKind } from "../trace/index.js";
import { renderHtml } from "./html.js";
import { summarize } from "./summary.js";

/** No unpaired surrogate (String.prototype.isWellFormed is ES2024, beyond this project's lib). */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

/** Reads `a.b[2].c` from an object. */
function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/\[(\d+)\]/g, ".$1").split(".")) cur = (cur as Record<string, unknown>)?.[part];
  return cur;
}

describe("escapeHtml", () => {
  it("turns markup into text", () => {
    expect(escapeHtml(HOSTILE.script)).toBe("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(escapeHtml(HOSTILE.img)).toBe("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(escapeHtml(`a & b ' c`)).toBe("a &amp; b &#39; c");
    // javascript: is harmless as text; the report never puts trace text in a URL (checked on the page below)
    expect(escapeHtml(HOSTILE.js)).toBe(HOSTILE.js);
    expect(escapeHtml(null)).toBe("");
    expect(escapeHtml(42)).toBe("42");
  });

  it("repairs broken Unicode and makes invisible controls visible", () => {
    expect(cleanText("bad\uD800")).toBe("bad\uFFFD"); // lone high surrogate
    expect(cleanText("\uDC00half")).toBe("\uFFFDhalf"); // lone low surrogate
    expect(cleanText("\uD83D\uDE00")).toBe("😀"); // a valid pair is kept
    expect(cleanText("nul\u0000 bell\u0007 del\u007F")).toBe("nul\uFFFD bell\uFFFD del\uFFFD");
    expect(cleanText("tab\tnew\nline\r")).toBe("tab\tnew\nline\r");
    expect(cleanText("rtl\u202Etxt.exe")).toBe("rtl⟦U+202E⟧txt.exe");
    const out = escapeHtml(HOSTILE.broken);
    expect(wellFormed(out)).toBe(true);
    expect(wellFormed(HOSTILE.broken)).toBe(false);
    expect(out).not.toMatch(/[\u0000\u202E]/);
  });
});

describe("the html tag (hono/html)", () => {
  it("escapes every interpolated string, in text and in attributes, after cleanText; fragments and lists go in whole", () => {
    const attack = `"><img src=x onerror=alert(1)>'`;
    expect(String(h`<p title="${attack}">${attack}</p>`)).toBe(`<p title="${escapeHtml(attack)}">${escapeHtml(attack)}</p>`);
    expect(String(h`<p>${HOSTILE.broken}</p>`)).toBe(`<p>${escapeHtml(HOSTILE.broken)}</p>`);
    const items = [HOSTILE.script, "a&b"].map((x) => h`<li>${x}</li>`);
    expect(String(h`<ul>${items}</ul>${null}${undefined}${false}${0}`)).toBe("<ul><li>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</li><li>a&amp;b</li></ul>0");
  });

  it("every template in html.ts that holds markup is an html`…` template: an untagged one would go out unescaped", () => {
    const file = new URL("./html.ts", import.meta.url);
    const source = ts.createSourceFile("html.ts", readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const untagged: string[] = [];
    const visit = (node: ts.Node) => {
      if ((ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !ts.isTaggedTemplateExpression(node.parent)) {
        const text = node.getText(source);
        if (/<[a-zA-Z/!]|="/.test(text.replace(/\$\{[^}]*\}/g, ""))) untagged.push(`line ${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${text.slice(0, 60)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    expect(untagged).toEqual([]);
  });
});

describe("renderHtml", async () => {
  const diagnoses = hostileRun();
  const plain = await summarize("run-1", "rules@test", { traces: diagnoses.length, annotated: diagnoses.length - 1, failed: 1, files: 1, errors: 0 }, diagnoses);
  // with a guard replay whose trace text is hostile too: every check below covers its section as well
  const summary = { ...plain, replay: hostileReplay() };
  const html = renderHtml(buildReportData(summary, diagnoses));

  it("runs no script and loads nothing: CSP, no script element, no handlers, no URLs from trace text", () => {
    expect(html).not.toMatch(/<script/i);
    // Every tag with its attributes. Text never holds a raw `<` or `"` (both are escaped), and attribute values are
    // always double-quoted, so this split is exact; escaped text may say "onerror=" or "src=" harmlessly.
    const tags = html.match(/<[^>]+>/g)!;
    const attrs = tags.flatMap((t) => [...t.matchAll(/\s([a-zA-Z:-]+)="([^"]*)"/g)].map((m) => ({ name: m[1]!, value: m[2]! })));
    expect(attrs.filter((a) => /^on/i.test(a.name))).toEqual([]);
    expect(attrs.filter((a) => /^(src|srcset|action|formaction|xlink:href|background|poster)$/i.test(a.name))).toEqual([]);
    for (const a of attrs.filter((x) => x.name === "href")) expect(a.value).toMatch(/^#[a-z-]+$/);
    // trace text may sit in data-*, title and aria-label values (escaped, inert); no other attribute holds a URL
    const inert = (n: string) => n.startsWith("data-") || n === "title" || n === "aria-label";
    expect(attrs.filter((a) => !inert(a.name) && a.value.includes("://") && !(a.name === "xmlns" && a.value === "http://www.w3.org/2000/svg"))).toEqual([]);
    // only the page's own gradient and not-measured hatch, by fragment
    expect([...new Set(attrs.filter((a) => a.value.includes("url(")).map((a) => a.value))].sort()).toEqual(["url(#heat-legend)", "url(#not-measured)"]);
    expect(tags.filter((t) => /^<(img|iframe|object|embed|link|base|form|input|audio|video|source|frame)\b/i.test(t))).toEqual([]);
    expect(tags.filter((t) => /^<meta/i.test(t) && /refresh/i.test(t))).toEqual([]);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'none'");
    // the only style allowed is the page's own block, by hash
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(csp).toContain(`'sha256-${createHash("sha256").update(css).digest("base64")}'`);
    expect(html).not.toMatch(/\sstyle=/);
  });

  it("shows the hostile text escaped, where it was", () => {
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).toContain(HOSTILE.js); // as text in the evidence and the source file cell
    expect(html).toContain("rtl⟦U+202E⟧txt.exe");
    expect(wellFormed(html)).toBe(true);
    expect(html).not.toContain("\u0000");
  });

  it("has one row per trace, and every tagged number equals summary.json", () => {
    expect([...html.matchAll(/<tr data-trace=/g)]).toHaveLength(diagnoses.length);
    const tagged = [...html.matchAll(/data-key="([^"]+)" data-value="([^"]+)" data-format="([a-z0-9]+)"/g)];
    expect(tagged.length).toBeGreaterThan(100);
    const json = JSON.parse(JSON.stringify(summary));
    for (const [, key, value] of tagged) {
      const expected = at(json, key!);
      expect(expected, key).not.toBeUndefined();
      expect(value === "null" ? null : Number(value), key).toBe(expected);
    }
    // the interventions section shows the ranking summary.json holds
    expect(tagged.some(([, key]) => key!.startsWith("interventions["))).toBe(true);
  });

  it("respects the row cap and says how many traces were left out", () => {
    const capped = renderHtml(buildReportData(summary, diagnoses), { maxTraces: 3 });
    expect([...capped.matchAll(/<tr data-trace=/g)]).toHaveLength(3);
    expect(capped).toContain(`${diagnoses.length - 3} more traces are not shown here`);
  });

  describe("the guard replay section", () => {
    const replay = summary.replay;
    const section = /<section id="replay">[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
    const keys = [...section.matchAll(/data-key="([^"]+)"/g)].map((m) => m[1]!);

    it("is there only when the run has a replay", () => {
      expect(section).toContain("<h2>What the recommended fixes would have caught</h2>");
      expect(html).toContain(`<a href="#replay">`);
      const without = renderHtml(buildReportData(plain, diagnoses));
      expect(without).not.toContain(`id="replay"`);
      expect(without).not.toContain(`href="#replay"`);
    });

    it("shows the totals, every model, guard and cross-tab row of summary.json's replay", () => {
      for (const k of Object.keys(replay.totals)) expect(keys).toContain(`replay.totals.${k}`);
      replay.models.forEach((_, i) => {
        for (const k of ["traces", "intervened", "stopped", "decisions.warn", "decisions.stop", "steps_saved", "tokens_saved", "findings_addressed", "findings"]) expect(keys).toContain(`replay.models[${i}].${k}`);
      });
      replay.guards_summary.forEach((_, i) => {
        for (const k of ["traces", "interventions", "decisions.warn", "decisions.block", "decisions.require", "decisions.stop", "findings_addressed"]) expect(keys).toContain(`replay.guards_summary[${i}].${k}`);
      });
      replay.crosstab.forEach((_, i) => {
        for (const k of ["interventions", "traces_intervened", "traces_with_finding", "traces_caught", "traces_guard_only"]) expect(keys).toContain(`replay.crosstab[${i}].${k}`);
      });
      // the hostile model name is one of the rows, escaped
      expect(section).toContain(`<td>${escapeHtml(HOSTILE.img)}</td>`);
    });

    it("joins each guard to the ranked interventions whose catalogue guard id is that guard", () => {
      const rows = [...section.matchAll(/<tr data-guard="([^"]+)">([\s\S]*?)<\/tr>/g)];
      expect(rows.map((m) => m[1])).toEqual(replay.guards_summary.map((g) => g.guard));
      let ranked = 0;
      for (const [, guard, row] of rows) {
        const entry = INTERVENTIONS.interventions.find((iv) => iv.guard.id === guard);
        if (entry) expect(row).toContain(escapeHtml(entry.name));
        // every ranking cited in the row is this guard's, and every ranking of this guard with leverage is cited
        const cited = new Set([...row!.matchAll(/data-key="(interventions\[\d+\]\.ranking\[\d+\])\.leverage"/g)].map((m) => m[1]!));
        const expected = summary.interventions.flatMap((gi, i) => gi.ranking.flatMap((r, k) => (r.guard.id === guard && r.leverage > 0 ? [`interventions[${i}].ranking[${k}]`] : [])));
        expect([...cited].sort(), guard).toEqual(expected.sort());
        for (const c of cited) expect((at(summary, c) as { guard: { id: string } }).guard.id).toBe(guard);
        ranked += cited.size;
      }
      expect(ranked).toBeGreaterThan(0);
    });

    it("lists the highlights under their titles, hostile text escaped, with the definitions as footnotes", () => {
      for (const kind of Object.keys(HIGHLIGHT_TITLES) as HighlightKind[]) {
        const n = replay.highlights.filter((h) => h.kind === kind).length;
        expect(section).toContain(`<h4 data-highlight-kind="${kind}" data-count="${n}">${escapeHtml(HIGHLIGHT_TITLES[kind])}: ${n} trace${n === 1 ? "" : "s"}</h4>`);
        expect([...section.matchAll(new RegExp(`<li data-highlight="${kind}">`, "g"))]).toHaveLength(n);
      }
      const repeated = replay.highlights.find((h) => h.kind === "repeated_calls")!;
      expect(repeated.reason).toContain(HOSTILE.script); // the guard quoted the failing tool's output
      expect(section).toContain(escapeHtml(repeated.reason));
      expect(section).toContain(`<code>${escapeHtml(HOSTILE.script)}</code>`);
      expect(section).toContain("rtl⟦U+202E⟧txt.exe");
      expect(section).not.toMatch(/<script|<img/);
      // every footnote marker points at a definition, and each definition is summary.json's text
      const targets = [...section.matchAll(/href="#([a-z-]+)"/g)].map((m) => m[1]!).filter((t) => t.startsWith("replay-def-"));
      expect(new Set(targets).size).toBe(4);
      for (const t of targets) expect(section).toContain(`<li id="${t}"`);
      for (const [k, text] of Object.entries(replay.definitions)) {
        expect(section).toContain(`data-definition="${k}"><b>`);
        expect(section).toContain(escapeHtml(text));
      }
    });
  });
});

describe("renderHtml: the decisive step", async () => {
  const diagnoses = decisiveRun();
  const summary = await summarize("run-d", "rules@test", { traces: diagnoses.length }, diagnoses);
  const data = buildReportData(summary, diagnoses);
  const html = renderHtml(data);
  /** The row of one trace, from its opening tag to its end. */
  const row = (id: string) => new RegExp(`<tr data-trace="${escapeHtml(id).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}">[\\s\\S]*?</tr>`).exec(html)?.[0] ?? "";

  it("carries the record's decisive step, or null with its reason, into the report data", () => {
    const t = (id: string) => data.traces.find((x) => x.trace_id === id)!;
    expect(t("a-f0").decisive).toEqual({ mode: "3.3", name: "Incorrect verification", step: 4, agent: "planner", confidence: 0.85, basis: ["steps"], rationale: "Verification skipped before the final answer." });
    expect(t("b-1").decisive).toBeNull();
    expect(t("b-1").decisive_reason).toBe(`no step is on the causal path ${HOSTILE.script}`);
    expect("decisive" in t("a-s0")).toBe(false);
  });

  it("shows the step index, agent, mode and rationale in the trace's row", () => {
    expect(html).toContain("<th>decisive step</th>");
    const r = row("a-f0");
    expect(r).toContain(`<div class="dec" data-decisive-step="4"><b>step 4</b> · planner · FM-3.3 Incorrect verification<br>`);
    expect(r).toContain("confidence 0.85 · based on steps");
    expect(r).toContain(`<div class="why">Verification skipped before the final answer.</div>`);
    // a step without an agent says so; an empty rationale adds nothing
    const noAgent = row("a-f1");
    expect(noAgent).toContain(`<b>step 2</b> · <span class="unk">agent unknown</span> · FM-1.3`);
    expect(noAgent).not.toContain(`class="why"`);
  });

  it("says why there is no decisive step, and shows a dash where the record does not say", () => {
    expect(row("b-1")).toContain(`<div class="dec none" data-decisive="none">no decisive step: no step is on the causal path ${escapeHtml(HOSTILE.script)}</div>`);
    expect(row("a-s0")).toContain(`<td><span class="unk">–</span></td>`);
    expect([...html.matchAll(/data-decisive-step=/g)]).toHaveLength(3);
    expect([...html.matchAll(/data-decisive="none"/g)]).toHaveLength(1);
  });

  it("escapes the agent, rationale and reason (trace text)", () => {
    const r = row(HOSTILE.script);
    expect(r).toContain(`<b>step 1</b> · ${escapeHtml(HOSTILE.script)} · FM-2.6`);
    expect(r).toContain(`<div class="why">The agent acted on ${escapeHtml(HOSTILE.img)} ${HOSTILE.js} bad\uFFFD half\uFFFD nul\uFFFD rtl⟦U+202E⟧txt.exe ok😀</div>`);
    expect(html).not.toMatch(/<script|<img/);
    expect(wellFormed(html)).toBe(true);
  });

  it("cuts a long rationale like a long quote", () => {
    const long = decisiveRun();
    long.find((d) => d.trace_id === "a-f0")!.decisive!.rationale = "x".repeat(50);
    const cut = renderHtml(buildReportData(summary, long), { maxEvidence: 20 });
    expect(cut).toContain(`<div class="why">${"x".repeat(20)}… (30 more characters)</div>`);
  });
});
