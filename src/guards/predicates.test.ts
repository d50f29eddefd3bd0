import { describe, expect, it } from "vitest";
import { DEFAULT_MUTATING, EvidenceTracker, getPath, toCallMatcher, toResultCheck } from "./predicates.js";

describe("tool selectors", () => {
  it("matches by name, pattern, verbs and argument values", () => {
    expect(toCallMatcher({ tool: ["get_alerts", "get_metrics"] })({ name: "get_metrics" })).toBe(true);
    expect(toCallMatcher({ toolPattern: "^kube" })({ name: "get_pods" })).toBe(false);
    expect(toCallMatcher({ toolVerbs: ["delete"] })({ name: "deleteAlert" })).toBe(true);
    expect(toCallMatcher({ toolVerbs: ["delete"] })({ name: "get_deleted_items" })).toBe(false);
    const m = toCallMatcher({ tool: "exec", args: { "target.namespace": "otel-demo" } });
    expect(m({ name: "exec", args: '{"target":{"namespace":"otel-demo"}}' })).toBe(true);
    expect(m({ name: "exec", args: { target: { namespace: "default" } } })).toBe(false);
  });

  it("classifies real-looking calls with the default mutating selector", () => {
    const mutating = toCallMatcher(DEFAULT_MUTATING);
    expect(mutating({ name: "cancel_reservation", args: { reservation_id: "ZFA04Y" } })).toBe(true);
    expect(mutating({ name: "get_reservation_details", args: { reservation_id: "ZFA04Y" } })).toBe(false);
    expect(mutating({ name: "update_plan", args: { plan: [{ step: "read logs", status: "completed" }] } })).toBe(false);
    expect(mutating({ name: "shell", args: { command: ["bash", "-lc", "kubectl delete pod cart-7f9 -n otel-demo"] } })).toBe(true);
    expect(mutating({ name: "shell", args: { command: ["bash", "-lc", "kubectl get pods -n otel-demo 2>&1 | head"] } })).toBe(false);
    expect(mutating({ name: "shell", args: { command: ["bash", "-lc", "cat > agent_output.json <<'EOF'\n{}\nEOF"] } })).toBe(true);
    expect(mutating({ name: "shell", args: { command: ["bash", "-lc", "grep -r error logs 2>/dev/null"] } })).toBe(false);
  });
});

describe("result checks", () => {
  it("defaults to 'the call succeeded'", () => {
    const ok = toResultCheck(undefined);
    expect(ok({ name: "t", output: "fine", exitCode: 0 })).toBe(true);
    expect(ok({ name: "t", output: "boom", exitCode: 2 })).toBe(false);
    expect(ok({ name: "t", output: "boom", isError: true })).toBe(false);
  });

  it("tests output text and JSON paths", () => {
    const cleared = toResultCheck({ json: { "alerts.length": 0 } });
    expect(cleared({ name: "get_alerts", output: '{"alerts":[]}' })).toBe(true);
    expect(cleared({ name: "get_alerts", output: '{"alerts":[{"name":"CartFailure"}]}' })).toBe(false);
    expect(cleared({ name: "get_alerts", output: "not json" })).toBe(false);
    const healthy = toResultCheck({ output: [{ matches: "status:\\s*healthy", ignoreCase: true }, { excludes: "degraded" }] });
    expect(healthy({ name: "health", output: "Status: HEALTHY" })).toBe(true);
    expect(healthy({ name: "health", output: "status: healthy; cart degraded" })).toBe(false);
    expect(toResultCheck({ json: { p99: { lt: 300 } } })({ name: "m", output: '{"p99": 120}' })).toBe(true);
    expect(toResultCheck({ exitCode: 1 })({ name: "m", exitCode: 1 })).toBe(true);
  });

  it("reads dotted paths through arrays and strings", () => {
    expect(getPath({ items: [{ phase: "Running" }] }, "items.0.phase")).toBe("Running");
    expect(getPath({ s: "abc" }, "s.length")).toBe(3);
    expect(getPath({}, "a.b")).toBeUndefined();
  });
});

describe("EvidenceTracker", () => {
  it("lets the latest relevant result decide and marks evidence stale after a change", () => {
    const t = new EvidenceTracker([{ name: "health check passed", match: { tool: "health" }, pass: { output: "ok" } }], { toolVerbs: ["restart"] });
    expect(t.status()[0]?.state).toBe("missing");
    t.onResult({ name: "health", output: "ok" }, 1);
    expect(t.satisfied()).toBe(true);
    t.onResult({ name: "health", output: "failing" }, 2);
    expect(t.status()[0]?.state).toBe("failing");
    t.onResult({ name: "health", output: "ok" }, 3);
    t.onCall({ name: "restart_service" }, 4);
    expect(t.status()[0]?.state).toBe("stale");
    t.onResult({ name: "health", output: "ok" }, 6);
    expect(t.status()[0]).toMatchObject({ state: "satisfied", seq: 6 });
    // a failing check from before a change is stale too: it says nothing about the state after the change
    t.onResult({ name: "health", output: "failing" }, 7);
    t.onCall({ name: "restart_service" }, 8);
    expect(t.status()[0]).toMatchObject({ state: "stale", detail: "checked before the latest change (restart_service); check again" });
  });
});
