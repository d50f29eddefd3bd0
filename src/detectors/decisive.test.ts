import { describe, expect, it } from "vitest";
import type { Finding, StepDraft, Task, Trace } from "../trace/index.js";
import { call, say, taskTrace, trace, user } from "./fixtures.js";
import { detectionContext } from "./context.js";
import { decisiveStep, type DecisiveResult } from "./decisive.js";
import { DETECTORS, runDetectors } from "./index.js";

/** The decisive step of a trace with the given outcome: over the detectors' own findings, or over `findings` if given. */
function decide(t: Trace, success: boolean | null, findings?: Finding[]): DecisiveResult {
  const ctx = detectionContext(t, { success, score: null, metric: null });
  return decisiveStep(t, ctx, findings ?? runDetectors(t, DETECTORS, ctx).findings);
}

const f = (detector: string, mode: string, steps: number[], basis: Finding["basis"] = ["steps"], confidence = 0.7): Finding => ({ mode, steps, basis, confidence, evidence: "x", detector: `rules/${detector}`, rationale: `${detector} finding` });

const tauTask = (actions: unknown[]): Task => ({ text: "Cancel reservation ABC.", benchmark: "tau-bench", expected: { actions } });
const CANCEL = { name: "cancel_reservation", kwargs: { reservation_id: "ABC", reason: "change of plan" } };
const lookup = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active", "cabin": "economy"}');

describe("decisive step: expected-action deviation", () => {
  it("is the first consequential call the expected actions do not contain (here: other arguments)", () => {
    const t = taskTrace(tauTask([CANCEL]), user("Cancel ABC, change of plan."), lookup(), call("cancel_reservation", { reservation_id: "ABC", reason: "other" }, '{"reservation_id": "ABC", "status": "cancelled", "refund": 0}'), say("Your reservation has been cancelled."));
    const d = decide(t, false);
    expect(d.decisive).toMatchObject({ step: 3, mode: "1.1", agent: "agent", basis: ["steps", "expected"], confidence: 0.7 });
  });
  it("is the transfer that replaced an expected action (3.1 when no finding names the step)", () => {
    const t = taskTrace(tauTask([CANCEL]), user("Cancel ABC."), lookup(), call("transfer_to_human_agents", { summary: "wants to cancel" }, "Transfer successful"));
    const d = decide(t, false, []);
    expect(d.decisive).toMatchObject({ step: 3, mode: "3.1", basis: ["steps", "expected"] });
    expect(d.decisive?.rationale).toContain("transfer_to_human_agents");
  });
  it("is the agent's last word when no consequential action was taken although one was expected", () => {
    const t = taskTrace(tauTask([CANCEL]), user("Cancel ABC."), lookup(), say("I'm sorry, I cannot do that for you."));
    expect(decide(t, false, []).decisive).toMatchObject({ step: 3, mode: "3.1", basis: ["steps", "expected"], confidence: 0.5 });
  });
  // the "agent's last word" fallback is for runs that took no consequential action at all, not for correct ones
  it("near-miss: the expected call itself, made with the expected arguments, is no deviation", () => {
    const ok = taskTrace(tauTask([CANCEL]), user("Cancel ABC."), lookup(), call("cancel_reservation", { reason: "change of plan", reservation_id: "ABC" }, '{"status": "cancelled", "a": 1, "b": 2}'), say("Done."));
    expect(decide(ok, false, [])).toEqual({ decisive: null, reason: "no finding and no deviation from the expected actions" });
  });
  it("near-miss: an expected transfer is no deviation", () => {
    const expectedTransfer = taskTrace(tauTask([{ name: "transfer_to_human_agents", kwargs: {} }]), user("Cancel ABC."), lookup(), call("transfer_to_human_agents", { summary: "x" }, "Transfer successful"));
    expect(decide(expectedTransfer, false, []).decisive).toBeNull();
  });
});

describe("decisive step: answer provenance (failed question-answering runs)", () => {
  it("is the tool call whose result first stated the wrong value (a result belongs to the agent that called)", () => {
    const t = taskTrace({ text: "How many employees did the company have in 2019?", expected: "1,150" }, user("How many employees did the company have in 2019?"), call("web_search", { q: "company employees 2019" }, "The company had 1,302 employees in 2019."), say("FINAL ANSWER: 1302", "Assistant"));
    const d = decide(t, false, []);
    expect(d.decisive).toMatchObject({ step: 1, agent: "agent", mode: "3.3", basis: ["steps", "expected", "outcome"], confidence: 0.5 });
    expect(d.decisive?.rationale).toContain("1302");
  });
  it("is the agent that first said the value, not the orchestrator that relayed it", () => {
    const t = trace(user("How many employees in 2019?"), say("Searching.", "Orchestrator"), say("The page says the company had 1,302 employees.", "WebSurfer"), say("FINAL ANSWER: 1302", "Orchestrator"));
    expect(decide(t, false, []).decisive).toMatchObject({ step: 2, agent: "WebSurfer", basis: ["steps", "outcome"] });
  });
  it("near-miss: a value the task gave is no provenance; a run with expected actions is not a question-answering run", () => {
    const given = trace(user("Is 1302 the number of employees in 2019?"), say("Checking.", "Orchestrator"), say("FINAL ANSWER: 1302", "Orchestrator"));
    expect(decide(given, false, []).decisive).toBeNull();
    const withActions = taskTrace(tauTask([{ name: "transfer_to_human_agents", kwargs: {} }]), user("How many bags?"), say("You have 3 bags. FINAL ANSWER: 3"));
    expect(decide(withActions, false, []).decisive).toBeNull();
  });
});

describe("decisive step: findings", () => {
  const t = trace(user("Find the value."), say("Searching the web.", "WebSurfer"), say("Searching the web.", "WebSurfer"), say("Let's assume the value is twelve.", "Analyst"), say("Result ready.", "Orchestrator"));
  const symptoms = [f("step-repetition", "1.3", [1, 2]), f("premature-termination", "3.1", [1]), f("no-verification", "3.2", [2]), f("termination-unaware", "1.5", [1]), f("incorrect-verification", "3.3", [2], ["steps", "outcome"])];

  it("skips symptoms (repetition, endings, missing checks) and outcome-based findings for the first causal one", () => {
    const d = decide(t, false, [...symptoms, f("task-spec-violation", "1.1", [3], ["steps", "task"], 0.65)]);
    expect(d.decisive).toMatchObject({ step: 3, mode: "1.1", agent: "Analyst", basis: ["steps", "task"], confidence: 0.65 });
  });
  it("falls back to the earliest agent step any finding cites, at low confidence, when only symptoms exist", () => {
    expect(decide(t, false, symptoms).decisive).toMatchObject({ step: 1, mode: "1.3", agent: "WebSurfer", confidence: 0.35 });
  });
  it("of several causal findings, the earliest step wins", () => {
    const d = decide(t, false, [f("reasoning-action-mismatch", "2.6", [3]), f("clarification-failure", "2.2", [2])]);
    expect(d.decisive).toMatchObject({ step: 2, mode: "2.2" });
  });
});

describe("decisive step: never a synthetic cap step, never a harness or user message", () => {
  const adapterCap: StepDraft = { agent: "agent", role: "assistant", kind: "message", text: "Maximum number of steps reached.", tags: ["step-limit"] };
  it("a finding that cites only the adapter's cap notice gives no decisive step", () => {
    const t = trace(user("Find the value."), say("Searching.", "WebSurfer"), adapterCap);
    expect(decide(t, false, [f("reasoning-action-mismatch", "2.6", [2])])).toEqual({ decisive: null, reason: "no finding cites an agent step" });
    expect(decide(t, false, [f("reasoning-action-mismatch", "2.6", [0, 2]), f("premature-termination", "3.1", [2])]).decisive).toBeNull();
    expect(decide(t, false, [f("reasoning-action-mismatch", "2.6", [1, 2])]).decisive).toMatchObject({ step: 1, agent: "WebSurfer" });
  });
  it("the detectors' own findings on a run cut by a harness cap", () => {
    const cap: StepDraft = { agent: "harness", role: "system", kind: "termination", text: "Agent reached maximum iteration (50)", tags: ["step-limit"] };
    const t = trace(user("Find the population of Sydney."), say("Searching."), cap);
    const d = decide(t, false);
    expect(d).toEqual({ decisive: null, reason: "no finding cites an agent step" });
  });
});

describe("decisive step: null with a reason", () => {
  const t = trace(user("Find the value."), say("Let's assume the value is twelve.", "Analyst"), say("Done.", "Analyst"));
  const causal = [f("reasoning-action-mismatch", "2.6", [1])];
  it("for a run that succeeded, whatever was found", () => {
    expect(decide(t, true, causal)).toEqual({ decisive: null, reason: "the run succeeded" });
  });
  it("for an unknown outcome without findings; an unknown outcome with findings still gets one", () => {
    expect(decide(t, null, [])).toEqual({ decisive: null, reason: "outcome unknown and no finding" });
    expect(decide(t, null, causal).decisive).toMatchObject({ step: 1, mode: "2.6", agent: "Analyst" });
  });
});
