import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { groupStatistics, loadLabels } from "../analysis/index.js";
import { analyze } from "../pipeline/index.js";
import { MAST_CODES } from "../taxonomy/index.js";
import { corpus } from "../testing/corpus.js";
import type { Diagnosis } from "../trace/index.js";

/* The stats, eval, diff and export commands end to end, through bin/faultline.js. */

const REPO = resolve(import.meta.dirname, "..", "..");
const EXAMPLES = join(REPO, "examples");

function faultline(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO, "bin", "faultline.js"), ...args], { cwd: REPO, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Diagnosis);

describe("analysis commands", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-cli-"));
  let examples: string;

  beforeAll(async () => {
    examples = (await analyze([EXAMPLES], { out: join(dir, "examples"), db: join(dir, "store.db") })).findingsPath;
  });

  it("stats --json gives groupStatistics of the file, plus interventions", async () => {
    const r = faultline("stats", join(EXAMPLES, "labels.csv"), "--by", "group", "--json");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const expected = groupStatistics((await loadLabels(join(EXAMPLES, "labels.csv"))).rows, { by: "group" });
    expect(out.by).toBe("group");
    expect(out.groups).toEqual(JSON.parse(JSON.stringify(expected.groups)));
    expect(out.interventions.map((g: { value: string }) => g.value)).toEqual(expected.groups.map((g) => g.value));
    expect(out.input).toMatchObject({ format: "csv", rows: 31, skipped: 0 });
    const text = faultline("stats", examples, "--by", "model");
    expect(text.status).toBe(0);
    expect(text.stdout).toContain("model = kimi-k2");
  });

  it("stats on a missing input is a usage error naming it", () => {
    const r = faultline("stats", join(dir, "nope.jsonl"), "--db", join(dir, "none.db"));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("nope.jsonl: no such file or folder");
  });

  it("eval on Who&When scores the rules' decisive step against the gold attribution, every trace matched", async () => {
    const ww = (await analyze([corpus("who_and_when")], { out: join(dir, "ww"), db: join(dir, "store.db") })).findingsPath;
    const r = faultline("eval", "--reference", ww, "--predicted", ww, "--json");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    const diagnoses = lines(ww);
    expect(out.matching.matched).toBe(diagnoses.length);
    expect(out.matching.reference_only).toEqual([]);
    expect(out.matching.predicted_only).toEqual([]);
    const gold = diagnoses.map((d) => (d.reference as { goldLabels: { mistakeAgent?: string }[] }).goldLabels[0]!);
    expect(out.attribution.agent.total).toBe(gold.filter((g) => g.mistakeAgent).length);
    // a trace without a decisive step has no predicted agent or step: counted wrong, and counted
    expect(out.attribution.step.missing_prediction).toBe(diagnoses.filter((d) => !d.decisive).length);
    expect(out.attribution.agent.accuracy).toBe(out.attribution.agent.correct / out.attribution.agent.total);
  });

  it("eval lists references without gold instead of comparing a diagnosis with itself", () => {
    const file = join(dir, "partial-gold.jsonl");
    const ds = lines(examples).slice(0, 4);
    ds[0]!.reference = { goldLabels: [{ source: "test", mistakeAgent: "codex", mistakeStep: 3 }] };
    writeFileSync(file, ds.map((d) => JSON.stringify(d)).join("\n"));
    const r = faultline("eval", "--reference", file, "--predicted", file, "--json");
    expect(r.status).toBe(2); // some traces unmatched
    const out = JSON.parse(r.stdout);
    expect(out.matching.matched).toBe(1);
    expect(out.matching.predicted_only).toHaveLength(3);
    expect(out.reference.diagnostics.filter((d: { message: string }) => /no gold labels/.test(d.message))).toHaveLength(3);
  });

  it("diff finds the traces whose labels changed and the modes that fell", () => {
    const after = join(dir, "after.jsonl");
    const ds = lines(examples);
    const touched = ds.filter((d) => d.modes?.["3.1"] === 1).map((d) => d.trace_id);
    expect(touched.length).toBeGreaterThan(0);
    for (const d of ds)
      if (d.modes?.["3.1"] === 1) {
        d.modes["3.1"] = 0;
        d.findings = d.findings.filter((f) => f.mode !== "3.1");
      }
    writeFileSync(after, ds.map((d) => JSON.stringify(d)).join("\n"));
    const r = faultline("diff", examples, after, "--json");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.changed.map((c: { trace_id: string }) => c.trace_id).sort()).toEqual([...touched].sort());
    for (const c of out.changed) expect(c).toMatchObject({ added: [], removed: ["3.1"] });
    const m31 = out.groups[0].modes.find((m: { code: string }) => m.code === "3.1");
    expect(m31).toMatchObject({ test: "mcnemar-exact", direction: "fell" });
    expect(m31.paired).toMatchObject({ fell: touched.length, rose: 0 });
  });

  it("export --otlp writes one record per finding and per absent mode", () => {
    const out = join(dir, "labels.otlp.json");
    const r = faultline("export", "--otlp", examples, "-o", out);
    expect(r.status).toBe(0);
    const doc = JSON.parse(readFileSync(out, "utf8"));
    const records = doc.resourceLogs[0].scopeLogs[0].logRecords;
    const ds = lines(examples);
    const expected = ds.reduce((n, d) => n + d.findings.length + MAST_CODES.filter((c) => d.modes?.[c] === 0).length, 0);
    expect(records).toHaveLength(expected);
    // the OTLP example traces keep their ids; the others are listed as without ids
    const otlp = ds.filter((d) => d.source.format === "otlp-traces");
    expect(new Set(records.filter((x: { traceId?: string }) => x.traceId).map((x: { traceId: string }) => x.traceId))).toEqual(new Set(otlp.map((d) => d.trace_id)));
    expect(r.stderr).toContain(`${otlp.length} traces tied to their OTLP trace ids`);
  });
});
