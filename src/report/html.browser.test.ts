import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpus } from "../testing/corpus.js";
import { INTERVENTIONS } from "../analysis/index.js";
import { HIGHLIGHT_TITLES, type HighlightKind } from "../trace/index.js";
import { buildReportData } from "./data.js";
import { decisiveRun, HOSTILE, hostileReplay, hostileRun } from "../testing/report-fixtures.js";
import { renderHtml } from "./html.js";
import { summarize, type RunSummary } from "./summary.js";

/*
 * report.html in a real browser: `faultline analyze ../shared/corpus` (the CLI, end to end), then Debian's headless
 * Chromium through playwright-core. Checks that the page renders with its own styles, loads nothing, runs nothing,
 * and that every number it shows equals summary.json. Screenshots go to out/report-screenshots/ (git-ignored).
 * Without /usr/bin/chromium the tests are skipped with a note; under CI=true a missing browser fails them.
 */

const REPO = resolve(import.meta.dirname, "..", "..");
const CHROMIUM = process.env.FAULTLINE_CHROMIUM ?? "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !process.env.CI) console.warn(`report browser test: ${CHROMIUM} not found, skipping (apt-get install chromium)`);
const SCREENSHOTS = join(REPO, "out", "report-screenshots");

/** The formatting rules the report promises (html.ts formatNumber), written out again independently. */
function expectedText(value: number | null, format: string): string {
  if (value === null) return "–";
  if (format === "pct") return `${Math.round(value * 100)}%`;
  if (format === "int") return String(value);
  if (format === "num2") return value.toFixed(2);
  if (format === "pp") return `${value >= 0 ? "+" : ""}${value.toFixed(1)}`;
  if (format === "p") return value < 0.001 ? "<0.001" : value.toFixed(3);
  throw new Error(`unknown format ${format}`);
}

function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/\[(\d+)\]/g, ".$1").split(".")) cur = (cur as Record<string, unknown> | undefined)?.[part];
  return cur;
}

interface Tagged {
  key: string;
  value: string;
  format: string;
  text: string;
}

/** Elements as the page sees them; the callbacks run in the browser (typed loosely: this file has no DOM types). */
type El = { getAttribute(name: string): string | null; textContent: string | null };

describe.skipIf(!haveBrowser && !process.env.CI)("report.html in Chromium", () => {
  let browser: Browser;
  let work: string;
  let out: string;
  let summary: RunSummary;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "faultline-report-"));
    out = join(work, "out");
    const r = spawnSync(process.execPath, [join(REPO, "bin", "faultline.js"), "analyze", corpus(), "--out", out, "--db", join(work, "store.db"), "--quiet"], {
      cwd: REPO,
      encoding: "utf8",
      timeout: 300_000,
    });
    if (r.status !== 0 && r.status !== 2) throw new Error(`faultline analyze failed (${r.status}): ${r.stderr}`);
    summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as RunSummary;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Opens a file with every network request refused and recorded, and script errors, dialogs and console errors collected. */
  async function open(file: string): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    const problems: string[] = [];
    const self = pathToFileURL(file).href;
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url === self) return route.continue();
      requests.push(url);
      return route.abort();
    });
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("dialog", (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(self, { waitUntil: "load" });
    return { page, requests, problems };
  }

  it("analyze wrote report.html, report.md and the CSVs beside findings.jsonl and summary.json", () => {
    for (const f of ["findings.jsonl", "summary.json", "report.html", "report.md", "traces.csv", "groups.csv", "interventions.csv"]) expect(existsSync(join(out, f)), f).toBe(true);
    expect(summary.counts.traces).toBeGreaterThan(500);
    expect(summary.statistics.length).toBeGreaterThan(5);
  });

  it("renders offline with its own styles: no request, no script, no console error", async () => {
    const { page, requests, problems } = await open(join(out, "report.html"));
    try {
      expect(requests).toEqual([]);
      expect(problems).toEqual([]);
      expect(await page.locator("script").count()).toBe(0);
      // the inline style block applied (the CSP allows it by hash): the body font is the report's, tables collapse
      expect(await page.locator("table").first().evaluate((t: { ownerDocument: { defaultView: { getComputedStyle(e: unknown): { borderCollapse: string } } } }) => t.ownerDocument.defaultView.getComputedStyle(t).borderCollapse)).toBe("collapse");
      for (const id of ["models", "heatmap", "deltas", "modes-per-failed", "cooccurrence", "interventions", "replay", "traces"]) {
        const box = await page.locator(`section#${id}`).boundingBox();
        expect(box?.height ?? 0, id).toBeGreaterThan(40);
      }
      expect(await page.locator("#heatmap svg rect").count()).toBeGreaterThanOrEqual(summary.statistics.length * 14);
      expect(await page.locator("#deltas svg").count()).toBe(summary.statistics.filter((g) => g.successes > 0 && g.failures > 0 && g.annotated > 0).length);
      expect(await page.locator("#traces tbody tr").count()).toBe(Math.min(summary.counts.traces!, 5000));
      await page.screenshot({ path: join(SCREENSHOTS, "corpus-report.png"), fullPage: false });
      await page.locator("#heatmap").screenshot({ path: join(SCREENSHOTS, "corpus-heatmap.png") });
      await page.locator("#interventions").screenshot({ path: join(SCREENSHOTS, "corpus-interventions.png") });
      await page.locator("#replay").screenshot({ path: join(SCREENSHOTS, "corpus-replay.png") });
      expect(existsSync(join(SCREENSHOTS, "corpus-report.png"))).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("every number shown equals summary.json", async () => {
    const { page } = await open(join(out, "report.html"));
    try {
      const tagged: Tagged[] = await page.locator("[data-key]").evaluateAll((els: El[]) =>
        els.map((e) => ({ key: e.getAttribute("data-key")!, value: e.getAttribute("data-value")!, format: e.getAttribute("data-format")!, text: e.textContent ?? "" })),
      );
      // per model: 14 heatmap cells and 10 numbers in the models table, at least
      expect(tagged.length).toBeGreaterThanOrEqual(summary.statistics.length * 24);
      const mismatches: string[] = [];
      for (const t of tagged) {
        const expected = at(summary, t.key);
        if (expected === undefined || (expected !== null && typeof expected !== "number")) {
          mismatches.push(`${t.key}: not a number in summary.json`);
          continue;
        }
        if ((t.value === "null" ? null : Number(t.value)) !== expected) mismatches.push(`${t.key}: data-value ${t.value} ≠ ${expected}`);
        if (t.text !== expectedText(expected, t.format)) mismatches.push(`${t.key}: shows "${t.text}", summary.json gives ${expected}`);
      }
      expect(mismatches).toEqual([]);
      // every model's headline numbers are among them
      summary.statistics.forEach((g, i) => {
        for (const k of ["traces", "failures", "success_rate.estimate", "modes_per_failed_trace.mean"]) expect(tagged.some((t) => t.key === `statistics[${i}].${k}`), `${g.value} ${k}`).toBe(true);
        for (let j = 0; j < g.modes.length; j++) expect(tagged.some((t) => t.key === `statistics[${i}].modes[${j}].prevalence.all`)).toBe(true);
      });
      expect(tagged.filter((t) => t.key.startsWith("interventions[")).length).toBeGreaterThan(0);

      // the guard replay ("what the recommended fixes would have caught"): every total, model, guard and cross-tab row
      const replay = summary.replay!;
      expect(replay.totals.traces).toBe(summary.counts.traces);
      const keys = new Set(tagged.map((t) => t.key));
      for (const k of Object.keys(replay.totals)) expect(keys.has(`replay.totals.${k}`), k).toBe(true);
      replay.models.forEach((m, i) => {
        for (const k of ["traces", "intervened", "stopped", "decisions.warn", "decisions.block", "decisions.require", "decisions.stop", "steps_saved", "tokens_saved", "findings_addressed", "findings"])
          expect(keys.has(`replay.models[${i}].${k}`), `${m.model} ${k}`).toBe(true);
      });
      replay.guards_summary.forEach((g, i) => {
        for (const k of ["traces", "interventions", "decisions.warn", "decisions.block", "decisions.require", "decisions.stop", "findings_addressed"]) expect(keys.has(`replay.guards_summary[${i}].${k}`), `${g.guard} ${k}`).toBe(true);
      });
      replay.crosstab.forEach((c, i) => {
        for (const k of ["interventions", "traces_intervened", "traces_with_finding", "traces_caught", "traces_guard_only"]) expect(keys.has(`replay.crosstab[${i}].${k}`), `${c.mode} ${k}`).toBe(true);
      });
      // each guard row names its catalogue fix and cites exactly the rankings whose guard id is that guard
      const guardRows: { guard: string; text: string; rankings: string[] }[] = await page.locator("#replay tr[data-guard]").evaluateAll((els: (El & { querySelectorAll(s: string): El[] })[]) =>
        els.map((e) => ({
          guard: e.getAttribute("data-guard")!,
          text: e.textContent ?? "",
          rankings: [...e.querySelectorAll("[data-key$='.leverage']")].map((x) => x.getAttribute("data-key")!.replace(/\.leverage$/, "")),
        })),
      );
      expect(guardRows.map((r) => r.guard)).toEqual(replay.guards_summary.map((g) => g.guard));
      for (const row of guardRows) {
        const entry = INTERVENTIONS.interventions.find((iv) => iv.guard.id === row.guard);
        if (entry) expect(row.text).toContain(entry.name);
        const expected = summary.interventions.flatMap((gi, i) => gi.ranking.flatMap((r, k) => (r.guard.id === row.guard && r.leverage > 0 ? [`interventions[${i}].ranking[${k}]`] : [])));
        expect([...row.rankings].sort(), row.guard).toEqual(expected.sort());
      }
      // the highlights, grouped under their titles, as many as summary.json lists of each kind (up to 50 shown)
      for (const kind of Object.keys(HIGHLIGHT_TITLES) as HighlightKind[]) {
        const n = replay.highlights.filter((h) => h.kind === kind).length;
        const heading = page.locator(`#replay h4[data-highlight-kind="${kind}"]`);
        expect(await heading.getAttribute("data-count"), kind).toBe(String(n));
        expect(await heading.textContent()).toBe(`${HIGHLIGHT_TITLES[kind]}: ${n} trace${n === 1 ? "" : "s"}`);
        expect(await page.locator(`#replay li[data-highlight="${kind}"]`).count(), kind).toBe(Math.min(n, 50));
      }
      // the definitions are the footnotes, each marker pointing at one
      for (const [k, text] of Object.entries(replay.definitions)) expect(await page.locator(`#replay li[data-definition="${k}"]`).textContent()).toContain(text);
      const markers: string[] = await page.locator("#replay sup a").evaluateAll((els: El[]) => els.map((e) => e.getAttribute("href")!));
      expect(markers.length).toBeGreaterThan(0);
      for (const m of new Set(markers)) expect(await page.locator(`#replay ${m}[data-definition]`).count(), m).toBe(1);

      // the modes-per-failed-trace histograms (counted from findings.jsonl) agree with summary.json's mean and n
      const bars: { model: string; k: number; n: number }[] = await page.locator("[data-histogram]").evaluateAll((els: El[]) =>
        els.map((e) => ({ model: e.getAttribute("data-histogram")!, k: Number(e.getAttribute("data-modes")), n: Number(e.getAttribute("data-count")) })),
      );
      for (const g of summary.statistics.filter((x) => x.modes_per_failed_trace.n > 0)) {
        const mine = bars.filter((b) => b.model === g.value);
        const n = mine.reduce((s, b) => s + b.n, 0);
        expect(n, g.value).toBe(g.modes_per_failed_trace.n);
        expect(mine.reduce((s, b) => s + b.k * b.n, 0) / n).toBeCloseTo(g.modes_per_failed_trace.mean!, 10);
      }
    } finally {
      await page.close();
    }
  });

  it("shows hostile trace text as text and runs none of it", async () => {
    const diagnoses = hostileRun();
    const s = { ...(await summarize("hostile", "rules@test", { traces: diagnoses.length }, diagnoses)), replay: hostileReplay() };
    const file = join(work, "hostile.html");
    writeFileSync(file, renderHtml(buildReportData(s, diagnoses)));
    const { page, requests, problems } = await open(file);
    try {
      expect(problems).toEqual([]); // no alert dialog, no script error
      expect(requests).toEqual([]); // the <img src=x> in the text never loaded
      expect(await page.locator("script, img, iframe").count()).toBe(0);
      const row = page.locator("#traces tbody tr").filter({ hasText: "alert(" }).first();
      await row.locator("summary").first().click();
      const quote = (await row.locator("blockquote").first().textContent()) ?? "";
      expect(quote).toContain(HOSTILE.script);
      expect(quote).toContain(HOSTILE.img);
      expect(quote).toContain(HOSTILE.js);
      expect(quote).toContain("rtl⟦U+202E⟧txt.exe");
      expect(quote).toContain("bad\uFFFD half\uFFFD nul\uFFFD");
      expect(await page.locator("a[href^='javascript']").count()).toBe(0);
      // the guard replay quotes a failing tool's hostile output in its highlight: shown as text too
      const highlight = (await page.locator(`#replay li[data-highlight="repeated_calls"]`).textContent()) ?? "";
      expect(highlight).toContain(HOSTILE.script);
      expect(highlight).toContain(HOSTILE.img);
      expect(highlight).toContain("rtl⟦U+202E⟧txt.exe");
      await page.screenshot({ path: join(SCREENSHOTS, "hostile-report.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("shows each trace's decisive step, or why there is none, in its row", async () => {
    const diagnoses = decisiveRun();
    const s = await summarize("decisive", "rules@test", { traces: diagnoses.length }, diagnoses);
    const file = join(work, "decisive.html");
    writeFileSync(file, renderHtml(buildReportData(s, diagnoses)));
    const { page, requests, problems } = await open(file);
    try {
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
      const heads: string[] = await page.locator("#traces thead th").evaluateAll((els: El[]) => els.map((e) => e.textContent ?? ""));
      expect(heads).toContain("decisive step");
      // a decisive step: index, agent, mode and rationale, visible in its trace's row
      const step = page.locator(`#traces tr[data-trace="a-f0"] [data-decisive-step="4"]`);
      expect(await step.isVisible()).toBe(true);
      const text = await step.innerText();
      expect(text).toContain("step 4 · planner · FM-3.3 Incorrect verification");
      expect(text).toContain("confidence 0.85");
      expect(text).toContain("Verification skipped before the final answer.");
      // marked apart from the rest of the row
      type Styled = { ownerDocument: { defaultView: { getComputedStyle(e: unknown): { borderLeftStyle: string; borderLeftWidth: string } } } };
      expect(await step.evaluate((e: Styled) => e.ownerDocument.defaultView.getComputedStyle(e).borderLeftStyle)).toBe("solid");
      // the hostile trace's agent and rationale are shown as text
      const hostile = page.locator(`#traces [data-decisive-step="1"]`);
      expect(await hostile.isVisible()).toBe(true);
      const hostileText = await hostile.innerText();
      expect(hostileText).toContain(`step 1 · ${HOSTILE.script} · FM-2.6`);
      expect(hostileText).toContain(HOSTILE.img);
      expect(hostileText).toContain("rtl⟦U+202E⟧txt.exe");
      // no decisive step: the reason, as text
      const none = page.locator(`#traces [data-decisive="none"]`);
      expect(await none.count()).toBe(1);
      expect(await none.isVisible()).toBe(true);
      expect(await none.innerText()).toBe(`no decisive step: no step is on the causal path ${HOSTILE.script}`);
      expect(await page.locator("script, img, iframe").count()).toBe(0);
      await page.locator(`#traces tr[data-trace="a-f0"]`).screenshot({ path: join(SCREENSHOTS, "decisive-row.png") });
    } finally {
      await page.close();
    }
  });
});
