import { describe, expect, it } from "vitest";
import { buildReportData } from "./data.js";
import { HOSTILE, hostileRun } from "../testing/report-fixtures.js";
import { mdText, renderMarkdown } from "./markdown.js";
import { summarize } from "./summary.js";

describe("renderMarkdown", async () => {
  const diagnoses = hostileRun();
  const summary = await summarize("run-1", "rules@test", { traces: diagnoses.length, files: 1, annotated: diagnoses.length - 1, failed: 1 }, diagnoses);
  const md = renderMarkdown(buildReportData(summary, diagnoses));

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
});
