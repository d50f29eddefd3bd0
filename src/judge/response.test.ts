import { describe, expect, it } from "vitest";
import { mast } from "../taxonomy/index.js";
import { jsonSchemaResponseFormat, parseJudgeAnswer, parseMastAnswer } from "./response.js";

const verdict = (present: boolean) => ({ present, confidence: 0.7, steps: present ? [2] : [], agent: present ? "coder" : null, evidence: present ? ["ran it"] : [], rationale: "r" });
const answer = (codes: string[]) => ({ summary: "s", taskSuccess: false, modes: Object.fromEntries(codes.map((c, i) => [c, verdict(i === 0)])) });

describe("parseJudgeAnswer", () => {
  it("accepts an answer with exactly the requested codes, bare or inside a ```json fence", () => {
    const text = JSON.stringify(answer(["1.1", "1.3"]));
    const a = parseJudgeAnswer(text, ["1.1", "1.3"]);
    expect(a.ok && a.value.modes["1.1"]!.present).toBe(true);
    expect(parseJudgeAnswer("Here you go:\n```json\n" + text + "\n```", ["1.1", "1.3"]).ok).toBe(true);
  });

  it("rejects a missing code, an unknown code, and a bad confidence — never reading them as absent", () => {
    const missing = parseJudgeAnswer(JSON.stringify(answer(["1.1"])), ["1.1", "1.3"]);
    expect(missing).toEqual({ ok: false, error: expect.stringContaining(".modes.1.3") });
    const extra = parseJudgeAnswer(JSON.stringify(answer(["1.1", "1.3", "1.6"])), ["1.1", "1.3"]);
    expect(extra.ok).toBe(false);
    expect(!extra.ok && extra.error).toMatch(/1\.6/);
    const bad = answer(["1.1"]);
    bad.modes["1.1"]!.confidence = 80;
    expect(parseJudgeAnswer(JSON.stringify(bad), ["1.1"]).ok).toBe(false);
  });

  it("reports text that is not JSON", () => {
    const r = parseJudgeAnswer("I think 1.3 is present.", ["1.3"]);
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^answer is not valid JSON/) });
    expect(parseJudgeAnswer("", ["1.3"])).toEqual({ ok: false, error: "empty answer" });
  });

  it("produces a strict JSON schema for response_format", () => {
    const rf = jsonSchemaResponseFormat(["1.1", "3.2"]);
    expect(rf.type).toBe("json_schema");
    expect(rf.json_schema.strict).toBe(true);
    const schema = rf.json_schema.schema as { additionalProperties: boolean; required: string[]; properties: { modes: { required: string[]; additionalProperties: boolean } } };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(["summary", "taskSuccess", "modes"]);
    expect(schema.properties.modes.required).toEqual(["1.1", "3.2"]);
    expect(schema.properties.modes.additionalProperties).toBe(false);
  });
});

const names = Object.fromEntries(mast.modes.map((m) => [m.code, m.name]));
const mastText = (yes: string[], opts: { summary?: string; lineOf?: (code: string, name: string, v: string) => string; drop?: string[]; extra?: string[] } = {}) =>
  [
    "@@",
    `A. ${opts.summary ?? "The agents wrote code and stopped."}`,
    "B. Task completed: no",
    "C.",
    ...mast.codes
      .filter((c) => !opts.drop?.includes(c))
      .map((c) => (opts.lineOf ?? ((code, name, v) => `${code} ${name}: ${v}`))(c, names[c]!, yes.includes(c) ? "yes" : "no")),
    ...(opts.extra ?? []),
    "@@",
  ].join("\n");

describe("parseMastAnswer", () => {
  it("reads yes on labels that contain 'no' (the official parser's silent-zero bug)", () => {
    const r = parseMastAnswer(mastText(["2.5", "3.2"]), mast.codes);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.modes["2.5"]).toBe(1); // "Ignored other agent's input"
    expect(r.value.modes["3.2"]).toBe(1); // "No or incomplete verification"
    expect(Object.values(r.value.modes).reduce<number>((a, b) => a + b, 0)).toBe(2);
    expect(r.value.taskCompleted).toBe(false);
    expect(r.value.summary).toBe("The agents wrote code and stopped.");
  });

  it("never reads a code mentioned in the summary", () => {
    const r = parseMastAnswer(mastText([], { summary: "Mode 1.3 yes, clearly; 2.6 no." }), mast.codes);
    expect(r.ok && r.value.modes["1.3"]).toBe(0);
  });

  it("treats a missing code as an error, not as no", () => {
    expect(parseMastAnswer(mastText([], { drop: ["3.3"] }), mast.codes)).toEqual({ ok: false, error: "section C has no line for code 3.3" });
    expect(parseMastAnswer("", mast.codes).ok).toBe(false);
  });

  it("rejects stray codes, conflicting duplicates and lines without a final yes/no", () => {
    expect(parseMastAnswer(mastText([], { extra: ["1.6 Undetected ambiguity: yes"] }), mast.codes)).toEqual({ ok: false, error: expect.stringContaining("unknown code 1.6") });
    expect(parseMastAnswer(mastText([], { extra: ["1.3 Step repetition: yes"] }), mast.codes)).toEqual({ ok: false, error: "section C answers both yes and no for code 1.3" });
    expect(parseMastAnswer(mastText([], { lineOf: (c, n, v) => (c === "2.1" ? `${c} ${n}: probably` : `${c} ${n}: ${v}`) }), mast.codes)).toEqual({
      ok: false,
      error: expect.stringContaining("line for 2.1 does not end"),
    });
  });

  it("does not confuse 1.1 with 1.10 and escapes the dot", () => {
    const r = parseMastAnswer(mastText(["1.1"]).replace("1.3 Step repetition: no", "1x3 Step repetition: yes\n1.3 Step repetition: no"), mast.codes);
    expect(r.ok && r.value.modes["1.3"]).toBe(0);
    const ten = parseMastAnswer(mastText([], { extra: ["1.10 Something: yes"] }), mast.codes);
    expect(ten).toEqual({ ok: false, error: expect.stringContaining("unknown code 1.10") });
  });

  it("accepts markdown bold, list bullets and FM- prefixes, and takes the answer block after an echoed template", () => {
    const styled = mastText(["1.3"], { lineOf: (c, n, v) => `- **FM-${c} ${n}:** ${v}` });
    const r = parseMastAnswer(`Template echo:\n@@\nA. <summary>\nB. yes or no\nC.\n1.1 X: yes or no\n@@\nMy answer:\n${styled}`, mast.codes);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.modes["1.3"]).toBe(1);
  });

  it("requires B to end in yes or no", () => {
    expect(parseMastAnswer(mastText([]).replace("B. Task completed: no", "B. Task completed: unclear"), mast.codes).ok).toBe(false);
  });
});
