import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { call, detectWith, empty, say, trace, user } from "./fixtures.js";
import { stepRepetition } from "./step-repetition.js";
import { terminationUnaware } from "./termination-unaware.js";
import { prematureTermination } from "./premature-termination.js";
import { noVerification } from "./no-verification.js";
import { incorrectVerification } from "./incorrect-verification.js";
import { reasoningActionMismatch } from "./reasoning-action-mismatch.js";

/** Each case is a false-positive pattern found in the corpus spot check (docs/precision-spotcheck.md). */
const modes = (fs: { mode: string }[]) => [...new Set(fs.map((f) => f.mode))];
const cap = { agent: "harness", role: "system" as const, kind: "termination" as const, text: "Agent reached maximum iteration (50)", tags: ["step-limit"] };

describe("false-positive guards from the corpus spot check", () => {
  it("P3 (guideline v2): a run ended by a cap before its objective is 3.1, and a cap alone is not 1.5", () => {
    const t = trace(user("Find the answer."), say("Let me search for the page next."), cap);
    expect(modes(detectWith(prematureTermination, t, false))).toEqual(["3.1"]);
    expect(detectWith(terminationUnaware, t)).toEqual([]);
  });

  it("P3: a trace that ends on a tool result gave the agent no turn to stop", () => {
    expect(detectWith(prematureTermination, trace(user("Book it."), say("Booking now."), call("book_reservation", { id: 1 }, "Error: payment amount does not add up")))).toEqual([]);
  });

  it("P2: a harness nudge the agent answered is not a missing deliverable", () => {
    const t = trace(user("Fix the bug."), say("I changed the file."), user("Please continue working on the task on whatever approach you think is suitable.", ["harness-retry"]), say("The fix is complete."), { agent: "agent", role: "assistant", kind: "termination", text: "finish" });
    expect(detectWith(prematureTermination, t)).toEqual([]);
  });

  it("P4/P5: retry wording from a peer agent or a simulated user's reasoning, and format errors, are not harness re-prompts", () => {
    const reviewer = { agent: "Code Reviewer", role: "user" as const, kind: "message" as const, text: "The code is missing the import of random in the maze.py file." };
    const thinking = { agent: "user", role: "user" as const, kind: "reasoning" as const, text: "The agent said: please continue with the human agent." };
    const format = { agent: "user", role: "user" as const, kind: "message" as const, text: "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.", tags: ["format-error"] };
    expect(detectWith(terminationUnaware, trace(user("Build a maze game."), say("Here is maze.py"), reviewer, say("Added it."), thinking, format, say("ok")))).toEqual([]);
  });

  it("P6: a Magentic-One sub-agent's TERMINATE ends its own turn, not the run", () => {
    const steps = [user("Find the page numbers."), say("Working on it."), say("TERMINATE", "Assistant"), ...[1, 2, 3].map((i) => say(`Please try listening to the audio file on another device, attempt ${i}, and note the page numbers.`, "Orchestrator"))];
    const t = buildTrace({ id: "m1", framework: "magentic-one", source: { file: "t", format: "t", index: 0 } }, steps);
    expect(detectWith(terminationUnaware, t)).toEqual([]);
  });

  it("P7: plans, requests and failure reports that mention confirming are not success claims", () => {
    const failed = () => call("cancel_order", { id: "#W1" }, "Error: non-pending order cannot be cancelled");
    for (const text of ["Once confirmed, I will proceed with the cancellation.", "Could you confirm the order id?", "We verified that the script was executed. Despite creating the file, it reported File not found."])
      expect(detectWith(incorrectVerification, trace(user("Cancel my order"), failed(), say(text)))).toEqual([]);
  });

  it("P8: a claim about a different domain action than the failed one", () => {
    const t = trace(user("Cancel and rebook"), call("cancel_reservation", { id: "A" }, "{\"status\": \"cancelled\"}"), call("book_reservation", { id: "B" }, "Error: payment amount does not add up"), say("Your reservation A has been cancelled. The new booking could not be made."));
    expect(detectWith(incorrectVerification, t)).toEqual([]);
    const wrong = trace(user("Book it"), call("book_reservation", { id: "B" }, "Error: payment amount does not add up"), say("Your flight has been booked and confirmed."));
    expect(modes(detectWith(incorrectVerification, wrong))).toEqual(["3.3"]);
  });

  it("P10/P11: a re-apply after a revert, and edits that differ in indentation, are not repetition", () => {
    const fix = { command: ["sed", "-i", "s/a/b/", "core.py"] };
    expect(detectWith(stepRepetition, trace(user("Fix"), call("shell", fix, "", 0), call("shell", { command: ["sed", "-i", "s/b/a/", "core.py"] }, "", 0), call("shell", fix, "", 0)))).toEqual([]);
    const edit = (body: string) => call("edit", { replacement: body }, "File updated.", 0);
    expect(detectWith(stepRepetition, trace(user("Fix"), edit("def f():\n  return 1"), edit("def f():\n    return 1")))).toEqual([]);
  });

  it("a refused write retried unchanged is repetition; a toggle applied twice is not", () => {
    const refused = () => call("update_reservation_flights", { id: "X", cabin: "economy" }, "Error: not enough seats", undefined);
    expect(modes(detectWith(stepRepetition, trace(user("Change cabin"), refused(), say("Let me try again."), refused())))).toEqual(["1.3"]);
    expect(detectWith(stepRepetition, trace(user("Fix MMS"), call("toggle_airplane_mode", {}, "Airplane mode is now ON", 0), call("toggle_airplane_mode", {}, "Airplane mode is now OFF", 0)))).toEqual([]);
  });

  it("P13: a backticked code identifier is not an announced tool", () => {
    const t = trace(user("Fix"), call("bash", { command: "grep -n merge_attrs core.py" }, "12: def merge_attrs", 0), say("Next, I'll re-check `merge_attrs` in core.py."), call("bash", { command: "sed -n 10,30p core.py" }, "def merge_attrs(...)", 0));
    expect(detectWith(reasoningActionMismatch, t)).toEqual([]);
  });

  it("P14/P15: running the changed file is a check; prose edits and scratch-file cleanup need none", () => {
    const ran = trace(user("Fix"), call("edit", { path: "tests/missing_colon.py" }, "edited", 0), call("bash", { command: "python tests/missing_colon.py" }, "8.2", 0), call("submit", {}, "submitted"));
    expect(detectWith(noVerification, ran)).toEqual([]);
    const notes = trace(user("Update the plan"), call("Edit", { file_path: "/repo/PLAN.md" }, "The file has been updated.", 0), say("Done. The plan now lists the three phases."));
    expect(detectWith(noVerification, notes)).toEqual([]);
    const tested = trace(user("Fix"), call("edit", { path: "core.py" }, "edited", 0), call("bash", { command: "python reproduce.py" }, "ok", 0), call("bash", { command: "python -m pytest tests/test_core.py" }, "3 passed", 0), call("bash", { command: "rm reproduce.py" }, "", 0), call("submit", {}, "submitted"));
    expect(detectWith(noVerification, tested)).toEqual([]);
    // a repro-only check where the project has tests is incomplete (3.2): the cleanup is not what made it so
    const reproOnly = trace(user("Fix"), call("edit", { path: "core.py" }, "edited", 0), call("bash", { command: "python reproduce.py" }, "ok", 0), call("bash", { command: "rm reproduce.py" }, "", 0), call("submit", {}, "submitted"));
    expect(detectWith(noVerification, reproOnly)[0]).toMatchObject({ mode: "3.2", steps: [1, 7] });
  });

  it("the harness's missing-deliverable complaint still counts on a run whose model never produced anything (itbench.md §5.6)", () => {
    const retry = "I don't see agent_output.json file. Please resume the investigation.";
    const t = trace(user("Begin investigation"), empty(), user(retry, ["harness-retry"]), empty(), user(retry, ["harness-retry"]), empty());
    expect(detectWith(terminationUnaware, t)).toEqual([]);
    expect(modes(detectWith(prematureTermination, t))).toEqual(["3.1"]);
  });

  it("P16: a simulated user re-running its own device check is not the agent repeating itself", () => {
    const userCheck = (out: string) => [
      { agent: "user", role: "user" as const, kind: "tool_call" as const, text: "run_speed_test()", tool: { name: "run_speed_test", callId: `u${out}`, args: {} } },
      { agent: "run_speed_test", role: "tool" as const, kind: "tool_result" as const, text: "No connection", tool: { name: "run_speed_test", callId: `u${out}`, output: "No connection" } },
    ];
    expect(detectWith(stepRepetition, trace(user("My data does not work"), ...userCheck("1"), say("Please toggle data."), ...userCheck("2"), say("Please reset APN."), ...userCheck("3")))).toEqual([]);
  });

  it("P17: confirming what the error was is a diagnosis, not a success claim", () => {
    const t = trace(user("Debug it"), call("bash", { command: "python run.py" }, "ValueError: unknown language unknown", 1), say("Confirmed the error was a ValueError raised by the language lookup."));
    expect(detectWith(incorrectVerification, t)).toEqual([]);
  });

  it("3.2 recall: the last change that took effect is checked, and 'all references removed' on a prose file is checkable", () => {
    const refusedLast = trace(user("Fix"), call("edit", { path: "core.py" }, "edited", 0), call("edit", { path: "core.py" }, "No file open. Use the `open` command first.", 1), call("submit", {}, "submitted"));
    expect(modes(detectWith(noVerification, refusedLast))).toEqual(["3.2"]);
    const completeness = trace(user("Remove Instructor from the README"), call("Edit", { file_path: "/repo/README.md" }, "The file has been updated.", 0), say("Done. Removed all references to Instructor."));
    expect(modes(detectWith(noVerification, completeness))).toEqual(["3.2"]);
  });
});
