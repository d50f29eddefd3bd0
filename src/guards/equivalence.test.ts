import { describe, expect, it } from "vitest";
import { callKey, normalizeArgs, profilesSimilar, resultFingerprint, sameCall, textProfile, textSimilarity } from "./equivalence.js";

describe("argument equivalence", () => {
  it("ignores key order, JSON encoding and whitespace inside strings", () => {
    const a = { name: "exec", args: '{"cmd": "kubectl  get pods", "ns": "otel-demo"}' };
    const b = { name: "exec", args: { ns: "otel-demo", cmd: "kubectl get pods " } };
    expect(sameCall(a, b)).toBe(true);
  });

  it("ignores declared volatile keys at any depth, case-insensitively", () => {
    const a = { name: "query", args: { q: "up", meta: { Timestamp: "2026-01-15T11:00:00Z" } } };
    const b = { name: "query", args: { q: "up", meta: { timestamp: "2026-01-15T11:05:00Z" } } };
    expect(sameCall(a, b)).toBe(true);
    expect(sameCall(a, b, { ignoreKeys: [] })).toBe(false);
  });

  it("keeps calls with different values, tools or array order apart", () => {
    expect(sameCall({ name: "q", args: { a: 1 } }, { name: "q", args: { a: 2 } })).toBe(false);
    expect(sameCall({ name: "q", args: { a: 1 } }, { name: "r", args: { a: 1 } })).toBe(false);
    expect(sameCall({ name: "q", args: { l: [1, 2] } }, { name: "q", args: { l: [2, 1] } })).toBe(false);
  });

  it("can keep whitespace significant", () => {
    expect(callKey("w", { s: "a  b" }, { collapseWhitespace: false })).not.toBe(callKey("w", { s: "a b" }, { collapseWhitespace: false }));
  });

  it("parses nested JSON-encoded strings but leaves other strings alone", () => {
    expect(normalizeArgs({ payload: '{"b":1,"a":2}', text: "{not json" })).toEqual({ payload: { a: 2, b: 1 }, text: "{not json" });
  });
});

describe("result fingerprints and message similarity", () => {
  it("treats changed output as different and strips declared volatile parts", () => {
    expect(resultFingerprint({ output: "cpu=0.91" })).not.toBe(resultFingerprint({ output: "cpu=0.42" }));
    const clock = [/\d{2}:\d{2}:\d{2}/];
    expect(resultFingerprint({ output: "10:00:01 status=Pending" }, clock)).toBe(resultFingerprint({ output: "10:00:06 status=Pending" }, clock));
    expect(resultFingerprint({ output: "x", exitCode: 0 })).not.toBe(resultFingerprint({ output: "x", exitCode: 1 }));
  });

  it("scores near-identical messages high and different ones low", () => {
    expect(textSimilarity("I will check the pods now.", "I will check the pods now")).toBe(1);
    expect(textSimilarity("", "")).toBe(1);
    expect(textSimilarity("Let me look at the cart service logs for errors", "Let me look at the cart service logs for errors again")).toBeGreaterThan(0.8);
    expect(textSimilarity("Let me look at the cart service logs", "The checkout deployment has two replicas")).toBeLessThan(0.2);
  });

  it("answers a threshold on profiled texts exactly as textSimilarity does, including when sizes alone decide", () => {
    const texts = [
      "",
      "ok",
      "Done.",
      "I will check the pods now.",
      "I will check the pods now",
      "Let me look at the cart service logs for errors",
      "Let me look at the cart service logs for errors again",
      "Let me look at the cart service logs for errors again and again, then at the checkout service",
      "The checkout deployment has two replicas",
    ];
    for (const a of texts)
      for (const b of texts)
        for (const threshold of [0, 0.2, 0.5, 0.8, 0.9, 1])
          expect(profilesSimilar(textProfile(a), textProfile(b), threshold), `${JSON.stringify(a)} vs ${JSON.stringify(b)} at ${threshold}`).toBe(textSimilarity(a, b) >= threshold);
  });
});
