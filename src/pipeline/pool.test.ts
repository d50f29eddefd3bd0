import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Store } from "../store/index.js";
import { corpus } from "../testing/corpus.js";
import { analyze } from "./analyze.js";

const EXAMPLES = join(import.meta.dirname, "..", "..", "examples");

/** Everything a run produced that does not name the run: findings.jsonl, summary.json, the CSVs and the stored rows. */
function outputs(r: Awaited<ReturnType<typeof analyze>>, db: string) {
  const read = (p: string) => readFileSync(p, "utf8").split(r.runId).join("RUN");
  const store = new Store(db);
  try {
    const rows = (sql: string) => store.db.prepare(sql).all(r.runId);
    return {
      findings: read(r.findingsPath),
      summary: JSON.parse(read(r.outputs.summary)),
      traces: read(r.outputs.reports.traces_csv),
      interventions: read(r.outputs.reports.interventions_csv),
      counts: r.counts,
      stored: rows("SELECT trace_id, file, format, idx, model, framework, steps, content_hash, trace FROM traces WHERE run_id = ? ORDER BY rowid"),
      diagnoses: rows("SELECT trace_id, annotator, success, score, modes, mode_count, diagnosis, error FROM diagnoses WHERE run_id = ? ORDER BY rowid"),
      findingRows: rows("SELECT trace_id, mode, confidence, first_step, steps, agent, evidence, detector FROM findings WHERE run_id = ? ORDER BY rowid"),
    };
  } finally {
    store.close();
  }
}

describe("analyze on worker threads (jobs > 1)", () => {
  it("writes what the serial run writes, in the same order, with the same ids, counts and problems", async () => {
    // the examples twice (the second copy's traces get `@path` ids), a corpus folder and a file that is not a trace
    const input = mkdtempSync(join(tmpdir(), "faultline-pool-in-"));
    cpSync(EXAMPLES, join(input, "a"), { recursive: true });
    cpSync(EXAMPLES, join(input, "b"), { recursive: true });
    cpSync(corpus("tau-bench"), join(input, "tau"), { recursive: true });
    writeFileSync(join(input, "broken.json"), "{ not json");
    const runs = [];
    for (const jobs of [1, 2, 3]) {
      const dir = mkdtempSync(join(tmpdir(), "faultline-pool-"));
      const problems: string[] = [];
      const files: number[] = [];
      const r = await analyze([input], { out: join(dir, "out"), db: join(dir, "store.db"), jobs, onDiagnostic: (d) => problems.push(`${d.level} ${d.file} ${d.message}`), onFile: (_p, i) => files.push(i) });
      runs.push({ ...outputs(r, join(dir, "store.db")), problems, files });
    }
    const [serial, two, three] = runs;
    expect(serial!.counts.traces).toBeGreaterThan(60);
    expect(serial!.findings).toContain("@b/");
    expect(serial!.problems.some((p) => p.includes("broken.json"))).toBe(true);
    expect(two).toEqual(serial);
    expect(three).toEqual(serial);
  });
});
