import { describe, expect, it } from "vitest";
import { GuardSet } from "./pipeline.js";
import { DEFAULT_MUTATING } from "./predicates.js";
import { ManualClock, type GuardEvent } from "./types.js";
import { VerificationGate, type VerificationOptions } from "./verification-gate.js";

let n = 0;
const pair = (name: string, args: unknown, output: string, exitCode?: number): GuardEvent[] => {
  const id = `v${n++}`;
  return [
    { type: "tool_call", call: { id, name, args } },
    { type: "tool_result", result: { callId: id, name, args, output, ...(exitCode !== undefined ? { exitCode } : {}) } },
  ];
};
const claim = (text = "The incident is resolved and verified."): GuardEvent => ({ type: "completion", text, claimsSuccess: true });

const alertCleared: VerificationOptions = {
  evidence: [{ name: "alert cleared", description: "get_alerts shows no firing alerts", match: { tool: "get_alerts" }, pass: { json: { firing: 0 } } }],
  mutating: DEFAULT_MUTATING,
};

function gate(opts: VerificationOptions) {
  return new GuardSet([new VerificationGate(opts)], { clock: new ManualClock() });
}

describe("VerificationGate", () => {
  it("accepts a completion claim backed by a passing predicate", () => {
    const set = gate(alertCleared);
    set.run([...pair("restart_deployment", { name: "cart" }, "restarted"), ...pair("get_alerts", {}, '{"firing": 0}')]);
    const v = set.observe(claim());
    expect(v.action).toBe("continue");
    expect(v.decisions[0]?.reason).toMatch(/alert cleared \(get_alerts: "\{"firing": 0\}"\)/);
  });

  it("blocks a claim with no evidence and names what is missing (FM-3.2)", () => {
    const set = gate(alertCleared);
    set.run(pair("restart_deployment", { name: "cart" }, "restarted"));
    const v = set.observe(claim());
    expect(v.action).toBe("block");
    expect(v.primary?.mode).toBe("3.2");
    expect(v.primary?.message).toContain("- alert cleared (get_alerts shows no firing alerts): no result from get_alerts yet");
  });

  it("blocks a claim the evidence contradicts (FM-3.3)", () => {
    const set = gate(alertCleared);
    set.run([...pair("restart_deployment", { name: "cart" }, "restarted"), ...pair("get_alerts", {}, '{"firing": 2}')]);
    const v = set.observe(claim());
    expect(v.primary).toMatchObject({ action: "block", mode: "3.3" });
    expect(v.primary?.message).toMatch(/contradict/);
  });

  it("treats evidence gathered before a later change as stale", () => {
    const set = gate(alertCleared);
    set.run([...pair("get_alerts", {}, '{"firing": 0}'), ...pair("delete_pod", { pod: "cart-1" }, "deleted")]);
    const v = set.observe(claim());
    expect(v.primary).toMatchObject({ action: "block", mode: "3.2" });
    expect(v.primary?.message).toMatch(/passed before the latest change \(delete_pod\)/);
    set.run(pair("get_alerts", {}, '{"firing": 0}'));
    expect(set.observe(claim()).action).toBe("continue");
  });

  it("requires a successful non-mutating check after the last change when asked to", () => {
    const set = gate({ mutating: DEFAULT_MUTATING, requireCheckAfterChange: true });
    set.run(pair("shell", { command: ["bash", "-lc", "cat > agent_output.json <<'EOF'\n{}\nEOF"] }, ""));
    const blocked = set.observe(claim("Done. agent_output.json has been written."));
    expect(blocked.primary).toMatchObject({ action: "block", mode: "3.2" });
    set.run(pair("shell", { command: ["bash", "-lc", "jq . agent_output.json"] }, "{}", 0));
    expect(set.observe(claim()).action).toBe("continue");
  });

  it("accepts a read-only run without a check-after-change requirement", () => {
    const set = gate({ mutating: DEFAULT_MUTATING, requireCheckAfterChange: true });
    set.run([...pair("get_logs", { service: "cart" }, "error: flag cartFailure on"), ...pair("get_pods", {}, "cart Running")]);
    expect(set.observe(claim("Root cause identified: flagd-config.")).action).toBe("continue");
  });

  it("can be limited to explicit success claims", () => {
    const set = gate({ ...alertCleared, onlyExplicitClaims: true });
    expect(set.observe({ type: "completion", text: "I could not find the cause.", claimsSuccess: false }).action).toBe("continue");
    expect(set.observe(claim()).action).toBe("block");
  });

  it("rejects a check-after-change requirement without a mutating selector", () => {
    expect(() => new VerificationGate({ requireCheckAfterChange: true })).toThrow(/needs a `mutating` selector/);
  });
});

describe("VerificationGate: the check-after-change rules shared with the FM-3.2/3.3 detectors", () => {
  const strict = (extra: Partial<VerificationOptions> = {}) => gate({ mutating: DEFAULT_MUTATING, requireCheckAfterChange: true, ...extra });
  const state = '{"reservation_id": "4OG6T3", "flights": [{"flight_number": "HAT045"}], "cabin": "economy", "status": "active"}';

  it("accepts a change whose result returned the resulting state, unless told otherwise (tau-bench domain APIs)", () => {
    const set = strict();
    set.run(pair("update_reservation_flights", { reservation_id: "4OG6T3" }, state));
    expect(set.observe(claim("Your reservation has been updated to HAT045.")).action).toBe("continue");
    const off = strict({ stateResultIsCheck: false });
    off.run(pair("update_reservation_flights", { reservation_id: "4OG6T3" }, state));
    expect(off.observe(claim("Your reservation has been updated to HAT045.")).primary).toMatchObject({ action: "block", mode: "3.2" });
    // a text confirmation is not the state
    const text = strict();
    text.run(pair("send_certificate", { user_id: "noah_muller_9847", amount: 50 }, "Certificate certificate_3221322 added to user noah_muller_9847 with amount 50."));
    expect(text.observe(claim("The $50 certificate has been successfully issued.")).primary?.reason).toMatch(/nothing has been checked since send_certificate/);
  });

  it("forgets a change that failed: it changed nothing", () => {
    const set = strict();
    set.run([...pair("get_reservation_details", { id: "GV1N64" }, state), ...pair("update_reservation_flights", { id: "GV1N64" }, "Error: not enough seats on flight HAT290")]);
    expect(set.observe(claim("You're welcome! Anything else?.")).action).toBe("continue");
  });

  it("counts the user's answer after a change as feedback on it, unless told otherwise", () => {
    const events: GuardEvent[] = [...pair("toggle_data", {}, "Mobile Data is now ON."), { type: "message", role: "user", text: "It works now, speed test says excellent!" }];
    const set = strict();
    set.run(events);
    expect(set.observe(claim("Great, your data is working again.")).action).toBe("continue");
    const off = strict({ userReplyIsCheck: false });
    off.run(events);
    expect(off.observe(claim("Great, your data is working again.")).action).toBe("block");
  });

  it("takes running or reading the changed file as its check, needs none for prose, and ignores scratch-file cleanup", () => {
    const ran = strict();
    ran.run([...pair("edit", { path: "tests/missing_colon.py" }, "edited"), ...pair("bash", { command: "python3 -m runpy tests/missing_colon.py" }, "8.2", 0)]);
    expect(ran.observe(claim()).action).toBe("continue");
    const notes = strict();
    notes.run(pair("Edit", { file_path: "/repo/PLAN.md" }, "The file has been updated."));
    expect(notes.observe(claim("Done. The plan now lists the three phases.")).action).toBe("continue");
    const cleanup = strict();
    cleanup.run([...pair("edit", { path: "core.py" }, "edited"), ...pair("bash", { command: "pytest -q" }, "5 passed", 0), ...pair("bash", { command: "rm reproduce.py" }, "", 0)]);
    expect(cleanup.observe(claim()).action).toBe("continue");
  });

  it("blocks a claim the latest check after the change contradicts (FM-3.3), until a check passes", () => {
    const set = strict();
    set.run([...pair("edit", { path: "core.py" }, "edited"), ...pair("bash", { command: "pytest -q" }, "FAILED tests/test_core.py::test_x - AssertionError\n1 failed", 1)]);
    const v = set.observe(claim("All tests pass now."));
    expect(v.primary).toMatchObject({ action: "block", mode: "3.3" });
    expect(v.primary?.reason).toMatch(/the latest check after edit failed: bash exit 1/);
    set.run(pair("bash", { command: "pytest -q" }, "6 passed", 0));
    expect(set.observe(claim("All tests pass now.")).action).toBe("continue");
  });

  it("does not take calculations or notes for checks, and accepts a declared check selector", () => {
    const set = strict();
    set.run([...pair("update_order", { id: 1 }, "ok"), ...pair("calculate", { expression: "2+2" }, "4"), ...pair("think", { thought: "looks right" }, "")]);
    expect(set.observe(claim()).action).toBe("block");
    const custom = strict({ check: { tool: "alerts" } });
    custom.run([...pair("restart_deployment", { name: "cart" }, "restarted"), ...pair("alerts", {}, "[]")]);
    expect(custom.observe(claim()).action).toBe("continue");
  });
});
