import { describe, expect, it } from "vitest";
import { call, say, system, taskTrace, trace, user } from "./fixtures.js";
import { extractContract, instructionSteps, sentenceOf } from "./contract.js";

/** Contract extraction: requirements quoted verbatim from the task (step -1) or the instruction steps that state them. */
describe("contract: deliverables", () => {
  it("finds the deliverable the task names, with its path and the sentence that requires it", () => {
    const c = extractContract(taskTrace({ text: "Diagnose the incident in the otel-demo namespace and write agent_output.json with the root cause. Be thorough." }));
    expect(c.deliverables).toEqual([{ path: "agent_output.json", step: -1, quote: expect.stringContaining("agent_output.json with the root cause.") }]);
    expect(c.deliverables[0]!.quote).not.toContain("Be thorough");
  });
  it("keeps directories, reads instruction steps, and lists a path once", () => {
    const t = trace(system("Save the report to `reports/summary.md`. Remember: save the report to reports/summary.md."), user("Go."), say("Starting."));
    expect(extractContract(t).deliverables).toEqual([expect.objectContaining({ path: "reports/summary.md", step: 0 })]);
  });
  it("near-miss: a file the task only mentions (read, not write) is no deliverable; nor is one named after the agent's first action", () => {
    expect(extractContract(taskTrace({ text: "Read config.yaml and explain what it does." })).deliverables).toEqual([]);
    const late = trace(user("Fix the bug."), say("Looking."), user("Also write notes.md when you are done."));
    expect(extractContract(late).deliverables).toEqual([]);
  });
});

describe("contract: instruction-level requirements", () => {
  it("tests unchanged", () => {
    const c = extractContract(trace(user("Fix the failing parser. Do not modify the tests in any way."), say("ok")));
    expect(c.keepTestsUnchanged).toEqual({ quote: "Do not modify the tests in any way.", step: 0 });
    expect(extractContract(trace(user("Fix the parser and run the tests."), say("ok"))).keepTestsUnchanged).toBeUndefined();
  });
  it("confirmation policy (tau), and one tool call at a time", () => {
    const policy = "You are an airline agent.\nBefore taking any actions that update the booking database, you must obtain explicit user confirmation (yes) to proceed.\nYou should only make one tool call at a time, and if you make a tool call, you should not respond to the user simultaneously.";
    const c = extractContract(trace(system(policy), user("Cancel ABC."), say("Sure.")));
    expect(c.confirmBeforeWrite).toEqual({ quote: "Before taking any actions that update the booking database, you must obtain explicit user confirmation (yes) to proceed.", step: 0 });
    expect(c.oneActionPerTurn?.quote).toMatch(/^You should only make one tool call at a time/);
    expect(extractContract(trace(system("You are an airline agent. Be polite."), user("Cancel ABC."))).confirmBeforeWrite).toBeUndefined();
  });
  it("one command per turn (SWE-agent) and never guess", () => {
    const swe = "Your response should only include a *SINGLE* command in a ```bash block. NEVER EVER GUESS THE TEST RESULT.";
    const c = extractContract(trace(system(swe), user("Fix the issue."), say("ls")));
    expect(c.oneCommandPerTurn).toEqual({ quote: expect.stringContaining("our response should only include a *SINGLE* command in a ```bash block."), step: 0 });
    expect(c.oneCommandPerTurn!.quote).not.toContain("GUESS");
    expect(c.noGuessing).toEqual({ quote: "NEVER EVER GUESS THE TEST RESULT.", step: 0 });
    const loose = extractContract(trace(system("Run one or more commands. Guess less, test more."), user("Fix it.")));
    expect(loose.oneCommandPerTurn).toBeUndefined();
    expect(loose.noGuessing).toBeUndefined();
  });
  it("only the instruction steps count: a requirement stated after the agent's first action is not extracted", () => {
    const t = trace(user("Fix the issue."), call("bash", { command: "ls" }, "a", 0), user("Do not modify the tests."));
    expect(extractContract(t).keepTestsUnchanged).toBeUndefined();
  });
});

describe("contract: source constraints", () => {
  it("from the task statement", () => {
    const c = extractContract(taskTrace({ text: "What was Sydney's population? Ensure the data is from the 2011 census." }));
    expect(c.sourceConstraint).toEqual({ quote: expect.stringContaining("Ensure the data is from the 2011 census."), step: -1 });
    expect(extractContract(taskTrace({ text: "Based on the attached image, what is the total?" })).sourceConstraint).toBeUndefined();
  });
  it("from an AG2 group chat whose first agent step restates the task with its manager's plan", () => {
    const task = "What was Sydney's population in 2011?";
    const t = taskTrace({ text: task }, say(`The task is: ${task}\nPlan from the manager: look the figure up.\nConstraints: ensure the data is verified from the official census website.`, "Manager"), say("Searching.", "Analyst"));
    expect(instructionSteps(t).map((s) => s.index)).toEqual([0]);
    expect(extractContract(t).sourceConstraint).toEqual({ quote: "Constraints: ensure the data is verified from the official census website.", step: 0 });
  });
  it("near-miss: a first agent step that does not restate the task is the agent speaking, not an instruction", () => {
    const t = taskTrace({ text: "What was Sydney's population in 2011?" }, say("I think we must make sure the figure comes from the official census website.", "Analyst"));
    expect(instructionSteps(t)).toEqual([]);
    expect(extractContract(t).sourceConstraint).toBeUndefined();
  });
});

describe("contract: expected actions and outputs", () => {
  it("tau-bench: actions with kwargs, and outputs", () => {
    const c = extractContract(taskTrace({ text: "t", expected: { actions: [{ name: "cancel_reservation", kwargs: { reservation_id: "ABC" } }], outputs: ["327", ""] } }));
    expect(c.expectedActions).toEqual([{ name: "cancel_reservation", args: { reservation_id: "ABC" } }]);
    expect(c.expectedOutputs).toEqual(["327"]);
  });
  it("tau2: arguments, communicate_info, and the user's own actions (requestor) left out", () => {
    const c = extractContract(
      taskTrace({
        text: "t",
        benchmark: "tau2-telecom",
        expected: {
          actions: [
            { action_id: "1", requestor: "user", name: "toggle_airplane_mode", arguments: {} },
            { action_id: "2", requestor: "assistant", name: "refuel_data", arguments: { customer_id: "C1", gb_amount: 2 } },
            { action_id: "3", name: "enable_roaming", arguments: { customer_id: "C1" } },
          ],
          communicate_info: ["$12.50"],
        },
      }),
    );
    expect(c.expectedActions).toEqual([
      { name: "refuel_data", args: { customer_id: "C1", gb_amount: 2 } },
      { name: "enable_roaming", args: { customer_id: "C1" } },
    ]);
    expect(c.expectedOutputs).toEqual(["$12.50"]);
  });
  it("a task without expectations, or with a plain expected answer, has none", () => {
    expect(extractContract(taskTrace({ text: "t", expected: "42" }))).toMatchObject({ expectedActions: [], expectedOutputs: [], deliverables: [] });
    expect(extractContract(trace(user("Hi")))).toMatchObject({ expectedActions: [], expectedOutputs: [] });
  });
});

describe("sentenceOf", () => {
  // (regressions: the first sentence once lost its first letter, and "?"/"!" did not end the sentence before a match)
  it("quotes a requirement in the first sentence whole, first letter included", () => {
    expect(sentenceOf("Write agent_output.json with the entities. Done.", /agent_output/)).toBe("Write agent_output.json with the entities.");
    const c = extractContract(taskTrace({ text: "Diagnose the incident and write agent_output.json with the root cause." }, system("Your response should only include a *SINGLE* command.")));
    expect(c.oneCommandPerTurn?.quote).toBe("Your response should only include a *SINGLE* command.");
  });
  it("does not quote the question before a requirement (a sentence also ends at ? and !)", () => {
    expect(sentenceOf("What was Sydney's population? Ensure the data is from the 2011 census.", /Ensure/)).toBe("Ensure the data is from the 2011 census.");
  });

  it("quotes the sentence around a match, not cut at the dot of a file name", () => {
    expect(sentenceOf("First read alerts. Then write agent_output.json with the entities. Done.", /agent_output/)).toBe("Then write agent_output.json with the entities.");
    expect(sentenceOf("nothing here", /agent_output/)).toBeUndefined();
  });
});
