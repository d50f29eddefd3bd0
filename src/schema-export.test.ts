import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SCHEMA_DIR, schemaDocuments } from "../scripts/export-schema.js";
import { main } from "./cli/main.js";
import { readAll } from "./formats/index.js";
import { corpus } from "./testing/corpus.js";
import { DIAGNOSIS_SCHEMA_VERSION, TRACE_SCHEMA_VERSION } from "./trace/index.js";

describe("schema/*.schema.json", () => {
  it("are exactly what scripts/export-schema.ts generates from the zod schemas now (run `npm run schema`)", () => {
    const docs = schemaDocuments();
    expect(readdirSync(SCHEMA_DIR).filter((f) => f.endsWith(".json")).sort()).toEqual(docs.map((d) => d.file).sort());
    for (const d of docs) expect(readFileSync(join(SCHEMA_DIR, d.file), "utf8"), `${d.file} is stale: run npm run schema`).toBe(d.text);
  });

  it("describe the written form: version tags pinned, defaulted fields required, findings inside diagnoses", () => {
    const read = (f: string) => JSON.parse(readFileSync(join(SCHEMA_DIR, f), "utf8"));
    const trace = read("trace.schema.json");
    expect(trace.properties.schema.const).toBe(TRACE_SCHEMA_VERSION);
    expect(trace.required).toEqual(expect.arrayContaining(["schema", "id", "source", "agents", "steps", "metadata"]));
    expect(trace.properties.steps.items.properties.kind.enum).toContain("tool_call");
    const diagnosis = read("diagnosis.schema.json");
    expect(diagnosis.properties.schema.const).toBe(DIAGNOSIS_SCHEMA_VERSION);
    expect(diagnosis.properties.findings.items).toEqual(expect.objectContaining({ required: read("finding.schema.json").required }));
  });
});

describe("canonical JSONL round trip: corpus → faultline convert → read back", () => {
  const dir = mkdtempSync(join(tmpdir(), "faultline-roundtrip-"));
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ["otlp-openinference", "otlp-traces", 3],
    ["claude-code", "claude-code", 4],
    ["tau-bench", "tau-bench", 200],
  ])("%s: the converted traces read back deep-equal to the originals", async (folder, format, count) => {
    const original = await readAll(corpus(folder));
    expect(original.traces).toHaveLength(count);
    expect(new Set(original.traces.map((t) => t.source.format))).toEqual(new Set([format]));

    const out = join(dir, `${folder}.jsonl`);
    const stderr: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (stderr.push(String(chunk)), true));
    expect(await main(["node", "faultline", "convert", corpus(folder), "-o", out])).toBe(0);
    vi.restoreAllMocks();
    expect(stderr.join("")).toContain(`${count} traces written to ${out}; 0 errors`);
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(count);

    const back = await readAll(out);
    expect(back.files.map((f) => f.format)).toEqual(["faultline"]);
    expect(back.diagnostics.filter((d) => d.level !== "notice")).toEqual([]);
    expect(back.traces).toEqual(original.traces);
  });
});
