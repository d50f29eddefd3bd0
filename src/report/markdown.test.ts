import { describe, expect, it } from "vitest";
import { buildReportData } from "./data.js";
import { HOSTILE, hostileReplay, hostileRun } from "../testing/report-fixtures.js";
import { HIGHLIGHT_TITLES, type HighlightKind } from "../trace/index.js";
import { mdText, renderMarkdown } from "./markdown.js";
import { summarize } from "./summary.js";

describe("renderMarkdown", async () => {
  const diagnoses = hostileRun();
  const plain = await summarize("run-1", "rules@test", { traces: diagnoses.length, files: 1, annotated: diagnoses.length - 1, failed: 1 }, diagnoses);
  // with a guard replay whose trace text is hostile too: the syntax checks below cover its section as well
  const summary = { ...plain, replay: hostileReplay() };
  const md = renderMarkdown(buildReportData(summary, diagnoses));

  it("says at the top when the run is incomplete (interrupted), and nothing when it is complete", async () => {
    const { renderHtml } = await import("./html.js");
    const cut = { ...summary, status: "incomplete" as const };
    expect(renderMarkdown(buildReportData(cut, diagnoses))).toContain("**Incomplete:** the run was interrupted");
    expect(renderHtml(buildReportData(cut, diagnoses))).toContain('<strong class="incomplete">incomplete: the run was interrupted');
    expect(md).not.toContain("Incomplete");
    expect(renderHtml(buildReportData({ ...summary, status: "complete" }, diagnoses))).not.toContain('class="incomplete"');
  });

  it("neutralises trace text: no raw HTML, no table breaks, no links", () => {
    expect(mdText(HOSTILE.script)).toBe("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(mdText(HOSTILE.markdown)).toBe("\\| cell \\| break \\# heading \\[link\\](javascript:alert(1)) \\`code\\`");
    expect(mdText("it's <b>")).toBe("it&#39;s &lt;b&gt;"); // entities intact, not backslash-escaped
    expect(md).not.toMatch(/<script|<img/i);
    expect(md).not.toContain("&\\#");
    expect(md).not.toMatch(/\]\(javascript:/);
    // every table row has as many cells as its header (no pipe from trace text broke a row)
    const lines = md.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!/^\| ---/.test(lines[i]!)) continue;
      const width = lines[i]!.split(" | ").length;
      for (let j = i + 1; j < lines.length && lines[j]!.startsWith("| "); j++)
        expect(lines[j]!.replace(/\\\|/g, "").split(" | ").length, lines[j]).toBe(width);
    }
  });

  it("shows the summary's numbers per model, with the ranked interventions", () => {
    const a = summary.statistics.find((g) => g.value === "model-a")!;
    const m33 = a.modes.find((m) => m.code === "3.3")!;
    expect(md).toContain("### model-a");
    // 3.3: 5 of 10 annotated, 0/4 successful, 5/6 failed
    expect(md).toContain(`| FM-3.3 | Incorrect verification | 5/10 (50%) | 0/4 (0%) | 5/6 (83%) | +${m33.delta_pp.value!.toFixed(1)} [`);
    const top = summary.interventions.find((g) => g.value === "model-a")!.ranking[0]!;
    expect(md).toContain(`1. **${top.name}** — leverage ${top.leverage.toFixed(2)}.`);
    expect(md).toContain("Traces that could not be annotated (1)");
  });

  it("renders the guard replay with summary.json's numbers, highlights under their titles and the definitions as footnotes", () => {
    const r = summary.replay;
    expect(renderMarkdown(buildReportData(plain, diagnoses))).not.toContain("What the recommended fixes would have caught");
    const section = md.slice(md.indexOf("## What the recommended fixes would have caught"));
    expect(section).toContain(`${r.totals.intervened} of ${r.totals.traces} traces with an intervention (${r.totals.interventions} interventions)`);
    for (const g of r.guards_summary) {
      const d = g.decisions;
      expect(section).toMatch(new RegExp(`^\\| ${g.guard} \\| [^|]+ \\| [^|]+ \\| ${g.traces} \\| ${g.interventions} \\| ${d.warn} \\| ${d.block} \\| ${d.require} \\| ${d.stop} \\| ${g.findings_addressed} \\|$`, "m"));
    }
    // the loop detector's fix is ranked for model-a (FM-1.3 among its failures): the join names it with its rank
    const loop = summary.interventions.find((g) => g.value === "model-a")!.ranking.find((x) => x.guard.id === "loop-detector")!;
    expect(section).toContain(`- loop-detector (Loop detector): ranked in`);
    expect(section).toContain(`model-a #${loop.rank} (leverage ${loop.leverage.toFixed(2)})`);
    const evil = r.models.find((m) => m.model === HOSTILE.img)!;
    expect(section).toContain(`| ${mdText(HOSTILE.img)} | ${evil.traces} | ${evil.intervened} |`);
    for (const c of r.crosstab) expect(section).toContain(`| FM-${c.mode} | ${c.name} | ${c.guards.join(", ")} | ${c.interventions} | ${c.traces_intervened} | ${c.traces_with_finding} | ${c.traces_caught} | ${c.traces_guard_only} |`);
    for (const kind of Object.keys(HIGHLIGHT_TITLES) as HighlightKind[]) {
      const n = r.highlights.filter((h) => h.kind === kind).length;
      expect(section).toContain(`#### ${mdText(HIGHLIGHT_TITLES[kind])}: ${n} trace${n === 1 ? "" : "s"}`);
    }
    const hit = r.highlights.find((h) => h.kind === "repeated_calls")!;
    expect(section).toContain(`- ${mdText(hit.trace_id)} (${mdText(hit.model)}) step ${hit.step}: loop-detector warn (FM-1.3): ${mdText(hit.reason)}`);
    // every footnote reference has its definition, which is summary.json's text
    const refs = new Set([...section.matchAll(/\[\^([a-z-]+)\](?!:)/g)].map((m) => m[1]!));
    const defs = new Set([...section.matchAll(/^\[\^([a-z-]+)\]: /gm)].map((m) => m[1]!));
    expect(refs).toEqual(defs);
    expect(defs.size).toBe(4);
    for (const text of Object.values(r.definitions)) expect(section).toContain(mdText(text));
  });
});
