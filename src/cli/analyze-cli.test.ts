import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { outcomeNotes } from "../report/index.js";
import { fixtureSet, fixtureTrace } from "../server/fixtures.js";
import { Store } from "../store/index.js";
import { corpus } from "../testing/corpus.js";

/* `faultline analyze` (and `stats --by`) from the command line: nothing for nothing, unknown keys, outcome notes. */

const REPO = resolve(import.meta.dirname, "..", "..");
const EXAMPLES = join(REPO, "examples");

function faultline(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO, "bin", "faultline.js"), ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("analyze writes nothing for nothing", () => {
  it("a path that does not exist is a usage error naming it; no report, no store", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-nothing-"));
    const r = faultline(dir, "analyze", "/nonexistent", "--out", "out", "--db", "store.db");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("/nonexistent: no such file or folder; nothing was analysed or written");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("an empty folder says there are no traces, exits non-zero and writes nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-nothing-"));
    mkdirSync(join(dir, "empty"));
    const r = faultline(dir, "analyze", "empty", "--out", "out", "--db", "store.db");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no traces in empty \(0 files read, 0 errors\): nothing stored, nothing written/);
    expect(readdirSync(dir)).toEqual(["empty"]);
  });

  it("a folder of unreadable trace files lists the problems, exits 2 and writes nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-nothing-"));
    mkdirSync(join(dir, "bad"));
    writeFileSync(join(dir, "bad", "run.json"), '{"not": "a trace"}\n');
    const r = faultline(dir, "analyze", "bad", "--out", "out", "--db", "store.db");
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/Problems \(1\):\n\s+error\s+bad\/run\.json/);
    expect(r.stderr).toMatch(/no traces in bad/);
    expect(readdirSync(dir)).toEqual(["bad"]);
  });
});

describe("analyze names its run and keeps the earlier ones", () => {
  it("prints the run's name; a second analysis of the folder is a second run; --replace supersedes both", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-named-"));
    const run = (...extra: string[]) => faultline(dir, "analyze", join(EXAMPLES, "chat"), "--out", "out", "--db", "store.db", "--json", ...extra);
    const a = JSON.parse(run().stdout);
    const b = JSON.parse(run().stdout);
    expect(a.run_id).toMatch(/^chat-\d{8}-\d{6}(-\d+)?$/);
    expect(b.run_id).not.toBe(a.run_id);
    expect(a.status).toBe("complete");
    const diff = faultline(dir, "diff", a.run_id, b.run_id, "--db", "store.db", "--json");
    expect(diff.status).toBe(0);
    const c = JSON.parse(run("--replace").stdout);
    expect(c.replaced.sort()).toEqual([a.run_id, b.run_id].sort());
    expect(JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8"))).toMatchObject({ run_id: c.run_id, status: "complete" });
  });
});

describe("Ctrl-C during analyze", () => {
  it("stores and writes what was read, marked incomplete, and exits 130", async () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-sigint-"));
    mkdirSync(join(dir, "traces"));
    writeFileSync(join(dir, "traces", "many.jsonl"), fixtureSet(4000).map((f, i) => JSON.stringify(fixtureTrace({ ...f, id: `t:${i}` }))).join("\n") + "\n");
    const child = spawn(process.execPath, [join(REPO, "bin", "faultline.js"), "analyze", "traces", "--out", "out", "--db", "store.db", "-q"], { cwd: dir });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(dir, "store.db")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/interrupted: finishing with what was read \(the run is marked incomplete\)/);
    const summary = JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8"));
    expect(summary.status).toBe("incomplete");
    expect(summary.counts.traces).toBeLessThan(4000);
    expect(stdout).toContain(`Run ${summary.run_id} is INCOMPLETE: it was interrupted after ${summary.counts.traces} traces`);
    const store = new Store(join(dir, "store.db"));
    try {
      expect(store.run(summary.run_id)).toMatchObject({ status: "incomplete", trace_count: summary.counts.traces });
    } finally {
      store.close();
    }
  }, 120_000);
});

describe("stats --by", () => {
  it("an unknown key is a usage error listing the keys there are", () => {
    const findings = mkdtempSync(join(tmpdir(), "faultline-by-"));
    const out = faultline(findings, "analyze", join(EXAMPLES, "chat"), "--out", "out", "--db", "store.db", "-q");
    expect(out.status).toBe(0);
    const r = faultline(findings, "stats", "out/findings.jsonl", "--by", "nosuchkey");
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--by nosuchkey: no trace has that field; the keys are .*\bframework\b.*\bmodel\b/);
    expect(r.stderr).toContain("source.format");
    // known keys, top-level or dotted, still group
    expect(faultline(findings, "stats", "out/findings.jsonl", "--by", "source.format").status).toBe(0);
    const csv = faultline(REPO, "stats", join(EXAMPLES, "labels.csv"), "--by", "modle");
    expect(csv.status).toBe(1);
    expect(csv.stderr).toContain("--by modle: no trace has that field; the keys are group");
    const diff = faultline(findings, "diff", "out/findings.jsonl", "out/findings.jsonl", "--by", "nosuchkey");
    expect(diff.status).toBe(1);
    expect(diff.stderr).toMatch(/--by nosuchkey: no trace has that field/);
  });
});

describe("ITBench outcomes that cannot be scored say why in the terminal", () => {
  it("a run scored against a v2 ground truth gets an explicit notice naming the v1 file", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-v2-"));
    mkdirSync(join(dir, "runs"));
    const rollout = "rollout-2026-01-15T12-26-09-019bc2b1-77dd-7072-9bdb-834ec3f5d5fe.jsonl";
    copyFileSync(corpus("itbench", "rollouts", rollout), join(dir, "runs", rollout));
    const gt = corpus("itbench", "ground-truth", "scenario_2_groundtruth.yaml");
    const r = faultline(dir, "analyze", "runs", "--ground-truth", gt, "--out", "out", "--db", "store.db");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("ITBench outcomes: 1 run, 1 not scored, 0 without a deliverable");
    expect(r.stdout).toMatch(/Notice: .*scenario_2_groundtruth\.yaml is an ITBench ground truth in the v2 format/);
    expect(r.stdout).toContain(`give --ground-truth ${gt.replace(/\.yaml$/, "_v1.yaml")}`);
  });

  it("the bundled examples name the runs scored 0 for want of a deliverable, with the reason", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-outcomes-"));
    const r = faultline(dir, "analyze", EXAMPLES, "--out", "out", "--db", "store.db");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/ITBench outcomes: 15 runs, 0 not scored, 3 without a deliverable/);
    expect(r.stdout).toMatch(/no deliverable, scored 0 \(3\):\n\s+019bc608-\S+\s+the model never wrote agent_output\.json/);
  });

  it("lists unscored runs with the reason from outcome.details", () => {
    const itb = (id: string, outcome: object) => ({ trace_id: id, outcome: { rule: "itbench root-cause recall", ...outcome } as never });
    const lines = outcomeNotes([
      itb("unreadable", { success: null, score: null, details: { error: "ground truth unreadable: ENOENT" } }),
      itb("rebuilt", { success: null, score: null, details: { deliverable_problem: "the write's content is a shell variable" } }),
      itb("missing", { success: false, score: 0, details: { deliverable_source: "missing", deliverable_problem: "missing: scored as recall 0", deliverable_missing_reason: "the run never started: no model turn is recorded" } }),
      itb("fine", { success: true, score: 1, details: { deliverable_source: "file", deliverable_problem: null } }),
      { trace_id: "not-itbench", outcome: { success: null, score: null, rule: "dataset verdict" } },
    ]);
    expect(lines.join("\n")).toBe(
      [
        "\nITBench outcomes: 4 runs, 2 not scored, 1 without a deliverable",
        "  not scored (outcome unknown) (2):",
        "    unreadable  ground truth unreadable: ENOENT",
        "    rebuilt  the write's content is a shell variable",
        "  no deliverable, scored 0 (1):",
        "    missing  the run never started: no model turn is recorded",
      ].join("\n"),
    );
    expect(outcomeNotes([itb("fine", { success: true, score: 1, details: {} })])).toEqual([]);
  });
});

describe("nothing dropped silently", () => {
  it("a step a reader skipped is counted in summary.json and in the terminal, Markdown and HTML footers", () => {
    const dir = mkdtempSync(join(tmpdir(), "faultline-skipped-"));
    mkdirSync(join(dir, "runs"));
    // a Codex rollout whose fourth line is a step of no type: the reader drops that step and keeps the trace
    const line = (type: string, payload: unknown) => JSON.stringify({ timestamp: "2026-02-01T10:00:00.000Z", type, payload });
    writeFileSync(
      join(dir, "runs", "rollout-2026-02-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-00000000000a.jsonl"),
      [
        line("session_meta", { id: "0199aaaa-bbbb-7ccc-8ddd-00000000000a", originator: "codex_exec" }),
        line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: "Begin" }] }),
        line("turn_context", { model: "gpt-5" }),
        line("response_item", { type: 0, name: "shell", arguments: '{"command":["ls"]}', call_id: "c1" }),
        line("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] }),
      ].join("\n") + "\n",
    );
    const r = faultline(dir, "analyze", "runs", "--out", "out", "--db", "store.db");
    expect(r.stdout).toContain("0 skipped lines/records, 1 skipped steps, 0 skipped traces");
    expect(JSON.parse(readFileSync(join(dir, "out", "summary.json"), "utf8")).counts).toMatchObject({ traces: 1, skipped_steps: 1 });
    expect(readFileSync(join(dir, "out", "report.md"), "utf8")).toContain("Left out while reading: 0 skipped lines/records, 1 skipped steps, 0 skipped traces");
    expect(readFileSync(join(dir, "out", "report.html"), "utf8")).toMatch(/<footer><p data-skipped>Left out while reading: 0 skipped lines\/records, 1 skipped steps, 0 skipped traces/);
  });
});
