import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpus } from "../../testing/corpus.js";
import {
  isEvalInstanceLog,
  isEvalMarkdown,
  isResultsSummary,
  isSwebenchReport,
  parseEvalMarkdown,
  verdictFromEvalLog,
  verdictFromReport,
  verdictFromResultsSummary,
} from "./swebench.js";

describe("SWE-bench result files", () => {
  it("parses OpenHands' output.swebench_eval.md: the summary counts match the instance lists", () => {
    const text = readFileSync(corpus("openhands", "swebench-verified_claude-3.5-sonnet", "output.swebench_eval.md"), "utf8");
    expect(isEvalMarkdown(text)).toBe(true);
    const statuses = parseEvalMarkdown(text);
    const count = (label: string) => Number(text.match(new RegExp(`- ${label} instances: (\\d+)`))![1]);
    expect([...statuses.values()].filter((s) => s === "resolved")).toHaveLength(count("resolved"));
    expect(statuses.get("astropy__astropy-12907")).toBe("resolved");
    expect(statuses.get("astropy__astropy-13033")).toBe("unresolved");
    // listed under both Unresolved and Empty Patch: the more specific, later section wins
    expect(statuses.get("django__django-11265")).toBe("empty_patch");
  });

  it("reads the per-instance evaluation log only for its own instance", () => {
    const log = readFileSync(corpus("openhands", "swebench-verified_claude-3.5-sonnet", "output.swebench_eval.logs", "instance_django__django-11141.log"), "utf8");
    expect(isEvalInstanceLog(log)).toBe(true);
    expect(verdictFromEvalLog(log, "django__django-11141")).toEqual({ resolved: false, status: "unresolved" });
    expect(verdictFromEvalLog(log, "django__django-10973")).toBeUndefined();
  });

  it("reads report.json per instance, keyed by instance, and run-level; and results_summary.json", () => {
    const report = JSON.parse(readFileSync(corpus("mini-swe-agent", "logs", "sympy__sympy-23534", "report.json"), "utf8"));
    expect(isSwebenchReport(report)).toBe(true);
    expect(verdictFromReport(report, "sympy__sympy-23534")).toMatchObject({ resolved: true, status: "resolved", details: { patchApplied: true, tests: { FAIL_TO_PASS: { success: 1, failure: 0 } } } });
    expect(verdictFromReport({ "a-1": { ...report, resolved: false } }, "a-1")).toMatchObject({ resolved: false, status: "unresolved" });
    expect(verdictFromReport({ "a-1": report }, "b-2")).toBeUndefined();
    const run = { total_instances: 3, resolved_ids: ["a"], unresolved_ids: ["b"], empty_patch_ids: ["c"] };
    expect(isSwebenchReport(run)).toBe(true);
    expect(["a", "b", "c", "d"].map((id) => verdictFromReport(run, id)?.status)).toEqual(["resolved", "unresolved", "empty_patch", undefined]);

    const summary = JSON.parse(readFileSync(corpus("mini-swe-agent", "results_summary.json"), "utf8"));
    expect(isResultsSummary(summary)).toBe(true);
    expect(summary.instances.filter((i: { resolved: boolean }) => i.resolved)).toHaveLength(summary.passed);
    expect(verdictFromResultsSummary(summary, "astropy__astropy-12907")).toMatchObject({ resolved: true });
    expect(verdictFromResultsSummary(summary, "no-such-instance")).toBeUndefined();
    expect(isSwebenchReport(summary)).toBe(false);
  });
});
