import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_GUARD_CONFIG, guardSetFromConfig, guardsFromConfig, loadGuardConfig, parseGuardConfig } from "./config.js";
import { ManualClock, type GuardEvent } from "./types.js";

const dir = mkdtempSync(join(tmpdir(), "faultline-guards-"));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe("guard config", () => {
  it("has a built-in default preset", () => {
    expect(loadGuardConfig("default")).toBe(DEFAULT_GUARD_CONFIG);
    expect(guardsFromConfig(DEFAULT_GUARD_CONFIG).map((g) => g.name)).toEqual(["termination-controller", "verification-gate", "loop-detector", "context-guard"]);
  });

  it("builds working guards from a JSON file", () => {
    const path = file(
      "sre.json",
      JSON.stringify({
        termination: { maxSteps: 50, exitConditions: [{ name: "diagnosis written", match: { tool: "write_file", args: { path: "agent_output.json" } } }] },
        verification: { evidence: [{ name: "alert cleared", match: { tool: "get_alerts" }, pass: { json: { "alerts.length": 0 } } }] },
        clarify: { rules: [{ name: "no namespace", missing: "namespace" }], readOnly: { toolPattern: "^get_" } },
        loop: { ignoreKeys: ["ts"], repeatWarnAt: 2 },
      }),
    );
    const set = guardSetFromConfig(loadGuardConfig(path), { clock: new ManualClock() });
    expect(set.guards.map((g) => g.name)).toEqual(["termination-controller", "verification-gate", "clarify-gate", "loop-detector"]);
    const ev: GuardEvent[] = [
      { type: "message", role: "user", text: "Fix the checkout latency in namespace otel-demo." },
      { type: "tool_call", call: { id: "1", name: "get_alerts", args: { ts: 1 } } },
      { type: "tool_result", result: { callId: "1", name: "get_alerts", output: '{"alerts":[{"name":"Latency"}]}' } },
      { type: "tool_call", call: { id: "2", name: "get_alerts", args: { ts: 2 } } },
      { type: "tool_result", result: { callId: "2", name: "get_alerts", output: '{"alerts":[]}' } },
      { type: "completion", text: "Verified: the alert cleared.", claimsSuccess: true },
      { type: "tool_call", call: { id: "3", name: "write_file", args: { path: "agent_output.json" } } },
      { type: "tool_result", result: { callId: "3", name: "write_file", args: { path: "agent_output.json" }, output: "ok" } },
      { type: "tool_call", call: { id: "4", name: "get_alerts", args: {} } },
      { type: "tool_result", result: { callId: "4", name: "get_alerts", output: '{"alerts":[]}' } },
      { type: "completion", text: "Verified: the alert cleared.", claimsSuccess: true },
    ];
    const vs = set.run(ev);
    // get_alerts calls differing only in the ignored `ts` are one call: the 2nd warns (repeatWarnAt 2); its result
    // changed, so by the polling rule the count restarts and the 3rd is again only the 2nd since the change.
    // The first completion lacks the deliverable; the last has the deliverable and fresh evidence.
    expect(vs.map((v) => v.action)).toEqual(["continue", "continue", "continue", "warn", "continue", "require", "continue", "continue", "warn", "continue", "continue"]);
    expect(vs[5]!.primary?.reason).toMatch(/diagnosis written/);
  });

  it("takes absent sections from the default when it extends it", () => {
    const cfg = parseGuardConfig({ extends: "default", clarify: { rules: [{ name: "vague", matches: "\\bsomething\\b" }] }, context: false });
    expect(guardsFromConfig(cfg).map((g) => g.name)).toEqual(["termination-controller", "verification-gate", "clarify-gate", "loop-detector"]);
  });

  it.each([
    [{ loop: { repeatWarnAt: -1 } }, /loop.repeatWarnAt/],
    [{ loops: true }, /Unrecognized key.*loops|loops/],
    [{ loop: { volatileOutput: ["(unclosed"] } }, /loop.volatileOutput.0: invalid regular expression/],
    [{ clarify: true }, /clarify: expected false or settings with `rules`/],
    [{ clarify: { rules: [{ name: "x", matches: "a", missing: "b" }] } }, /clarify.rules.0: give exactly one of matches, missing, multiple/],
    [{ verification: { evidence: [{ name: "e", pass: { json: { x: { lt: "3" } } } }] } }, /verification.evidence.0.pass.json.x/],
  ])("rejects %j with a message naming the field", (raw, message) => {
    expect(() => parseGuardConfig(raw, "my.json")).toThrow(/^my\.json: invalid guard config — /);
    expect(() => parseGuardConfig(raw, "my.json")).toThrow(message);
  });

  it("names the file and the place of a JSON syntax error, and a missing file", () => {
    const path = file("broken.json", '{\n  "loop": {\n    "repeatWarnAt": 3,\n  }\n}\n');
    expect(() => loadGuardConfig(path)).toThrow(new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} at line 4, column 3: not valid JSON`));
    expect(() => loadGuardConfig(join(dir, "absent.json"))).toThrow(/absent.json: cannot read guard config .*presets: default/);
  });
});

describe("guard config: check-after-change and failure-streak settings", () => {
  const pair = (id: string, name: string, args: unknown, output: string): GuardEvent[] => [
    { type: "tool_call", call: { id, name, args } },
    { type: "tool_result", result: { callId: id, name, args, output } },
  ];
  const claim: GuardEvent = { type: "completion", text: "The reservation is updated.", claimsSuccess: true };
  const state = '{"reservation_id": "X", "cabin": "business", "status": "active"}';

  it("passes `check`, `stateResultIsCheck` and `failureRepeatWarnAt` to the guards", () => {
    const run = (raw: unknown, events: GuardEvent[]) => guardSetFromConfig(parseGuardConfig(raw), { clock: new ManualClock() }).run(events).at(-1)!;
    const change = pair("1", "update_reservation_flights", { id: "X" }, state);
    expect(run({ extends: "default" }, [...change, claim]).action).toBe("continue");
    expect(run({ extends: "default", verification: { requireCheckAfterChange: true, stateResultIsCheck: false } }, [...change, claim]).action).toBe("block");
    const polled = [...change, ...pair("2", "reservation_lookup", { id: "X" }, "active")];
    expect(run({ extends: "default", verification: { requireCheckAfterChange: true, stateResultIsCheck: false } }, [...polled, claim]).action).toBe("block");
    expect(run({ extends: "default", verification: { requireCheckAfterChange: true, stateResultIsCheck: false, check: { toolPattern: "_lookup$" } } }, [...polled, claim]).action).toBe("continue");
    const fails = [1, 2].flatMap((i) => pair(`f${i}`, "book_reservation", { n: i }, "Error: payment declined"));
    expect(run({ loop: { failureRepeatWarnAt: 2 } }, fails).primary?.reason).toMatch(/^book_reservation failed 2 times in a row/);
    expect(() => parseGuardConfig({ loop: { failureRepeatWarnAt: "3" } }, "my.json")).toThrow(/loop.failureRepeatWarnAt/);
    expect(() => parseGuardConfig({ verification: { check: { toolPattern: "(" } } }, "my.json")).toThrow(/verification.check/);
  });
});
