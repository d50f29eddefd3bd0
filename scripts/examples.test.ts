import { mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { checkExamples } from "./check-examples.js";

const ROOT = join(import.meta.dirname, "..");
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));

describe("bundled examples", () => {
  it("are exactly what the deterministic generator writes", () => {
    const out = mkdtempSync(join(tmpdir(), "faultline-gen-"));
    execFileSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts", "generate-examples.ts"), out], { cwd: ROOT });
    for (const f of files(out)) expect(readFileSync(f, "utf8"), relative(out, f)).toBe(readFileSync(join(ROOT, "examples", relative(out, f)), "utf8"));
  });

  it("the rule detectors recover every injected mode and outcome", async () => {
    const { report, outcomes, traces } = await checkExamples(join(ROOT, "examples"));
    expect(traces).toBe(31);
    expect(report.matching.matched).toBe(31);
    const missed = report.modes.filter((m) => m.fp + m.fn > 0).map((m) => `${m.code}: fp ${m.fp}, fn ${m.fn}`);
    expect(missed).toEqual([]);
    expect(report.modes.filter((m) => m.tp > 0).map((m) => m.code)).toEqual(["1.1", "1.3", "2.1", "2.6", "3.1", "3.2", "3.3"]);
    expect(outcomes.filter((o) => o.expected !== o.got)).toEqual([]);
  });
});
