import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { LABEL_CSV_HEADER } from "../analysis/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { vectorFromFindings, type Finding } from "../trace/index.js";

/* `faultline eval` and `faultline stats` on a prediction that leaves modes unmeasured (null), end to end. */

const REPO = resolve(import.meta.dirname, "..", "..");
const faultline = (...args: string[]) => spawnSync(process.execPath, [join(REPO, "bin", "faultline.js"), ...args], { cwd: REPO, encoding: "utf8", timeout: 120_000 });

const UNMEASURED = ["1.2", "2.2", "2.3", "2.4", "2.5"];
const MEASURED = MAST_CODES.filter((c) => !UNMEASURED.includes(c));

const finding = (mode: string): Finding => ({ mode, confidence: 0.7, steps: [1], evidence: "q", detector: `rules/${mode}` });
const record = (id: string, success: boolean, findings: Finding[]) =>
  JSON.stringify({
    schema: "faultline.diagnosis/1",
    trace_id: id,
    source: { file: "x.jsonl", format: "openai-chat", index: 0 },
    model: "m",
    framework: null,
    outcome: { success },
    taxonomy: "mast-v3",
    modes: vectorFromFindings(MAST_CODES, findings, MEASURED),
    findings,
    signals: {},
    annotator: "rules",
  });

describe("eval and stats with unmeasured modes", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-nm-"));
  const predicted = join(dir, "findings.jsonl");
  writeFileSync(predicted, [record("a", false, [finding("1.3")]), record("b", false, []), record("c", true, [])].join("\n") + "\n");
  // the reference labels 2.2 present on a and b: a prediction that never looked must not be scored as missing them
  const reference = join(dir, "reference.csv");
  const cells = (present: string[]) => LABEL_CSV_HEADER.slice(3).map((c) => (present.includes(c) ? "1" : "0"));
  writeFileSync(
    reference,
    [LABEL_CSV_HEADER.join(","), ["a", "g", "0", ...cells(["1.3", "2.2"])].join(","), ["b", "g", "0", ...cells(["2.2"])].join(","), ["c", "g", "1", ...cells([])].join(",")].join("\n") + "\n",
  );

  it("eval --json: the unmeasured mode leaves its confusion table and is reported as not measured", () => {
    const r = faultline("eval", "--reference", reference, "--predicted", predicted, "--json");
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    const m22 = out.modes.find((m: { code: string }) => m.code === "2.2");
    expect(m22).toMatchObject({ n: 0, tp: 0, fn: 0, not_measured: 3, recall: null });
    expect(out.not_measured).toEqual(UNMEASURED);
    expect(out.micro.fn).toBe(0); // counted as negatives, the two 2.2 labels would be false negatives
    expect(out.macro.modes).toBe(MEASURED.length);
  });

  it("eval text says 'not measured'", () => {
    const r = faultline("eval", "--reference", reference, "--predicted", predicted);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/FM-2\.2\s+0\s+not measured/);
    expect(r.stdout).toContain("Not measured by the prediction");
  });

  it("stats: prevalence denominators leave the unmeasured traces out; the text lists them as not measured", () => {
    const r = faultline("stats", predicted, "--json");
    expect(r.status, r.stderr).toBe(0);
    const g = JSON.parse(r.stdout).groups[0];
    expect(g.modes.find((m: { code: string }) => m.code === "2.2").judged.all).toBe(0);
    expect(g.modes.find((m: { code: string }) => m.code === "1.3").judged.all).toBe(3);
    const text = faultline("stats", predicted);
    expect(text.stdout).toContain("Not measured (no detector or judge examined them; unknown, not absent): FM-1.2, FM-2.2, FM-2.3, FM-2.4, FM-2.5.");
  });
});
