import { describe, expect, it } from "vitest";
import { call, detectWith, empty, plan, say, think, trace, user } from "./fixtures.js";
import { runDetectors, DETECTORS } from "./index.js";
import { stepRepetition } from "./step-repetition.js";
import { terminationUnaware } from "./termination-unaware.js";
import { prematureTermination } from "./premature-termination.js";
import { noVerification } from "./no-verification.js";
import { incorrectVerification } from "./incorrect-verification.js";
import { conversationReset } from "./conversation-reset.js";
import { historyLoss } from "./history-loss.js";
import { reasoningActionMismatch } from "./reasoning-action-mismatch.js";
import { taskSpecViolation } from "./task-spec-violation.js";

const TASK = "Diagnose the incident in the otel-demo namespace and write agent_output.json with the root cause.";
const modes = (fs: { mode: string }[]) => [...new Set(fs.map((f) => f.mode))];

describe("1.3 step repetition", () => {
  it("flags the same patch re-applied after it succeeded", () => {
    const patch = { input: "*** Add File: agent_output.json\n{}" };
    const t = trace(user(TASK), call("apply_patch", patch, "Success", 0), call("apply_patch", patch, "Success", 0), call("apply_patch", patch, "Success", 0));
    const f = detectWith(stepRepetition, t);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ mode: "1.3", steps: [1, 3, 5], confidence: 0.9 });
  });
  it("flags an identical read returning the same thing three times", () => {
    const t = trace(user(TASK), ...[1, 2, 3].map(() => call("shell", { command: ["ls", "/data"] }, "alerts.json\nlogs/", 0)));
    expect(modes(detectWith(stepRepetition, t))).toEqual(["1.3"]);
  });
  it("does not flag polling whose results change", () => {
    const t = trace(user(TASK), ...["3 pending", "1 pending", "0 pending"].map((o) => call("shell", { command: ["kubectl", "get", "pods"] }, o, 0)));
    expect(detectWith(stepRepetition, t)).toEqual([]);
  });
  it("does not flag a write retried after it failed", () => {
    const patch = { input: "x" };
    const t = trace(user(TASK), call("apply_patch", patch, "error: context mismatch", 1), call("apply_patch", patch, "Success", 0));
    expect(detectWith(stepRepetition, t)).toEqual([]);
  });
  it("flags a message repeated three times, not a long productive run", () => {
    const msg = "WebSurfer, please search for the Apple stock price history on Google Finance.";
    expect(modes(detectWith(stepRepetition, trace(user(TASK), say(msg), say(msg), say(msg))))).toEqual(["1.3"]);
    const productive = trace(user(TASK), ...Array.from({ length: 30 }, (_, i) => call("shell", { command: ["cat", `file${i}.log`] }, `content ${i}`, 0)));
    expect(detectWith(stepRepetition, productive)).toEqual([]);
  });
});

describe("1.5 unaware of termination conditions", () => {
  it("does not read harness re-prompts for a missing deliverable as 1.5 (guideline v2): the run ended early, 3.1", () => {
    const retry = "I don't see agent_output.json file. Please resume the investigation and make sure to write it.";
    const t = trace(user(TASK), say("Starting."), user(retry, ["harness-retry"]), empty(), user(retry, ["harness-retry"]));
    expect(detectWith(terminationUnaware, t)).toEqual([]);
    const f = detectWith(prematureTermination, t);
    expect(modes(f)).toEqual(["3.1"]);
    expect(f[0]!.evidence).toContain("agent_output.json");
  });
  it("flags work continuing after TERMINATE", () => {
    const t = trace(user(TASK), say("Computing the answer now."), say("The answer is 42. TERMINATE"), ...Array.from({ length: 3 }, (_, i) => say(`Let me double check the computation once more, attempt number ${i} with another method.`)));
    expect(modes(detectWith(terminationUnaware, t))).toEqual(["1.5"]);
  });
  it("does not read a cap alone as 1.5; a failed run cut by the cap is 3.1", () => {
    const t = trace(user("Find the population of Sydney."), say("Looking."), { agent: "harness", role: "system", kind: "termination", text: "Maximum number of turns reached (100)" });
    expect(detectWith(terminationUnaware, t)).toEqual([]);
    expect(detectWith(prematureTermination, t, true)).toEqual([]);
    const f = detectWith(prematureTermination, t, false);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ mode: "3.1", steps: [2], basis: ["steps", "outcome"] });
  });
  it("does not flag a normal follow-up request or a run that simply ends", () => {
    const t = trace(user(TASK), say("Done: root cause is flagd-config."), user("Thanks! Can you also list the affected services?"), say("checkout, cart."));
    expect(detectWith(terminationUnaware, t)).toEqual([]);
  });
});

describe("3.1 premature termination", () => {
  it("flags an announcement with no action after it", () => {
    const t = trace(user(TASK), say("First we'll list the contents of the data directory, read all available alerts, and analyze them."));
    expect(detectWith(prematureTermination, t)[0]).toMatchObject({ mode: "3.1", steps: [1], confidence: 0.85 });
  });
  it("flags a run ending with plan items pending", () => {
    const t = trace(user(TASK), call("shell", { command: ["ls"] }, "a", 0), plan([{ step: "Read alerts", status: "completed" }, { step: "Write agent_output.json", status: "pending" }]));
    expect(modes(detectWith(prematureTermination, t))).toContain("3.1");
  });
  it("flags a run that ends with the harness still missing the deliverable", () => {
    const t = trace(user(TASK), empty(), user("I don't see agent_output.json file. Please resume.", ["harness-retry"]), empty());
    expect(modes(detectWith(prematureTermination, t))).toEqual(["3.1"]);
  });
  it("does not flag a concluded run that wrote its deliverable; flags one that never wrote it, even with no model output", () => {
    const write = call("apply_patch", { input: '*** Add File: agent_output.json\n+{"entities": []}' }, "Success", 0);
    const done = trace(user(TASK), call("shell", { command: ["cat", "alerts.json"] }, "cart errors", 0), write, say("In summary, the root cause is otel-demo/ConfigMap/flagd-config. I will not make further changes."));
    expect(detectWith(prematureTermination, done)).toEqual([]);
    const never = detectWith(prematureTermination, trace(user(TASK), empty(), empty()));
    expect(never).toHaveLength(1);
    expect(never[0]).toMatchObject({ mode: "3.1", steps: [0], basis: ["steps", "task"] });
    expect(never[0]!.evidence).toContain("agent_output.json");
  });
});

describe("3.2 no or incomplete verification", () => {
  it("flags an edit followed by a completion claim with no check", () => {
    const t = trace(user("Fix the bug in utils.py"), call("str_replace_editor", { command: "str_replace", path: "utils.py" }, "edited", 0), say("I have fixed the bug; the task is done."));
    expect(detectWith(noVerification, t)[0]).toMatchObject({ mode: "3.2", steps: [1, 3] });
  });
  it("does not flag a change whose result returns the new state, nor one the user confirmed", () => {
    const state = '{"reservation_id": "ABC", "flight": "UA180", "seat": "14C", "status": "confirmed"}';
    expect(detectWith(noVerification, trace(user("Move my flight"), call("update_reservation", { id: "ABC" }, state, undefined), say("Your reservation has been updated to UA180.")))).toEqual([]);
    const t = trace(user("Fix my phone"), call("set_network_mode", { mode: "4g" }, "ok"), user("It works now, thanks!"), say("Great, the change is complete."));
    expect(detectWith(noVerification, t)).toEqual([]);
  });
  it("does not flag when tests ran after the edit", () => {
    const t = trace(user("Fix the bug"), call("str_replace_editor", { command: "str_replace", path: "utils.py" }, "edited", 0), call("bash", { command: "pytest tests/" }, "5 passed", 0), say("Fixed; tests pass."));
    expect(detectWith(noVerification, t)).toEqual([]);
  });
});

describe("3.3 incorrect verification", () => {
  it("flags a success claim right after a failing test run", () => {
    const t = trace(user("Fix it"), call("bash", { command: "pytest" }, "FAILED tests/test_a.py::test_x - AssertionError\n1 failed, 4 passed", 1), say("All tests pass now; the fix is verified."));
    expect(detectWith(incorrectVerification, t)[0]).toMatchObject({ mode: "3.3", steps: [2, 3] });
  });
  it("does not flag when a passing re-run follows the failure", () => {
    const t = trace(user("Fix it"), call("bash", { command: "pytest" }, "1 failed", 1), call("bash", { command: "pytest" }, "5 passed", 0), say("All tests pass now."));
    expect(detectWith(incorrectVerification, t)).toEqual([]);
  });
});

describe("2.1 conversation reset", () => {
  it("flags the task re-posted mid-run", () => {
    const t = trace(user(TASK), say("a"), say("b"), say("c"), user(TASK), say("d"));
    expect(modes(detectWith(conversationReset, t))).toEqual(["2.1"]);
  });
  it("ignores courtesy and incidental uses of 'from scratch'", () => {
    expect(detectWith(conversationReset, trace(user(TASK), say("I'll rewrite the file content from scratch to be safe."), say("Search result: Building a Mask R-CNN from scratch")))).toEqual([]);
    expect(modes(detectWith(conversationReset, trace(user(TASK), say("a"), say("This is not working. Let's start over from the beginning."))))).toEqual(["2.1"]);
  });
  it("ignores harness retries that repeat the task", () => {
    const t = trace(user(TASK), say("a"), say("b"), say("c"), user(TASK, ["harness-retry"]));
    expect(detectWith(conversationReset, t)).toEqual([]);
  });
});

describe("1.4 loss of conversation history", () => {
  it("flags discovery re-run after a compaction", () => {
    const disc = () => call("shell", { command: ["ls", "/data"] }, "alerts.json", 0);
    const t = trace(user(TASK), disc(), call("shell", { command: ["cat", "alerts.json"] }, "x", 0), { agent: "codex", role: "system", kind: "event", text: "context compacted", tags: ["compaction"] }, disc(), call("shell", { command: ["cat", "alerts.json"] }, "x", 0));
    expect(modes(detectWith(historyLoss, t))).toEqual(["1.4"]);
  });
  it("does not flag repeats without a compaction", () => {
    const t = trace(user(TASK), call("shell", { command: ["ls"] }, "a", 0), call("shell", { command: ["ls"] }, "b", 0));
    expect(detectWith(historyLoss, t)).toEqual([]);
  });
});

describe("2.6 reasoning-action mismatch", () => {
  it("flags a named next tool that is not the one called", () => {
    const t = trace(user(TASK), call("mcp__x__log_analysis", {}, "logs", 0), think("Next, I'll run `metric_analysis` on the cart service."), call("shell", { command: ["ls"] }, "a", 0), call("shell", { command: ["cat", "b"] }, "b", 0), call("mcp__x__metric_analysis", {}, "m", 0));
    expect(modes(detectWith(reasoningActionMismatch, t))).toEqual(["2.6"]);
  });
  it("does not flag when the named tool is called next", () => {
    const t = trace(user(TASK), call("mcp__x__metric_analysis", {}, "m", 0), think("Next, I'll run `metric_analysis` again for checkout."), call("mcp__x__metric_analysis", { svc: "checkout" }, "m2", 0));
    expect(detectWith(reasoningActionMismatch, t)).toEqual([]);
  });
  it("flags a claimed change with no write", () => {
    const t = trace(user("Fix the config"), call("bash", { command: "cat app.yaml" }, "x: 1", 0), say("I have updated the file app.yaml to set x to 2."));
    expect(modes(detectWith(reasoningActionMismatch, t))).toEqual(["2.6"]);
  });
});

describe("1.1 disobey task specification", () => {
  it("flags reading the answer key, not listing it", () => {
    expect(modes(detectWith(taskSpecViolation, trace(user(TASK), call("shell", { command: ["cat", "/data/ground_truth.yaml"] }, "groups: …", 0))))).toEqual(["1.1"]);
    expect(detectWith(taskSpecViolation, trace(user(TASK), call("shell", { command: ["ls", "/data"] }, "ground_truth.yaml\nalerts.json", 0)))).toEqual([]);
  });
  it("flags a deliverable entity outside namespace/Kind/name", () => {
    const bad = { input: '*** Add File: agent_output.json\n+{"entities": [{"name": "unknown/Cluster/api-server", "contributing_factor": true}]}' };
    const good = { input: '*** Add File: agent_output.json\n+{"entities": [{"name": "otel-demo/ConfigMap/flagd-config", "contributing_factor": true}]}' };
    expect(detectWith(taskSpecViolation, trace(user(TASK), call("apply_patch", bad, "ok", 0)))[0]?.evidence).toBe("unknown/Cluster/api-server");
    expect(detectWith(taskSpecViolation, trace(user(TASK), call("apply_patch", good, "ok", 0)))).toEqual([]);
  });
});

describe("runDetectors", () => {
  it("keeps only findings whose quote is in the cited steps, and reports failing detectors", () => {
    const t = trace(user(TASK), say("First we'll list the data directory."));
    const liar = { id: "liar", mode: "2.3", description: "", detect: () => [{ mode: "2.3", confidence: 1, steps: [1], evidence: "not in the trace", detector: "rules/liar" }] };
    const broken = { id: "broken", mode: "2.4", description: "", detect: () => { throw new Error("boom"); } };
    const r = runDetectors(t, [...DETECTORS, liar, broken]);
    expect(modes(r.findings)).toEqual(["3.1"]);
    expect(r.rejected).toBe(1);
    expect(r.failures).toEqual([{ detector: "broken", message: "boom" }]);
  });
  it("reports never-acted runs as a signal; their only mode is the missing deliverable (3.1)", () => {
    const r = runDetectors(trace(user(TASK), empty(), empty()));
    expect(modes(r.findings)).toEqual(["3.1"]);
    expect(r.signals).toMatchObject({ never_acted: true, empty_model_turns: 2, infra_errors: { empty_response: 2 } });
  });
});
