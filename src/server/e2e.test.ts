import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyze } from "../pipeline/index.js";
import { Store } from "../store/index.js";
import { corpus } from "../testing/corpus.js";
import { PACKAGE_ROOT } from "./assets.js";
import { buildFixtureStore, HOSTILE_MODEL, recordDecisive, XSS, type FixtureStore } from "./fixtures.js";
import { startServer, type RunningServer } from "./index.js";

/*
 * End-to-end: the real server on 127.0.0.1 (ephemeral port) and Debian's headless Chromium driven by playwright-core.
 * CI installs the browser (.ci/run); on a developer machine without /usr/bin/chromium these tests are skipped with a
 * note, while under CI=true a missing browser fails them.
 */

const CHROMIUM = process.env.FAULTLINE_CHROMIUM ?? "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !process.env.CI) console.warn(`e2e: ${CHROMIUM} not found, skipping the browser tests (apt-get install chromium)`);
export const SCREENSHOT_DIR = join(PACKAGE_ROOT, "out", "screenshots");

let root: string;
let fx: FixtureStore;
let corpusRun: string;
let store: Store;
let server: RunningServer;
let context: BrowserContext;
let profile: string;
/** Run A's traces with a recorded decisive step (every hostile one, at step 1), and one failed trace without. */
const DECISIVE_STEP = 1;
const DECISIVE_RATIONALE = `Acted on the lookup's output without checking it: ${XSS.script} ${XSS.img}`;
const NO_DECISIVE_REASON = `no step is on the causal path ${XSS.img}`;
let decisiveIds: string[];
let noDecisiveId: string;

// Callbacks passed to page.evaluate run in the page; this file is type-checked for Node (no DOM types), so the
// page's globals are declared loosely here, for this module only.
declare const document: any;
declare const window: any;

describe.skipIf(!haveBrowser && !process.env.CI)("dashboard in Chromium", () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "faultline-e2e-"));
    fx = await buildFixtureStore(root, 60);
    corpusRun = (await analyze([corpus("tau-bench"), corpus("who_and_when")], { out: join(root, "out-corpus"), db: fx.db })).runId;
    store = new Store(fx.db);
    // The dashboard shows whatever decisive step the record holds: recorded here as the pipeline would.
    const ofA = store.diagnoses(fx.runA);
    decisiveIds = ofA.filter((d) => d.trace_id.startsWith("hostile:")).map((d) => d.trace_id);
    for (const id of decisiveIds) recordDecisive(store, fx.runA, id, { mode: "1.3", step: DECISIVE_STEP, basis: ["steps", "outcome"], confidence: 0.75, rationale: DECISIVE_RATIONALE });
    noDecisiveId = ofA.find((d) => d.outcome.success === false && !d.trace_id.startsWith("hostile:"))!.trace_id;
    recordDecisive(store, fx.runA, noDecisiveId, null, NO_DECISIVE_REASON);
    server = await startServer(store, { port: 0 });
    profile = mkdtempSync(join(tmpdir(), "faultline-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1400, height: 900 },
    });
  });

  afterAll(async () => {
    await context?.close();
    await server?.close();
    store?.close();
    if (root) rmSync(root, { recursive: true, force: true });
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** A page that records script errors, dialogs and CSP violations, so a test can assert none happened. */
  async function openPage(): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("dialog", (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console: ${m.text()}`);
    });
    await page.addInitScript(() => {
      window.__csp = [];
      document.addEventListener("securitypolicyviolation", (e: { violatedDirective: string; blockedURI: string }) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    return { page, problems };
  }

  /** Runs an action and waits until the app has drawn the given view after it. */
  async function drawn(page: Page, view: string, action: () => Promise<unknown>): Promise<void> {
    const before: string = await page.evaluate(() => document.body?.dataset.ready ?? "").catch(() => "");
    await action();
    await page.waitForFunction(
      ([b, v]) => {
        const ready = document.body.dataset.ready;
        return ready !== undefined && ready !== b && document.body.dataset.view === v && document.getElementById("app")?.getAttribute("aria-busy") === "false";
      },
      [before, view] as const,
    );
  }

  it("opens a run, filters to a mode, opens a trace and highlights the evidence", async () => {
    const { page, problems } = await openPage();
    await drawn(page, "runs", () => page.goto(`${server.url}/`));
    await drawn(page, "overview", () => page.click(`tr[data-run="${corpusRun}"] a`));
    await page.waitForSelector("svg.heatmap");

    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, "overview.png"), fullPage: true });

    // The most common (model, mode) pair of the real run: the detectors decide which, the test follows.
    const all = store.diagnoses(corpusRun);
    const label = (m: string | null) => m ?? "(none)";
    const pairs = new Map<string, number>();
    for (const d of all) for (const [code, v] of Object.entries(d.modes ?? {})) if (v === 1) pairs.set(`${label(d.model)}\u0000${code}`, (pairs.get(`${label(d.model)}\u0000${code}`) ?? 0) + 1);
    const top = [...pairs].sort((a, b) => b[1] - a[1])[0];
    expect(top, "the corpus run has findings").toBeDefined();
    const [model, mode] = top![0].split("\u0000") as [string, string];
    const ofModel = all.filter((d) => label(d.model) === model);
    const withMode = ofModel.filter((d) => d.modes?.[mode] === 1);

    // The heatmap cell says what the store says.
    const cell = page.locator(`svg.heatmap g.cell[data-row="${model}"][data-col="${mode}"]`);
    expect(await cell.textContent()).toContain(`${withMode.length} of ${ofModel.length} traces`);

    // Clicking the cell lists exactly those traces, 50 to a page.
    await drawn(page, "traces", () => cell.click());
    expect(new URL(page.url()).searchParams.get("mode")).toBe(mode);
    const rows = page.locator("table.traces tbody tr");
    expect(await rows.count()).toBe(Math.min(50, withMode.length));
    expect(await page.locator(`table.traces tbody tr .chip.active[data-mode='${mode}']`).count()).toBe(Math.min(50, withMode.length));
    expect(await page.locator(".pager .status").getAttribute("data-total")).toBe(String(withMode.length));

    // The mode filter works from the select as well: all models, failures only.
    await drawn(page, "traces", () => page.selectOption("select[name=model]", ""));
    await drawn(page, "traces", () => page.selectOption("select[name=outcome]", "failure"));
    const failedWithMode = all.filter((d) => d.modes?.[mode] === 1 && d.outcome.success === false);
    expect(await page.locator(".pager .status").getAttribute("data-total")).toBe(String(failedWithMode.length));

    // Open the first trace: the finding of that mode is selected and its evidence is highlighted in view.
    const first = await rows.first().getAttribute("data-trace");
    await drawn(page, "trace", () => rows.first().locator("a.trace-link").click());
    const mark = page.locator("mark.evidence").first();
    await mark.waitFor();
    const diagnosis = all.find((d) => d.trace_id === first)!;
    const finding = diagnosis.findings.find((f) => f.mode === mode)!;
    const squeeze = (s: string) => s.replace(/\s+/g, "");
    expect(squeeze((await mark.textContent()) ?? "")).toBe(squeeze(finding.evidence));
    expect(await page.locator("li.finding.selected").getAttribute("data-mode")).toBe(mode);
    const step = page.locator("li.step.has-evidence").first();
    expect(finding.steps).toContain(Number(await step.getAttribute("data-step")));
    expect(await mark.isVisible()).toBe(true);
    const box = (await mark.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(900);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the decisive step in a panel, highlights that step apart from the evidence, and scrolls to it", async () => {
    const { page, problems } = await openPage();
    // the hostile trace with the 80-line output: long enough that its step 1 is off-screen once scrolled down
    const id = decisiveIds.find((x) => x.startsWith("hostile:<b>0</b>"))!;
    const trace = store.trace(fx.runA, id)!;
    const agent = trace.steps[DECISIVE_STEP]!.agent;
    await drawn(page, "trace", () => page.goto(`${server.url}/traces/${encodeURIComponent(id)}?run=${fx.runA}`));

    const panel = page.locator("aside .decisive-panel");
    expect(await panel.isVisible()).toBe(true);
    expect(await panel.getAttribute("data-decisive-step")).toBe(String(DECISIVE_STEP));
    const text = await panel.innerText();
    expect(text).toContain("Decisive step");
    expect(text).toContain(`#${DECISIVE_STEP}`);
    expect(text).toContain(agent); // the hostile agent name, as text
    expect(text).toContain("1.3");
    expect(text).toContain("Step repetition");
    expect(text).toContain("75%");
    expect(text).toContain(DECISIVE_RATIONALE); // markup in the rationale is text
    expect(await panel.locator("img, script").count()).toBe(0);

    // exactly that step is highlighted, with its own badge and an outline the other steps lack
    const marked = page.locator("li.step.decisive-step");
    expect(await marked.count()).toBe(1);
    expect(await marked.getAttribute("data-step")).toBe(String(DECISIVE_STEP));
    expect(await marked.locator(".badge.decisive").innerText()).toBe("decisive step");
    type Styled = { ownerDocument: { defaultView: { getComputedStyle(e: unknown): { outlineStyle: string; outlineColor: string } } } };
    const outline = (sel: string) => page.locator(sel).evaluate((el: Styled) => el.ownerDocument.defaultView.getComputedStyle(el).outlineStyle);
    expect(await outline("li.step.decisive-step")).toBe("solid");
    expect(await outline(`li.step[data-step="${DECISIVE_STEP + 1}"]`)).toBe("none");
    // distinct from the finding-evidence highlight: no step is cited until a finding is chosen
    expect(await page.locator("li.step.cited").count()).toBe(0);

    // scrolled away, the button brings the step back into view
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const offscreen = (await marked.boundingBox())!;
    expect(offscreen.y + offscreen.height).toBeLessThan(0);
    await panel.locator("button[data-decisive-jump]").click();
    await page.waitForFunction((n) => {
      const r = document.querySelector(`li.step[data-step="${n}"]`).getBoundingClientRect();
      return r.top >= 0 && r.bottom <= window.innerHeight;
    }, DECISIVE_STEP);
    expect(await marked.isVisible()).toBe(true);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, "decisive-step.png") });

    // choosing a finding highlights its evidence and leaves the decisive step marked
    await page.locator("li.finding").first().click();
    expect(await page.locator("li.step.cited").count()).toBeGreaterThan(0);
    expect(await page.locator("li.step.decisive-step").count()).toBe(1);

    // a record that says there is no decisive step: the panel gives the reason, no step is marked
    await drawn(page, "trace", () => page.goto(`${server.url}/traces/${encodeURIComponent(noDecisiveId)}?run=${fx.runA}`));
    expect(await page.locator("aside .decisive-panel[data-decisive='none']").innerText()).toContain(`No decisive step: ${NO_DECISIVE_REASON}`);
    expect(await page.locator("li.step.decisive-step").count()).toBe(0);
    // run B's copy of the trace, as its record has it: no panel when the record does not address a decisive step
    const inB = store.diagnoses(fx.runB).find((d) => d.trace_id === id)!;
    await drawn(page, "trace", () => page.goto(`${server.url}/traces/${encodeURIComponent(id)}?run=${fx.runB}`));
    expect(await page.locator("aside .decisive-panel").count()).toBe(inB.decisive === undefined ? 0 : 1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("searches as you type, keeping the caret in the search box", async () => {
    const { page, problems } = await openPage();
    await drawn(page, "traces", () => page.goto(`${server.url}/runs/${fx.runA}/traces`));
    const hostile = store.diagnoses(fx.runA).filter((d) => d.trace_id.startsWith("hostile:")).length;
    await drawn(page, "traces", () => page.locator("input[name=q]").pressSequentially("__xss", { delay: 30 }));
    await page.waitForFunction((n) => document.querySelector(".pager .status")?.getAttribute("data-total") === n, String(hostile));
    expect(new URL(page.url()).searchParams.get("q")).toBe("__xss");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("q");
    expect(await page.locator("table.traces tbody tr").count()).toBe(hostile);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("collapses long tool output and expands it on demand", async () => {
    const { page } = await openPage();
    // fixture:0007 has an 80-line read_log output.
    await drawn(page, "trace", () => page.goto(`${server.url}/traces/${encodeURIComponent("fixture:0007")}?run=${fx.runA}`));
    const output = page.locator("pre.content.output").filter({ hasText: "log line 0:" });
    expect(await output.textContent()).not.toContain("log line 79");
    await page.getByRole("button", { name: /Show all .* characters \(80 lines\)/ }).click();
    expect(await page.locator("pre.content.output").filter({ hasText: "log line 0:" }).textContent()).toContain("log line 79");
    await page.close();
  });

  it("renders hostile trace text as text: nothing executes anywhere", async () => {
    const { page, problems } = await openPage();
    const hostileId = store.diagnoses(fx.runA).find((d) => d.trace_id.startsWith("hostile:"))!.trace_id;
    const visits: [string, string][] = [
      ["runs", "/"],
      ["overview", `/runs/${fx.runA}`],
      ["traces", `/runs/${fx.runA}/traces?q=${encodeURIComponent("__xss")}`],
      ["trace", `/traces/${encodeURIComponent(hostileId)}?run=${fx.runA}&mode=1.3`],
      ["compare", `/compare?a=${fx.runA}&b=${fx.runB}`],
    ];
    for (const [view, path] of visits) {
      await drawn(page, view, () => page.goto(`${server.url}${path}`));
      await page.mouse.move(300, 300);
      type El = { tagName: string; attributes: Iterable<{ name: string }>; getAttribute(n: string): string | null };
      const state: { xss: unknown; csp: string[]; scripts: (string | null)[]; injected: number; handlers: string[]; hrefs: string[]; text: string } = await page.evaluate(() => ({
        xss: window.__xss,
        csp: window.__csp ?? [],
        scripts: [...(document.scripts as Iterable<El>)].map((s) => s.getAttribute("src")),
        injected: document.querySelectorAll("img, iframe, object, embed, foreignObject, svg svg").length,
        handlers: [...(document.querySelectorAll("*") as Iterable<El>)].flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${el.tagName}[${a.name}]`)),
        hrefs: [...(document.querySelectorAll("[href]") as Iterable<El>)].map((a) => a.getAttribute("href")!),
        text: document.body.innerText,
      }));
      expect(state.xss, view).toBeUndefined();
      expect(state.csp, view).toEqual([]);
      expect(state.scripts, view).toEqual(["/assets/app.js"]);
      expect(state.injected, view).toBe(0);
      expect(state.handlers, view).toEqual([]);
      for (const href of state.hrefs) expect(href, `${view}: ${href}`).toMatch(/^(\/|https?:\/\/|data:,$)/);
      if (view === "overview" || view === "traces") expect(state.text, view).toContain(HOSTILE_MODEL);
      if (view === "trace") {
        expect(state.text).toContain(XSS.script);
        expect(state.text).toContain(XSS.img);
        expect(state.text).toContain(XSS.jsLink);
        expect(state.text).toContain("surrogate");
        // An invisible right-to-left override is shown as a code, not obeyed.
        expect(state.text).toContain("[U+202E]evil[U+202C]");
        // The one http(s) URL is a real link, opened without opener or referrer; javascript: stays text.
        const safe = page.locator(`a.ext[href="${XSS.safeUrl}"]`).first();
        expect(await safe.getAttribute("rel")).toBe("noopener noreferrer nofollow");
        expect(await safe.getAttribute("target")).toBe("_blank");
        expect(await page.locator("a[href^='javascript']").count()).toBe(0);
        // The highlighted evidence itself quotes the payload, still as text.
        expect(await page.locator("mark.evidence").first().textContent()).toContain("<script>");
      }
    }
    expect(problems).toEqual([]);
    await page.close();
  });

  it("asks for the token when the server needs one, then works with it", async () => {
    const guarded = await startServer(store, { port: 0, token: "e2e-token" });
    try {
      const { page } = await openPage();
      await drawn(page, "runs", () => page.goto(`${guarded.url}/`));
      expect(await page.locator("form.token").count()).toBe(1);
      // The address printed by `faultline serve` carries the token in the fragment; the app drops it from the bar.
      await drawn(page, "runs", () => page.goto(`${guarded.url}/runs#token=e2e-token`));
      expect(await page.locator("table.runs tbody tr").count()).toBe(3);
      expect(new URL(page.url()).hash).toBe("");
      await page.close();
    } finally {
      await guarded.close();
    }
  });
});
