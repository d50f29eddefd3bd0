import { describe, expect, it } from "vitest";
import type { Finding, StepDraft, Trace } from "../trace/index.js";
import { call, detectWith, empty, quotedFromCited, say, system, taskTrace, think, trace, user } from "./fixtures.js";
import { runEnd } from "./run-end.js";
import { detectionContext } from "./context.js";
import { DETECTORS, runDetectors } from "./index.js";
import { diagnoseTrace } from "../pipeline/diagnose.js";
import { prematureTermination } from "./premature-termination.js";
import { noVerification } from "./no-verification.js";
import { incorrectVerification } from "./incorrect-verification.js";
import { reasoningActionMismatch } from "./reasoning-action-mismatch.js";
import { taskSpecViolation } from "./task-spec-violation.js";
import { stepRepetition } from "./step-repetition.js";
import { clarificationFailure } from "./clarification-failure.js";
import { derailment } from "./derailment.js";
import { informationWithholding } from "./information-withholding.js";
import { ignoredInput } from "./ignored-input.js";

/**
 * One case that fires and one near-miss per rule added in the v2 detectors (rules 0.3.0). A firing case pins the
 * mode, the cited steps, the basis, and that the evidence is a verbatim quote of a cited step (runDetectors drops
 * findings whose quote is not); a near-miss is the false-positive guard the rule's doc comment names.
 */

const ITBENCH = "Diagnose the incident in the otel-demo namespace and write agent_output.json with the root cause.";

/** Asserts the one finding a case expects, including that its quote is in the steps it cites. */
function expectOne(t: Trace, fs: Finding[], want: { mode: string; steps: number[]; basis: string[] }, rationale?: RegExp): Finding {
  const hits = rationale ? fs.filter((f) => rationale.test(f.rationale ?? "")) : fs;
  expect(hits, JSON.stringify(fs, null, 1)).toHaveLength(1);
  const f = hits[0]!;
  expect(f).toMatchObject(want);
  expect(f.evidence.trim()).not.toBe("");
  expect(quotedFromCited(t, f), `evidence "${f.evidence}" is not in steps ${f.steps.join(",")}`).toBe(true);
  return f;
}

const capStep = (text = "Agent reached maximum iteration (50)"): StepDraft => ({ agent: "harness", role: "system", kind: "termination", text, tags: ["step-limit"] });
const transfer = (summary: string) => call("transfer_to_human_agents", { summary }, "Transfer successful");
const TAU_POLICY = "Before taking any actions that update the booking database, you must obtain explicit user confirmation (yes) to proceed.";

// ---------------------------------------------------------------------------------------------------------------
describe("3.1 premature termination (v2 rules)", () => {
  describe("deliverableNeverWritten", () => {
    it("fires when the contract's deliverable is never written, citing the agent's last words", () => {
      const t = taskTrace({ text: ITBENCH }, user("Begin."), call("shell", { command: ["cat", "alerts.json"] }, "cart errors", 0), say("The root cause is otel-demo/ConfigMap/flagd-config."));
      const f = expectOne(t, detectWith(prematureTermination, t), { mode: "3.1", steps: [3], basis: ["steps", "task"] });
      expect(f.rationale).toContain("agent_output.json");
    });
    it("fires when the only write of the deliverable failed", () => {
      const t = taskTrace({ text: ITBENCH }, call("apply_patch", { input: "*** Add File: agent_output.json\n+{}" }, "error: permission denied", 1), say("In summary, the root cause is the flagd config."));
      expectOne(t, detectWith(prematureTermination, t), { mode: "3.1", steps: [2], basis: ["steps", "task"] }, /deliverable/);
    });
    it("does not fire once a write of the deliverable took effect", () => {
      const t = taskTrace({ text: ITBENCH }, call("apply_patch", { input: '*** Add File: agent_output.json\n+{"entities": []}' }, "Success", 0), say("In summary, the root cause is the flagd config."));
      expect(detectWith(prematureTermination, t)).toEqual([]);
    });
  });

  describe("endedEarly (cap / transfer / infra, failed runs only)", () => {
    it("cap: a failed run cut by a tagged cap notice cites the notice, on the outcome", () => {
      const t = trace(user("Find the population of Sydney."), say("Searching."), capStep());
      expectOne(t, detectWith(prematureTermination, t, false), { mode: "3.1", steps: [2], basis: ["steps", "outcome"] });
    });
    it("transfer: a failed run handed to a human cites the transfer; expected actions left undone add `expected`", () => {
      const steps = [user("Please cancel my reservation ABC."), call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active", "cabin": "economy"}'), transfer("The user wants to cancel reservation ABC.")];
      const plain = trace(...steps);
      expectOne(plain, detectWith(prematureTermination, plain, false), { mode: "3.1", steps: [3], basis: ["steps", "outcome"] });
      const withExpected = taskTrace({ text: "cancel", expected: { actions: [{ name: "cancel_reservation", kwargs: { reservation_id: "ABC" } }] } }, ...steps);
      expectOne(withExpected, detectWith(prematureTermination, withExpected, false), { mode: "3.1", steps: [3], basis: ["steps", "outcome", "expected"] });
    });
    it("infra: an error step, or empty model turns, ending a failed run", () => {
      const err = trace(user("Find the answer."), say("Searching."), { agent: "harness", role: "system", kind: "error", text: "openai.RateLimitError: Error code: 429 - Too Many Requests" });
      const f = expectOne(err, detectWith(prematureTermination, err, false), { mode: "3.1", steps: [2], basis: ["steps", "outcome"] });
      expect(f.confidence).toBe(0.8);
      // an empty model turn has nothing to quote: the last step that says something is cited instead
      const silent = trace(user("Find the answer."), say("Searching."), empty(), empty());
      expectOne(silent, detectWith(prematureTermination, silent, false), { mode: "3.1", steps: [1], basis: ["steps", "outcome"] });
    });
    it("near-miss: the same endings on runs that did not fail, and a failed run the agent ended itself", () => {
      const cap = trace(user("Find the population of Sydney."), say("Searching."), capStep());
      const handed = trace(user("Please cancel my reservation ABC."), call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active", "cabin": "economy"}'), transfer("The user wants to cancel reservation ABC."));
      const silent = trace(user("Find the answer."), say("Searching."), empty(), empty());
      for (const t of [cap, handed, silent]) {
        expect(detectWith(prematureTermination, t, null)).toEqual([]);
        expect(detectWith(prematureTermination, t, true)).toEqual([]);
      }
      expect(detectWith(prematureTermination, trace(user("What is 6*7?"), say("The answer is 42.")), false)).toEqual([]);
    });
  });

  describe("answeredWithoutInformation", () => {
    it("fires on a failed run whose agents admitted in the final stretch that the information was not obtained", () => {
      const t = trace(user("How many notes are on the last bar?"), say("Opening the sheet music.", "WebSurfer"), say("I was unable to access the sheet music page.", "WebSurfer"), say("FINAL ANSWER: 7", "Orchestrator"));
      expectOne(t, detectWith(prematureTermination, t, false), { mode: "3.1", steps: [2], basis: ["steps", "outcome"] });
    });
    it("near-miss: an early admission that a later retrieval resolved, and runs that did not fail", () => {
      const resolved = trace(
        user("How many notes are on the last bar?"),
        say("I was unable to access the sheet music page.", "WebSurfer"),
        say("Trying the mirror site instead.", "WebSurfer"),
        say("The mirror has the score; the last bar is visible.", "WebSurfer"),
        say("The last bar holds seven notes.", "WebSurfer"),
        say("Reviewing the count once more: seven notes.", "Orchestrator"),
        say("FINAL ANSWER: 7", "Orchestrator"),
      );
      expect(detectWith(prematureTermination, resolved, false)).toEqual([]);
      const unknown = trace(user("How many notes?"), say("Opening the page.", "WebSurfer"), say("I was unable to access the sheet music page.", "WebSurfer"), say("FINAL ANSWER: 7", "Orchestrator"));
      expect(detectWith(prematureTermination, unknown, null)).toEqual([]);
    });
  });

  describe("gaveUp", () => {
    it("fires on a completion call or a termination that says task_completed=false, whatever the outcome", () => {
      const finish = trace(user("Fix the bug."), call("finish", { task_completed: false, message: "I could not reproduce the bug." }, "ok"));
      expectOne(finish, detectWith(prematureTermination, finish), { mode: "3.1", steps: [1], basis: ["steps"] });
      const term = trace(user("Fix the bug."), say("I could not find the cause."), { agent: "agent", role: "assistant", kind: "termination", text: 'AgentFinishAction(task_completed="false", outputs={})' });
      expectOne(term, detectWith(prematureTermination, term), { mode: "3.1", steps: [2], basis: ["steps"] });
    });
    it("fires on a failed coding run submitted although none of its changes took effect", () => {
      const t = trace(user("Fix the bug."), call("str_replace_editor", { command: "str_replace", path: "core.py", old_str: "a", new_str: "b" }, "No replacement was performed: old_str did not appear in core.py", 1), call("submit", {}, "submitted"));
      expectOne(t, detectWith(prematureTermination, t, false), { mode: "3.1", steps: [3], basis: ["steps", "outcome"] });
    });
    it("near-miss: task_completed=true, a read-only run answered by submit, a change that took effect, an unknown outcome", () => {
      expect(detectWith(prematureTermination, trace(user("Fix it."), call("finish", { task_completed: true, message: "Fixed." }, "ok")))).toEqual([]);
      expect(detectWith(prematureTermination, trace(user("What does core.py do?"), call("bash", { command: "cat core.py" }, "def f(): pass", 0), call("submit", {}, "submitted")), false)).toEqual([]);
      const took = trace(user("Fix"), call("str_replace_editor", { command: "str_replace", path: "core.py" }, "The file core.py has been edited.", 0), call("submit", {}, "submitted"));
      expect(detectWith(prematureTermination, took, false)).toEqual([]);
      const refused = trace(user("Fix"), call("str_replace_editor", { command: "str_replace", path: "core.py" }, "No replacement was performed", 1), call("submit", {}, "submitted"));
      expect(detectWith(prematureTermination, refused, null)).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("runEnd", () => {
  it("cap: a step-limit tag, or a framework's short status line in its own voice", () => {
    const t = trace(user("q"), say("Searching."), capStep());
    expect(runEnd(t)).toMatchObject({ kind: "cap", step: { index: 2 } });
    const own = trace(user("q"), say("Searching."), say("Replan counter exceeded, stopping.", "Orchestrator"));
    expect(runEnd(own)).toMatchObject({ kind: "cap", step: { index: 2 } });
  });
  it("transfer: the last action is a transfer to a human; not when the agent acted after it", () => {
    const t = trace(user("Cancel ABC."), transfer("wants to cancel"), say("You are being transferred."));
    expect(runEnd(t)).toMatchObject({ kind: "transfer", step: { index: 1 } });
    const after = trace(user("Cancel ABC."), transfer("wants to cancel"), call("get_user_details", { id: "u1" }, '{"name": "A", "id": "u1", "email": "a@b"}'), say("Done looking."));
    expect(runEnd(after).kind).toBe("agent");
  });
  it("infra: an error step naming a fault, a crash dump in the last step, or trailing empty model turns", () => {
    expect(runEnd(trace(user("q"), say("Searching."), { agent: "harness", role: "system", kind: "error", text: "AuthenticationError: invalid api key" }))).toMatchObject({ kind: "infra", step: { index: 2 } });
    expect(runEnd(trace(user("q"), say("Error processing the request: openai.BadRequestError: Error code: 400 - content_filter", "Orchestrator")))).toMatchObject({ kind: "infra", step: { index: 1 } });
    expect(runEnd(trace(user("q"), say("Searching."), empty(), empty()))).toMatchObject({ kind: "infra", step: { index: 3 } });
    expect(runEnd(trace(user("q"), empty()))).toMatchObject({ kind: "infra", step: { index: 1 } });
  });
  it("user: a real user turn after the agent's last; a harness re-prompt leaves the end to the agent", () => {
    expect(runEnd(trace(user("q"), say("The answer is 42."), user("Thanks, bye!")))).toMatchObject({ kind: "user", step: { index: 2 } });
    expect(runEnd(trace(user("q"), say("The answer is 42."), user("Please continue.", ["harness-retry"])))).toMatchObject({ kind: "agent", step: { index: 1 } });
  });
  it("agent: the agent's last word, and an error step that names no infrastructure fault is not infra", () => {
    expect(runEnd(trace(user("q"), say("The answer is 42.")))).toMatchObject({ kind: "agent", step: { index: 1 } });
    expect(runEnd(trace(user("q"), say("The answer is 42."), { agent: "harness", role: "system", kind: "error", text: "KeyError: 'answer'" })).kind).toBe("agent");
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("3.3 incorrect verification (v2 rules)", () => {
  const cancel = (result: string) => call("cancel_reservation", { reservation_id: "ABC" }, result);
  const REFUND = '{"reservation_id": "ABC", "status": "cancelled", "refund_amount": 350}';

  it("reportContradictsResult: a reported refund the action's result does not show", () => {
    const t = trace(user("Cancel ABC and refund me."), cancel(REFUND), say("Your reservation ABC has been cancelled and a refund of $500 will reach your card."));
    expectOne(t, detectWith(incorrectVerification, t), { mode: "3.3", steps: [2, 3], basis: ["steps"] });
  });
  it("reportContradictsResult near-miss: the result's amount, or a sum of its amounts, is reported", () => {
    expect(detectWith(incorrectVerification, trace(user("Cancel ABC."), cancel(REFUND), say("Your reservation ABC has been cancelled and a refund of $350 will reach your card.")))).toEqual([]);
    const two = '{"reservation_id": "ABC", "status": "cancelled", "refund": 200, "amount": 150}';
    expect(detectWith(incorrectVerification, trace(user("Cancel ABC."), cancel(two), say("Your reservation ABC has been cancelled; the total refunded is $350.")))).toEqual([]);
  });

  it("imaginedPass: a passing test summary the model wrote itself", () => {
    const t = trace(user("Fix the bug."), say("I ran the tests:\n============ 5 passed in 0.12s ============\nEverything is green."));
    const f = expectOne(t, detectWith(incorrectVerification, t), { mode: "3.3", steps: [1], basis: ["steps"] });
    expect(f.evidence).toBe("============ 5 passed in 0.12s ============");
  });
  it("imaginedPass near-miss: the same summary printed by a real test run", () => {
    const t = trace(user("Fix the bug."), call("bash", { command: "pytest" }, "============ 5 passed in 0.12s ============", 0), say("All tests pass."));
    expect(detectWith(incorrectVerification, t)).toEqual([]);
  });

  it("verifiedOnMissingData: a failed run declared verified right after the lookup failed", () => {
    const t = trace(user("What was Sydney's population in 2011?"), call("web_fetch", { url: "https://abs.gov.au/census" }, "Error: 404 page not found"), say("The figure of 4.3 million is verified."));
    expectOne(t, detectWith(incorrectVerification, t, false), { mode: "3.3", steps: [2, 3], basis: ["steps", "outcome"] });
    // an admission in the claim's own turn is the gap too
    const own = trace(user("What was Sydney's population in 2011?"), say("I was unable to access the census page, but the figure of 4.3 million is verified."));
    expectOne(own, detectWith(incorrectVerification, own, false), { mode: "3.3", steps: [1], basis: ["steps", "outcome"] });
  });
  it("verifiedOnMissingData near-miss: confirming the error is a diagnosis; unknown outcome; no gap before the claim", () => {
    const diag = trace(user("Debug it."), call("bash", { command: "python run.py" }, "Traceback (most recent call last):\nValueError: bad", 1), say("The traceback confirms that the error is in the parser."));
    expect(detectWith(incorrectVerification, diag, false)).toEqual([]);
    // (a claim right after the failed call is the base rule's on any outcome; an admission in the claim's turn is not)
    const own = trace(user("What was Sydney's population in 2011?"), say("I was unable to access the census page, but the figure of 4.3 million is verified."));
    expect(detectWith(incorrectVerification, own, null)).toEqual([]);
    const fine = trace(user("What was Sydney's population in 2011?"), call("web_fetch", { url: "https://abs.gov.au/census" }, "Sydney: 4,391,674"), say("The figure of 4.39 million is verified."));
    expect(detectWith(incorrectVerification, fine, false)).toEqual([]);
  });
  it("verifiedOnMissingData near-miss: a shell command that failed (a timed-out test run) is not missing information", () => {
    const t = trace(user("Fix the bug."), call("bash", { command: "python3 test_requests.py" }, "The last command timed out and has been killed.", 124), say("The fix is complete, and I verified it with a reproduction script."));
    expect(detectWith(incorrectVerification, t, false).filter((f) => /never obtained/.test(f.rationale ?? ""))).toEqual([]);
    // and a check killed by a timeout is not a failed check (an infrastructure fault)
    const [run, timedOut] = call("bash", { command: "python3 test_requests.py" }, "The last command timed out and has been killed.", 124);
    const killed = trace(user("Fix the bug."), run!, { ...timedOut!, tags: ["timeout"] }, say("The fix is complete, and I verified it with a reproduction script."));
    expect(detectWith(incorrectVerification, killed, false)).toEqual([]);
    const lookup = trace(user("What was Sydney's population in 2011?"), call("web_fetch", { url: "https://abs.gov.au/census" }, "Error: 503 Service Unavailable", 1), say("The figure of 4.3 million is verified."));
    expectOne(lookup, detectWith(incorrectVerification, lookup, false), { mode: "3.3", steps: [2, 3], basis: ["steps", "outcome"] });
  });

  it("verifierApprovedFailure: the verifier of a failed group chat declared the result correct", () => {
    const t = trace(user("Compute the total."), say("The total is 17.", "Solver"), say("I checked each term; the result is correct.", "Verifier"));
    expectOne(t, detectWith(incorrectVerification, t, false), { mode: "3.3", steps: [2], basis: ["steps", "outcome"] });
    const ledger = trace(user("Find the page."), say("The page number is 12.", "WebSurfer"), say('{"is_request_satisfied": {"reason": "The page was found", "answer": true}}', "Orchestrator"));
    const f = expectOne(ledger, detectWith(incorrectVerification, ledger, false), { mode: "3.3", steps: [2], basis: ["steps", "outcome"] });
    expect(f.evidence).toContain("is_request_satisfied");
  });
  it("verifierApprovedFailure near-miss: a non-verifier's claim, a single agent, an unknown outcome", () => {
    expect(detectWith(incorrectVerification, trace(user("Compute."), say("The total is 17.", "Solver"), say("The result is correct.", "Writer")), false)).toEqual([]);
    expect(detectWith(incorrectVerification, trace(user("Compute."), say("The total is 17."), say("I checked; the result is correct.")), false)).toEqual([]);
    expect(detectWith(incorrectVerification, trace(user("Compute."), say("The total is 17.", "Solver"), say("I checked; the result is correct.", "Verifier")), null)).toEqual([]);
  });

  it("checkedButWrong: a failed run whose agents set out to verify before the final answer", () => {
    const t = trace(user("How many stops?"), say("There are 12 stops.", "Transit_Expert"), say("Let's verify the count against the timetable: it matches.", "Checker"), say("FINAL ANSWER: 12", "Transit_Expert"));
    const f = expectOne(t, detectWith(incorrectVerification, t, false), { mode: "3.3", steps: [2], basis: ["steps", "outcome"] });
    expect(f.rationale).toMatch(/verified before answering/);
  });
  it("checkedButWrong near-miss: no check before the answer, an answer forced out by a cap, confirming with the user, a success", () => {
    const none = trace(user("How many stops?"), say("There are 12 stops.", "A"), say("FINAL ANSWER: 12", "A"));
    expect(detectWith(incorrectVerification, none, false)).toEqual([]);
    const capped = trace(user("How many stops?"), say("Let's verify the count.", "Checker"), { agent: "Orchestrator", role: "assistant", kind: "termination", text: "Max time (1500s) reached.\nFINAL ANSWER: 12" });
    expect(detectWith(incorrectVerification, capped, false)).toEqual([]);
    const asking = trace(user("Book it."), say("I need to confirm the passengers with you first."), say("The answer is: booked for two."));
    expect(detectWith(incorrectVerification, asking, false)).toEqual([]);
    const t = trace(user("How many stops?"), say("Let's verify the count against the timetable.", "Checker"), say("FINAL ANSWER: 12", "A"));
    expect(detectWith(incorrectVerification, t, true)).toEqual([]);
  });

  describe("a claim that cites another check than the one that failed", () => {
    const failing = (script: string) => call("bash", { command: `python ${script}` }, "Traceback (most recent call last):\nAssertionError", 1);
    it("still fires when the claim cites the script that failed", () => {
      const t = trace(user("Fix it."), failing("verify_fix.py"), say("The fix is verified by verify_fix.py now."));
      expectOne(t, detectWith(incorrectVerification, t), { mode: "3.3", steps: [2, 3], basis: ["steps"] });
    });
    // (at HEAD this guard read the script from sentenceAt(), which cuts at the dot of "verify_fix.py", so it never
    // applied; the working tree reads the 120 characters after the claim instead)
    it("does not fire when the claim is about another script (verify_fix.py) than the one that failed (reproduce.py)", () => {
      const t = trace(user("Fix it."), failing("reproduce.py"), say("The fix is verified by verify_fix.py now."));
      expect(detectWith(incorrectVerification, t)).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("3.2 no verification (v2 rules)", () => {
  const edit = () => call("str_replace_editor", { command: "str_replace", path: "/repo/src/core.py", old_str: "a", new_str: "b" }, "The file /repo/src/core.py has been edited.", 0);
  const repro = () => call("bash", { command: "python reproduce.py" }, "ok", 0);

  it("suiteNeverRun: code changed and submitted with only the agent's reproduction script run", () => {
    const t = trace(user("Fix the bug."), edit(), repro(), call("submit", {}, "submitted"));
    const f = expectOne(t, detectWith(noVerification, t), { mode: "3.2", steps: [1, 5], basis: ["steps"] });
    expect(f.rationale).toMatch(/reproduction script/);
  });
  it("suiteNeverRun: an assistant termination counts as the submission", () => {
    const t = trace(user("Fix the bug."), edit(), repro(), { agent: "agent", role: "assistant", kind: "termination", text: "AgentFinishAction: the fix is complete" });
    expectOne(t, detectWith(noVerification, t), { mode: "3.2", steps: [1, 5], basis: ["steps"] });
  });
  it("suiteNeverRun near-miss: the project's tests ran after the change", () => {
    const t = trace(user("Fix the bug."), edit(), repro(), call("bash", { command: "python -m pytest tests/test_core.py" }, "3 passed", 0), call("submit", {}, "submitted"));
    expect(detectWith(noVerification, t)).toEqual([]);
  });
  it("suiteNeverRun guards: a run that passed its benchmark, and a run the agent gave up on (3.1's)", () => {
    const t = trace(user("Fix the bug."), edit(), repro(), call("submit", {}, "submitted"));
    expect(detectWith(noVerification, t, true)).toEqual([]);
    const gaveUp = trace(user("Fix the bug."), edit(), repro(), call("finish", { task_completed: false, message: "Could not fix it." }, "ok"));
    expect(detectWith(noVerification, gaveUp)).toEqual([]);
    expect(detectWith(prematureTermination, gaveUp).map((f) => f.mode)).toEqual(["3.1"]);
  });

  it("answerNeverChecked: a failed run's final answer with no check of it", () => {
    const t = trace(user("How many moons does the planet have?"), say("I think it is about 42.", "Assistant"), say("FINAL ANSWER: 42", "Assistant"));
    const f = expectOne(t, detectWith(noVerification, t, false), { mode: "3.2", steps: [2], basis: ["steps", "outcome"] });
    expect(f.evidence).toContain("FINAL ANSWER");
  });
  it("answerNeverChecked: an answer forced out by a cap counts as unchecked, whatever was tried before", () => {
    const t = trace(user("How many moons?"), say("Let me verify the figure against the source.", "Assistant"), say("FINAL ANSWER: 42", "Assistant"), capStep());
    const f = expectOne(t, detectWith(noVerification, t, false), { mode: "3.2", steps: [2], basis: ["steps", "outcome"] });
    expect(f.rationale).toMatch(/forced/);
  });
  it("answerNeverChecked near-miss: the agents set out to check before answering (a wrong check is 3.3's); unknown outcome", () => {
    const checked = trace(user("How many moons?"), say("Let me verify the figure against the source.", "Assistant"), say("FINAL ANSWER: 42", "Assistant"));
    expect(detectWith(noVerification, checked, false)).toEqual([]);
    const t = trace(user("How many moons?"), say("I think it is about 42.", "Assistant"), say("FINAL ANSWER: 42", "Assistant"));
    expect(detectWith(noVerification, t, null)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("2.6 reasoning-action mismatch (v2 rules)", () => {
  it("imaginedResults: environment output the model wrote in its own turn", () => {
    const t = trace(user("Fix it."), say("open core.py\n(Open file: /repo/core.py)\n(Current directory: /repo)\nbash-$"));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [1], basis: ["steps"] });
    expect(f.evidence).toBe("(Open file: /repo/core.py)");
  });
  it("imaginedResults near-miss: the same lines coming from the tool", () => {
    const t = trace(user("Fix it."), call("bash", { command: "open core.py" }, "(Open file: /repo/core.py)\n(Current directory: /repo)", 0), say("The file is open."));
    expect(detectWith(reasoningActionMismatch, t)).toEqual([]);
  });

  it("presentedWithoutLookup: a lookup announced and its results presented in the same turn", () => {
    const t = trace(user("Sydney's population in 2011?"), say("I will search for the 2011 census figures. Here are the results: Sydney had 4.3 million people.", "Assistant"));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [1], basis: ["steps"] });
    expect(f.evidence).toMatch(/Here are the results/);
  });
  it("presentedWithoutLookup: 'I will refer to the official script' and 'Here is the required information' in one turn", () => {
    const t = trace(user("What is the first scene heading?"), say("As the script expert, I will refer to the official script of the episode to provide the exact setting.\n\nHere is the required information: INT. CASTLE BEDROOM", "Script_Expert"));
    expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [1], basis: ["steps"] });
  });
  it("retrievalClaimedWithoutAny: figures 'retrieved from' a source when nothing was ever retrieved or run", () => {
    const noCode = { agent: "Computer_terminal", role: "tool" as const, kind: "event" as const, text: "There is no code from the last 1 message for me to execute." };
    const t = trace(user("Population difference, per data.census.gov?"), say("Plan: access data.census.gov and compare.", "Expert"), noCode, say("The following are the population figures retrieved from data.census.gov: Seattle 737,015; Colville 4,673.", "Expert"));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [3], basis: ["steps"] });
    expect(f.evidence).toMatch(/retrieved from data\.census\.gov/);
    const ran = trace(user("Population difference, per data.census.gov?"), say("```python\nprint(fetch())\n```", "Expert"), { ...noCode, text: "exitcode: 0\nSeattle 737015" }, say("The following are the population figures retrieved from data.census.gov: Seattle 737,015.", "Expert"));
    expect(detectWith(reasoningActionMismatch, ran)).toEqual([]);
  });
  it("presentedWithoutLookup near-miss: code for the executor between the announcement and the results", () => {
    const t = trace(user("Sydney's population in 2011?"), say("I will search for the 2011 census figures.\n```python\nprint(search('census 2011 Sydney'))\n```\nHere are the results once the code runs.", "Assistant"));
    expect(detectWith(reasoningActionMismatch, t)).toEqual([]);
  });

  it("answerAgainstConclusion: a definite final answer right after concluding the information was not obtained", () => {
    const t = trace(user("Which year?"), say("I could not find the year in the archive.", "WebSurfer"), say("FINAL ANSWER: 1987", "Orchestrator"));
    expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [1, 2], basis: ["steps"] });
  });
  it("answerAgainstConclusion near-miss: an admission a later retrieval resolved, well before the answer", () => {
    const t = trace(user("Which year?"), say("I could not find the year in the archive.", "WebSurfer"), call("web_search", { q: "archive year" }, "Founded in 1987"), say("The search result gives the founding year.", "WebSurfer"), say("FINAL ANSWER: 1987", "Orchestrator"));
    expect(detectWith(reasoningActionMismatch, t)).toEqual([]);
  });

  it("admittedThenPresented: said it cannot obtain something, then presented it as obtained", () => {
    const t = trace(user("Which notes are played?"), say("Let me look."), say("I am unable to listen to the audio file. Upon inspection, the notes are C, E and G."));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [2], basis: ["steps"] });
    expect(f.evidence).toMatch(/Upon inspection/);
  });
  it("admittedThenPresented near-miss: the admission comes after the presentation, or stands alone", () => {
    expect(detectWith(reasoningActionMismatch, trace(user("Which notes?"), say("Upon inspection, the notes are C, E and G. I was unable to listen to the last bar, though.")))).toEqual([]);
    expect(detectWith(reasoningActionMismatch, trace(user("Which notes?"), say("I am unable to listen to the audio file. Could you tell me the notes?")))).toEqual([]);
  });

  it("reportedActionNotPerformed: a cancellation reported although no cancel call ran, or every one failed", () => {
    const lookup = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active"}');
    const t = trace(user("Cancel ABC."), lookup(), say("Your reservation ABC has been cancelled and the refund is on its way."));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [3], basis: ["steps"] });
    expect(f.evidence).toMatch(/has been cancelled/);
    const refused = trace(user("Cancel ABC."), lookup(), call("cancel_reservation", { reservation_id: "ABC" }, "Error: reservation cannot be cancelled"), say("I have cancelled reservation ABC for you."));
    expectOne(refused, detectWith(reasoningActionMismatch, refused), { mode: "2.6", steps: [3, 5], basis: ["steps"] });
  });
  it("reportedActionNotPerformed near-miss: the call ran; a state found in a lookup; an action still to come", () => {
    const lookup = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "cancelled"}');
    expect(detectWith(reasoningActionMismatch, trace(user("Cancel ABC."), call("cancel_reservation", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "cancelled"}'), say("Your reservation ABC has been cancelled.")))).toEqual([]);
    expect(detectWith(reasoningActionMismatch, trace(user("Cancel ABC."), lookup(), say("Reservation ABC has already been cancelled.")))).toEqual([]);
    expect(detectWith(reasoningActionMismatch, trace(user("Cancel ABC."), lookup(), say("Once you confirm, your reservation will have been cancelled.")))).toEqual([]);
  });
  it("saidArgsThenOmitted: named the arguments the call needs, then called without one", () => {
    const t = trace(user("Cancel order #W1."), think("I need to provide the `order_id` and `reason` to cancel the order."), call("cancel_pending_order", { order_id: "#W1" }, '{"order_id": "#W1", "status": "cancelled", "total": 10}'));
    const f = expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [1, 2], basis: ["steps"] });
    expect(f.rationale).toMatch(/without reason/);
  });
  it("saidArgsThenOmitted near-miss: all named arguments passed, or the user spoke in between", () => {
    const all = trace(user("Cancel order #W1."), think("I need to provide the `order_id` and `reason` to cancel the order."), call("cancel_pending_order", { order_id: "#W1", reason: "no longer needed" }, "ok"));
    expect(detectWith(reasoningActionMismatch, all)).toEqual([]);
    const between = trace(user("Cancel order #W1."), think("I need to provide the `order_id` and `reason` to cancel the order."), user("Actually just cancel it, no reason."), call("cancel_pending_order", { order_id: "#W1" }, "ok"));
    expect(detectWith(reasoningActionMismatch, between)).toEqual([]);
    // arguments of the code being written, before a shell call, are not the call's
    const code = trace(user("Fix the recursion."), think("To fix this, I need to pass `cls` explicitly in the recursive call."), call("bash", { command: "sed -i 's/f(x)/f(cls, x)/' m.py" }, ""));
    expect(detectWith(reasoningActionMismatch, code)).toEqual([]);
  });
  it("reportedActionNotPerformed: a transfer announced to the user although no transfer call was ever made", () => {
    const lookup = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active"}');
    const t = trace(user("Please transfer me to a human."), lookup(), say("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."), user("###TRANSFER###"));
    expectOne(t, detectWith(reasoningActionMismatch, t), { mode: "2.6", steps: [3], basis: ["steps"] });
    const made = trace(user("Please transfer me to a human."), say("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."), call("transfer_to_human_agents", { summary: "wants a human" }, "Transfer successful"));
    expect(detectWith(reasoningActionMismatch, made)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("1.1 task specification (v2 rules)", () => {
  const order = (args: Record<string, unknown>) => call("cancel_pending_order", args, '{"order_id": "#W1", "status": "cancelled", "total": 10}');

  it("unconfirmedWrite: a consequential action with no explicit yes, where the policy requires one", () => {
    const t = trace(system(TAU_POLICY), user("Please cancel order #W1, it is no longer needed."), order({ order_id: "#W1", reason: "no longer needed" }));
    const f = expectOne(t, detectWith(taskSpecViolation, t), { mode: "1.1", steps: [2], basis: ["steps", "task"] });
    expect(f.rationale).toMatch(/without the user's explicit confirmation/);
  });
  it("unconfirmedWrite near-miss: the user said yes first; no confirmation policy", () => {
    const yes = trace(system(TAU_POLICY), user("Please cancel order #W1."), say("I will cancel order #W1 for reason 'no longer needed'. Do you confirm?"), user("Yes, go ahead."), order({ order_id: "#W1", reason: "no longer needed" }));
    expect(detectWith(taskSpecViolation, yes)).toEqual([]);
    expect(detectWith(taskSpecViolation, trace(user("Please cancel order #W1."), order({ order_id: "#W1", reason: "no longer needed" })))).toEqual([]);
  });

  const cancelTask = (actions: unknown[]) => ({ text: "Cancel reservation ABC.", benchmark: "tau-bench", expected: { actions } });
  const lookup = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "status": "active", "cabin": "economy"}');

  it("needlessTransfer: a failed tau run handed to a human although the expected write was in scope", () => {
    const t = taskTrace(cancelTask([{ name: "cancel_reservation", kwargs: { reservation_id: "ABC" } }]), user("Cancel ABC please."), lookup(), transfer("The user wants to cancel reservation ABC."));
    expectOne(t, detectWith(taskSpecViolation, t, false), { mode: "1.1", steps: [3], basis: ["steps", "expected", "outcome"] });
  });
  it("needlessTransfer near-miss: the transfer was the expected action; the run did not fail; not a tau benchmark", () => {
    const onlyTransfer = taskTrace(cancelTask([{ name: "transfer_to_human_agents", kwargs: { summary: "x" } }]), user("Cancel ABC please."), lookup(), transfer("The user wants to cancel reservation ABC."));
    expect(detectWith(taskSpecViolation, onlyTransfer, false)).toEqual([]);
    const t = taskTrace(cancelTask([{ name: "cancel_reservation", kwargs: { reservation_id: "ABC" } }]), user("Cancel ABC please."), lookup(), transfer("The user wants to cancel reservation ABC."));
    expect(detectWith(taskSpecViolation, t, null)).toEqual([]);
    const other = taskTrace({ ...cancelTask([{ name: "cancel_reservation", kwargs: { reservation_id: "ABC" } }]), benchmark: "gaia" }, user("Cancel ABC please."), lookup(), transfer("The user wants to cancel reservation ABC."));
    expect(detectWith(taskSpecViolation, other, false)).toEqual([]);
  });

  it("expectedActionsBroken: the expected write with other arguments, and a write not expected at all", () => {
    const task = cancelTask([{ name: "cancel_reservation", kwargs: { reservation_id: "ABC", reason: "change of plan" } }]);
    const wrongArgs = taskTrace(task, user("Cancel ABC please, change of plan."), call("cancel_reservation", { reservation_id: "ABC", reason: "other" }, '{"reservation_id": "ABC", "status": "cancelled", "refund": 0}'));
    const f = expectOne(wrongArgs, detectWith(taskSpecViolation, wrongArgs), { mode: "1.1", steps: [1], basis: ["steps", "expected"] });
    expect(f.rationale).toMatch(/reason/);
    const extra = taskTrace(task, user("Cancel ABC please, change of plan."), call("book_reservation", { flight: "UA1" }, '{"reservation_id": "NEW", "status": "booked", "total": 100}'));
    expect(expectOne(extra, detectWith(taskSpecViolation, extra), { mode: "1.1", steps: [1], basis: ["steps", "expected"] }).rationale).toMatch(/does not call for/);
  });
  it("expectedActionsBroken near-miss: the expected call; a refused write; values the user itself asked for", () => {
    const task = cancelTask([{ name: "cancel_reservation", kwargs: { reservation_id: "ABC", reason: "change of plan" } }]);
    // key order and whitespace do not make a different call
    expect(detectWith(taskSpecViolation, taskTrace(task, user("Cancel ABC."), call("cancel_reservation", { reason: "change of plan", reservation_id: "ABC" }, '{"status": "cancelled", "a": 1, "b": 2}')))).toEqual([]);
    expect(detectWith(taskSpecViolation, taskTrace(task, user("Cancel ABC."), call("cancel_reservation", { reservation_id: "ABC", reason: "other" }, "Error: reservation cannot be cancelled")))).toEqual([]);
    const asked = taskTrace(task, user("Actually, please cancel reservation XYZ instead."), call("cancel_reservation", { reservation_id: "XYZ", reason: "change of plan" }, '{"status": "cancelled", "a": 1, "b": 2}'));
    expect(detectWith(taskSpecViolation, asked)).toEqual([]);
    // a payment id the user named in words ("credit card" for credit_card_4421)
    const pay = taskTrace(cancelTask([{ name: "book_reservation", kwargs: { flight: "UA1", payment_id: "gift_card_7" } }]), user("Book UA1 and pay with my credit card."), call("book_reservation", { flight: "UA1", payment_id: "credit_card_4421" }, '{"status": "booked", "a": 1, "b": 2}'));
    expect(detectWith(taskSpecViolation, pay)).toEqual([]);
    // a write the expected actions lack, that the (simulated) user asked for outright
    const offScript = taskTrace(task, user("Forget the cancellation, please book me on UA1 instead."), call("book_reservation", { flight: "UA1" }, '{"reservation_id": "NEW", "status": "booked", "total": 100}'));
    expect(detectWith(taskSpecViolation, offScript)).toEqual([]);
  });

  it("interfaceContract (never guess): results written by the model where the task forbids guessing", () => {
    const t = trace(system("Run the tests yourself. NEVER EVER GUESS THE TEST RESULT."), user("Fix the bug."), say("pytest\n============ 3 passed in 0.10s ============"));
    const f = expectOne(t, detectWith(taskSpecViolation, t), { mode: "1.1", steps: [2], basis: ["steps", "task"] });
    expect(f.evidence).toBe("============ 3 passed in 0.10s ============");
  });
  it("interfaceContract (never guess) near-miss: no such rule, or no imagined output", () => {
    expect(detectWith(taskSpecViolation, trace(user("Fix the bug."), say("pytest\n============ 3 passed in 0.10s ============")))).toEqual([]);
    expect(detectWith(taskSpecViolation, trace(system("NEVER EVER GUESS THE TEST RESULT."), user("Fix the bug."), call("bash", { command: "pytest" }, "3 passed", 0), say("The tests pass.")))).toEqual([]);
  });

  const ONE_COMMAND = "Your response should only include a *SINGLE* command in a ```bash block.";
  it("interfaceContract (one command per turn): several commands with their imagined output in one turn", () => {
    const turn = "Let me look around.\n```bash\nls\n```\n(Current directory: /repo)\nbash-$\n```bash\ncat setup.py\n```";
    const t = trace(system(ONE_COMMAND), user("Fix the bug."), say(turn));
    const f = expectOne(t, detectWith(taskSpecViolation, t), { mode: "1.1", steps: [2], basis: ["steps", "task"] });
    expect(f.evidence).toBe("cat setup.py");
  });
  it("interfaceContract (one command per turn) near-miss: several blocks without imagined output, or a single command", () => {
    const quoted = "Two ways to do it:\n```bash\nls\n```\nor\n```bash\nfind . -maxdepth 1\n```\nI will use the first.";
    expect(detectWith(taskSpecViolation, trace(system(ONE_COMMAND), user("Fix the bug."), say(quoted)))).toEqual([]);
    expect(detectWith(taskSpecViolation, trace(system(ONE_COMMAND), user("Fix the bug."), say("```bash\nls\n```")))).toEqual([]);
  });

  it("sourceIgnored: hypothetical data although the task requires a named source", () => {
    const t = taskTrace({ text: "What was Sydney's population? Ensure the data is from the 2011 census." }, say("Let me plan.", "Planner"), say("Let's assume the population was 4 million for this calculation.", "Analyst"));
    const f = expectOne(t, detectWith(taskSpecViolation, t), { mode: "1.1", steps: [1], basis: ["steps", "task"] });
    expect(f.rationale).toMatch(/2011 census/);
    const unretrieved = taskTrace({ text: "What was Sydney's population? Ensure the data is from the 2011 census." }, say("I will look up the census table. Here are the results: 4.3 million.", "Analyst"));
    expectOne(unretrieved, detectWith(taskSpecViolation, unretrieved), { mode: "1.1", steps: [0], basis: ["steps", "task"] });
  });
  it("sourceIgnored near-miss: the same words without a source constraint, and the instruction step's own wording", () => {
    const none = taskTrace({ text: "What was Sydney's population?" }, say("Let me plan.", "Planner"), say("Let's assume the population was 4 million for this calculation.", "Analyst"));
    expect(detectWith(taskSpecViolation, none)).toEqual([]);
    // AG2: the first agent step restates the task with its constraint; a hypothetical in that step is the task's own
    const task = "What was Sydney's population in 2011?";
    const ag2 = taskTrace({ text: task }, say(`The task is: ${task}\nConstraints: ensure the data is verified from the official census website; hypothetical values are not allowed.`, "Manager"), call("web_search", { q: "Sydney 2011 census" }, "Sydney 4,391,674"), say("The census gives 4,391,674.", "Analyst"));
    expect(detectionContext(ag2).contract.sourceConstraint?.step).toBe(0);
    expect(detectWith(taskSpecViolation, ag2)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("1.3 step repetition (v2 rules)", () => {
  const ledger = (loop: boolean) => say(`{"is_in_loop": {"reason": "${loop ? "The team keeps searching the same page" : "Progress is being made"}", "answer": ${loop}}, "next_speaker": {"answer": "WebSurfer"}}`, "Orchestrator");

  it("loopFlagged: the orchestrator's ledger reports a loop twice", () => {
    const t = trace(user("Find it."), ledger(true), say("Searching again.", "WebSurfer"), ledger(true));
    const f = expectOne(t, detectWith(stepRepetition, t), { mode: "1.3", steps: [1, 3], basis: ["steps"] });
    expect(f.evidence).toContain('"is_in_loop"');
  });
  it("loopFlagged near-miss: a single flag the team moved past", () => {
    expect(detectWith(stepRepetition, trace(user("Find it."), ledger(true), say("Trying another source.", "WebSurfer"), ledger(false)))).toEqual([]);
  });

  const failing = (cmd: string) => call("bash", { command: cmd }, "ModuleNotFoundError: No module named 'foo'", 1);
  it("sameFailure: the same failure three times with different arguments", () => {
    const t = trace(user("Run it."), say("Trying a."), failing("python a.py"), say("Trying b."), failing("python b.py"), say("Trying c."), failing("python c.py"));
    expectOne(t, detectWith(stepRepetition, t), { mode: "1.3", steps: [3, 6, 9], basis: ["steps"] });
  });
  it("sameFailure near-miss: parallel failures of one turn count once", () => {
    const batch: StepDraft[] = ["a", "b", "c"].flatMap((x) => [{ agent: "agent", role: "assistant" as const, kind: "tool_call" as const, text: `bash(python ${x}.py)`, tool: { name: "bash", callId: `p${x}`, args: { command: `python ${x}.py` } } }]);
    const results: StepDraft[] = ["a", "b", "c"].map((x) => ({ agent: "bash", role: "tool", kind: "tool_result", text: "ModuleNotFoundError: No module named 'foo'", tool: { name: "bash", callId: `p${x}`, output: "ModuleNotFoundError: No module named 'foo'", exitCode: 1, isError: true } }));
    const t = trace(user("Run it."), say("Running all three at once."), ...batch, ...results, say("Trying d."), failing("python d.py"));
    expect(detectWith(stepRepetition, t)).toEqual([]);
  });
  // (regression: turns were once delimited only by assistant text, so sequential retries counted as one turn)
  it("sameFailure: sequential retries without text in between are separate attempts", () => {
    const t = trace(user("Run it."), failing("python a.py"), failing("python b.py"), failing("python c.py"));
    expectOne(t, detectWith(stepRepetition, t), { mode: "1.3", steps: [2, 4, 6], basis: ["steps"] });
  });
  // the same gap on a tau run: three bookings with different amounts, each refused the same way, one after the other
  it("sameFailure: a tau agent's sequential refused writes (different arguments) are separate attempts", () => {
    const refused = (amount: number) => call("book_reservation", { flight: "UA1", amount }, "Error: payment amount does not add up");
    const t = trace(user("Book UA1."), refused(100), refused(120), refused(140));
    expectOne(t, detectWith(stepRepetition, t), { mode: "1.3", steps: [2, 4, 6], basis: ["steps"] });
  });

  const HANDOFF = "WebSurfer, please open the official ABS census website and report the exact 2011 population figure for the Sydney urban area with its source table name";
  const handoff = (text: string): StepDraft => ({ agent: "Orchestrator", role: "assistant", kind: "handoff", text });
  const variants = [HANDOFF, HANDOFF.replace("exact", "precise"), HANDOFF.replace("source table", "table")];
  it("near-duplicate handoffs: an instruction re-sent three times in other words", () => {
    const t = trace(user("Find it."), handoff(variants[0]!), handoff(variants[1]!), handoff(variants[2]!));
    expectOne(t, detectWith(stepRepetition, t), { mode: "1.3", steps: [1, 2, 3], basis: ["steps"] });
  });
  it("near-duplicate handoffs near-miss: the same near-duplicates as plain messages (reports need 90% overlap)", () => {
    const t = trace(user("Find it."), say(variants[0]!, "Orchestrator"), say(variants[1]!, "Orchestrator"), say(variants[2]!, "Orchestrator"));
    expect(detectWith(stepRepetition, t)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("2.2 clarification failure", () => {
  it("fires on an assumption in place of information the agent says it cannot see", () => {
    const t = trace(user("What does the chart show?"), say("Looking at the attachment."), say("I cannot view the attached image directly, so let's assume the chart shows a 10% increase."));
    const f = expectOne(t, detectWith(clarificationFailure, t), { mode: "2.2", steps: [2], basis: ["steps"] });
    expect(f.evidence).toMatch(/assume/);
  });
  it("near-miss: the assumption put as a question, and the first agent step (restating the task)", () => {
    expect(detectWith(clarificationFailure, trace(user("What does the chart show?"), say("Looking."), say("I cannot view the attached image directly. Should we assume the chart shows a 10% increase, or can you describe it?")))).toEqual([]);
    expect(detectWith(clarificationFailure, trace(user("What does the chart show?"), say("We cannot view the image; let's assume it is a bar chart and plan around that.")))).toEqual([]);
  });
  const profile = () => call("get_user_details", { user_id: "u1" }, JSON.stringify({ user_id: "u1", payment_methods: { credit_card_111: { source: "credit_card", brand: "visa", last_four: "1234", id: "credit_card_111" }, gift_card_222: { source: "gift_card", amount: 80, id: "gift_card_222" } } }));
  const upgrade = (payment_id: string) => call("update_reservation_flights", { reservation_id: "ABC", cabin: "business", payment_id }, '{"reservation_id": "ABC", "cabin": "business"}');
  it("paymentChosenUnasked: the user has two payment methods, named none, and the agent charged one", () => {
    const t = trace(user("Upgrade ABC to business, please."), profile(), say("The upgrade costs $120. Shall I proceed?"), user("Yes, go ahead."), upgrade("credit_card_111"));
    const f = expectOne(t, detectWith(clarificationFailure, t), { mode: "2.2", steps: [5], basis: ["steps"] });
    expect(f.rationale).toMatch(/2 payment methods and never named one; the agent chose credit_card_111/);
  });
  it("paymentChosenUnasked near-miss: the user named it (by kind, brand or last four), asked for the original one, or has only one", () => {
    for (const said of ["Yes, use my gift card.", "Yes, charge the Visa.", "Yes, the card ending in 1234.", "Yes, use the original form of payment."]) {
      const pick = /gift/.test(said) ? "gift_card_222" : "credit_card_111";
      expect(detectWith(clarificationFailure, trace(user("Upgrade ABC to business, please."), profile(), say("The upgrade costs $120. Which payment method?"), user(said), upgrade(pick))), said).toEqual([]);
    }
    const single = call("get_user_details", { user_id: "u1" }, JSON.stringify({ user_id: "u1", payment_methods: { credit_card_111: { source: "credit_card", id: "credit_card_111" } } }));
    expect(detectWith(clarificationFailure, trace(user("Upgrade ABC to business, please."), single, user("Yes."), upgrade("credit_card_111")))).toEqual([]);
  });
});

describe("2.3 derailment", () => {
  it("fires when the system says twice that the work drifted from the objective", () => {
    const t = trace(user("Find the 2011 population of Sydney."), say("Plan: search the census.", "Orchestrator"), say("The recent searches are unrelated to the original question.", "Orchestrator"), say("Here is a page on Sydney's history.", "WebSurfer"), say("The team has drifted from the objective again.", "Orchestrator"));
    const f = expectOne(t, detectWith(derailment, t), { mode: "2.3", steps: [2, 4], basis: ["steps"] });
    expect(f.evidence).toMatch(/unrelated/);
  });
  it("near-miss: a single remark, and the first agent step's wording", () => {
    expect(detectWith(derailment, trace(user("Find it."), say("Plan.", "Orchestrator"), say("That search result was irrelevant; moving on.", "Orchestrator")))).toEqual([]);
    expect(detectWith(derailment, trace(user("Find it."), say("Results that are unrelated to the question must be ignored.", "Orchestrator"), say("That page seems irrelevant.", "Orchestrator")))).toEqual([]);
  });
});

describe("2.4 information withholding", () => {
  const SUMMARY = "The user wants to change flight ABC; it is basic economy, which cannot be modified, and no refund applies to it.";
  const details = () => call("get_reservation_details", { reservation_id: "ABC" }, '{"reservation_id": "ABC", "cabin": "basic_economy", "status": "active"}');
  it("fires when the findings went only into the transfer summary", () => {
    const t = trace(user("I want to change my flight ABC."), details(), transfer(SUMMARY));
    expectOne(t, detectWith(informationWithholding, t), { mode: "2.4", steps: [3], basis: ["steps"] });
  });
  it("fires when the only message before the transfer announces the hand-off", () => {
    const t = trace(user("I want to change my flight ABC."), details(), say("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."), transfer(SUMMARY));
    expectOne(t, detectWith(informationWithholding, t), { mode: "2.4", steps: [4], basis: ["steps"] });
  });
  it("near-miss: the user was told first; a transfer with no summary; no lookup at all", () => {
    expect(detectWith(informationWithholding, trace(user("I want to change my flight ABC."), details(), say("Your reservation is basic economy, which cannot be modified under our policy."), user("Then transfer me."), transfer(SUMMARY)))).toEqual([]);
    expect(detectWith(informationWithholding, trace(user("I want to change my flight ABC."), details(), transfer("change flight")))).toEqual([]);
    expect(detectWith(informationWithholding, trace(user("I want to change my flight ABC."), transfer(SUMMARY)))).toEqual([]);
  });
});

describe("2.5 ignored input", () => {
  const book = (amount: number, out: string) => call("book_reservation", { flight: "UA1", payment: { id: "card_1", amount } }, out);
  it("statedValueIgnored: a refusal states the value needed and the retry does not use it", () => {
    const t = trace(user("Book UA1."), book(957, "Error: total price is 1002, but paid 957"), say("Let me try again."), book(957, "Error: total price is 1002, but paid 957"));
    const f = expectOne(t, detectWith(ignoredInput, t), { mode: "2.5", steps: [2, 4], basis: ["steps"] });
    expect(f.evidence).toMatch(/total price is 1002/);
  });
  it("statedValueIgnored near-miss: the retry uses the stated value; a shell error's numbers", () => {
    expect(detectWith(ignoredInput, trace(user("Book UA1."), book(957, "Error: total price is 1002, but paid 957"), book(1002, '{"status": "booked", "a": 1, "b": 2}')))).toEqual([]);
    expect(detectWith(ignoredInput, trace(user("Run"), call("bash", { command: "python a.py" }, "Error: value should be 5", 1), call("bash", { command: "python a.py --x 3" }, "ok", 0)))).toEqual([]);
  });
  it("feedbackRepeated: feedback named hypothetical data as the failure and the team used it again", () => {
    const t = trace(user("Compute the growth rate."), say("The previous attempt proceeded with hypothetical calculations instead of getting the real data.", "Critic"), say("Let's assume the 2010 figure was 4 million.", "Analyst"));
    const f = expectOne(t, detectWith(ignoredInput, t), { mode: "2.5", steps: [1, 2], basis: ["steps"] });
    expect(f.evidence).toMatch(/assume/);
  });
  const handoff = (to: string, text: string): StepDraft => ({ agent: "Orchestrator", role: "assistant", kind: "handoff", text, tool: { name: "handoff", args: { to } } });
  it("instructionNotFollowed: asked to search for another source, the browsing agent scrolled the page it was on", () => {
    const t = trace(user("Who won Survivor 2010?"), handoff("WebSurfer", "Please search for another credible source that lists all US Survivor winners."), say("I scrolled down one page in the browser.\n\nHere is a screenshot of the page.", "WebSurfer"));
    const f = expectOne(t, detectWith(ignoredInput, t), { mode: "2.5", steps: [2], basis: ["steps"] });
    expect(f.evidence).toMatch(/^I scrolled down/);
    expect(f.rationale).toMatch(/Orchestrator asked WebSurfer \(step 1\) to search for/);
  });
  it("instructionNotFollowed near-miss: asked to look within the page, to another agent, or the agent searched", () => {
    const within = trace(user("Q"), handoff("WebSurfer", "Please search for the keyword 'paper' in the article."), say("I scrolled down one page in the browser.", "WebSurfer"));
    expect(detectWith(ignoredInput, within)).toEqual([]);
    const other = trace(user("Q"), handoff("FileSurfer", "Please open the file report.pdf."), say("I scrolled down one page in the browser.", "WebSurfer"));
    expect(detectWith(ignoredInput, other)).toEqual([]);
    const done = trace(user("Q"), handoff("WebSurfer", "Please search for another credible source."), say("I typed 'Survivor winners list' into the browser search bar.", "WebSurfer"));
    expect(detectWith(ignoredInput, done)).toEqual([]);
  });
  it("feedbackRepeated near-miss: the feedback was followed with a real lookup", () => {
    const t = trace(user("Compute the growth rate."), say("The previous attempt proceeded with hypothetical calculations instead of getting the real data.", "Critic"), call("web_search", { q: "Sydney 2010 population" }, "4,5 million"), say("The census gives 4.5 million for 2010.", "Analyst"));
    expect(detectWith(ignoredInput, t)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
describe("measured modes", () => {
  it("a mode no detector examines (1.2) stays null; examined modes are 0 or 1 and name their detectors", async () => {
    const t = trace(user(ITBENCH), say("First we'll list the data directory and read the alerts."));
    const r = runDetectors(t);
    expect(r.measuredBy["1.2"]).toBeUndefined();
    expect(r.measuredBy["3.1"]).toEqual(["rules/premature-termination"]);
    const d = await diagnoseTrace(t);
    expect(d.modes!["1.2"]).toBeNull();
    expect(d.measured_by?.["1.2"]).toBeUndefined();
    expect(d.modes!["3.1"]).toBe(1);
    for (const det of DETECTORS) {
      expect(d.measured_by?.[det.mode]).toContain(`rules/${det.id}`);
      expect([0, 1]).toContain(d.modes![det.mode]);
    }
    for (const [code, v] of Object.entries(d.modes!)) expect(v === null).toBe(d.measured_by?.[code] === undefined);
  });
});

describe("guards from the independent precision check (docs/precision-spotcheck.md)", () => {
  it("reads agents' own words: a browsing agent's page dump is not an admission or a claim", () => {
    const dump = "I clicked the link.\n\nHere is a screenshot of the page. The viewport shows: We assume the data is accurate. Search Bar Placeholder";
    const t = trace(user("Which paper?"), say("Searching the archive.", "WebSurfer"), say(dump, "WebSurfer"), say("FINAL ANSWER: 2206.01234", "Orchestrator"));
    expect(detectWith(prematureTermination, t, false).filter((f) => /never obtained/.test(f.rationale ?? ""))).toEqual([]);
    expect(detectWith(incorrectVerification, t, false).filter((f) => /never obtained/.test(f.rationale ?? ""))).toEqual([]);
  });
  it("a negated verification ('none of them has been confirmed') approves nothing", () => {
    const t = trace(user("Which shops are open?"), say("Checked three shops.", "WebSurfer"), say("None of them has been confirmed to be open yet.", "Orchestrator"), say("FINAL ANSWER: Shop A", "Orchestrator"));
    expect(detectWith(incorrectVerification, t, false).filter((f) => /approved/.test(f.rationale ?? ""))).toEqual([]);
  });
  it("'FINAL ANSWER: Unable to determine' agrees with a conclusion that the information was not obtained", () => {
    const t = trace(user("What was deleted?"), say("The page was not accessible; the word could not be found.", "Orchestrator"), say("FINAL ANSWER: Unable to determine", "Orchestrator"));
    expect(detectWith(reasoningActionMismatch, t, false)).toEqual([]);
  });
  it("a stated total paid in parts follows the tool's correction (2.5)", () => {
    const t = trace(user("Book it."), call("book_reservation", { payment_methods: [{ id: "gc", amount: 300 }] }, "Error: payment amount does not add up, total price is 305, but paid 300"), call("book_reservation", { payment_methods: [{ id: "gc", amount: 250 }, { id: "cc", amount: 55 }] }, '{"status": "booked"}'));
    expect(detectWith(ignoredInput, t)).toEqual([]);
  });
  it("a refund that 'will be' processed states an amount due, which the result's prices may support (3.3)", () => {
    const result = '{"order_id": "#W1", "status": "return requested", "items": [{"name": "Boots", "price": 186.45}], "payment_history": [{"transaction_type": "payment", "amount": 500}]}';
    const t = trace(user("Return the boots."), call("return_delivered_order_items", { order_id: "#W1" }, result), say("The refund of $186.45 will be processed to your gift card once the return is received."));
    expect(detectWith(incorrectVerification, t)).toEqual([]);
  });
});

describe("3.2 an answer from one unchecked source", () => {
  it("fires when a single search is all the final answer rests on", () => {
    const t = trace(user("What do analysts forecast for AI in 2025?"), call("web_search", { query: "AI 2025 forecasts" }, "snippets: …"), call("final_answer", { answer: "Growth of 30 %." }, "ok"));
    const f = detectWith(noVerification, t);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ mode: "3.2", steps: [1, 3], basis: ["steps"] });
  });
  it("does not fire with a second lookup, or in a service dialogue with expected actions", () => {
    const two = trace(user("What do analysts forecast?"), call("web_search", { query: "AI 2025 forecasts" }, "snippets"), call("visit_webpage", { url: "https://example.org/report" }, "page"), call("final_answer", { answer: "30 %" }, "ok"));
    expect(detectWith(noVerification, two)).toEqual([]);
    const tau = taskTrace({ text: "Look up my order.", expected: { actions: [{ name: "get_order_details", kwargs: { order_id: "#W1" } }] } }, user("Where is my order?"), call("search_orders", { user: "a" }, "[]"), call("final_answer", { answer: "none" }, "ok"));
    expect(detectWith(noVerification, tau)).toEqual([]);
  });
});

describe("2.6 a manual that documents what was not built", () => {
  const code = "```python\n" + Array.from({ length: 40 }, (_, i) => `def place_stone_${i}(board, row, col):\n    board[row][col] = 1`).join("\n") + "\n```";
  it("fires on a manual section no code implements", () => {
    const manual = "# Gomoku User Manual\n\n## Installation\n\npip install -r requirements.txt\n\n### Story Mode\n\nProgress through levels.";
    const t = trace(user("Build a gomoku game."), say(code, "Programmer"), say(manual, "Programmer"));
    const f = detectWith(reasoningActionMismatch, t);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ mode: "2.6", steps: [2], evidence: "### Story Mode" });
  });
  it("does not fire on generic sections or on features the code mentions", () => {
    const manual = "# Gomoku User Manual\n\n## Installation\n\npip install\n\n## Usage\n\nRun it.\n\n### Placing Stones\n\nClick a cell.";
    expect(detectWith(reasoningActionMismatch, trace(user("Build a gomoku game."), say(code, "Programmer"), say(manual, "Programmer")))).toEqual([]);
  });
});
