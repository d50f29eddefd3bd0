import { describe, expect, it } from "vitest";
import {
  callKey,
  changedFile,
  failureSignature,
  isCleanupCall,
  isCompletionCall,
  isFailedOutcome,
  isMutatingCall,
  isProseFile,
  isVerifyingCall,
  normalizeArgs,
  returnsState,
} from "./actions.js";

describe("isMutatingCall: the union of the detectors' and the guards' rules", () => {
  it("reads domain tool names by their verb, not by any word in them", () => {
    expect(isMutatingCall({ name: "cancel_reservation", args: { reservation_id: "ZFA04Y" } })).toBe(true);
    expect(isMutatingCall({ name: "deleteAlert" })).toBe(true);
    expect(isMutatingCall({ name: "kubectl_apply" })).toBe(true);
    expect(isMutatingCall({ name: "toggle_airplane_mode" })).toBe(true); // tau2 telecom device actions
    // "change", "send", "transfer" inside a name that reads, tests or hands off
    expect(isMutatingCall({ name: "mcp__offline_incident_analysis__k8s_spec_change_analysis" })).toBe(false);
    expect(isMutatingCall({ name: "can_send_mms" })).toBe(false);
    expect(isMutatingCall({ name: "transfer_to_human_agents", args: { summary: "…" } })).toBe(false);
    expect(isMutatingCall({ name: "get_reservation_details" })).toBe(false);
  });

  it("never counts plan bookkeeping or the final answer as a change", () => {
    for (const name of ["update_plan", "TodoWrite", "think", "submit", "final_answer"]) expect(isMutatingCall({ name, args: {} })).toBe(false);
    expect(isMutatingCall({ name: "submit_order", args: {} })).toBe(true);
  });

  it("treats editors as writing unless they are asked to view", () => {
    expect(isMutatingCall({ name: "str_replace_editor", args: { command: "view", path: "a.py" } })).toBe(false);
    expect(isMutatingCall({ name: "str_replace_editor", args: '{"command": "create", "path": "a.py"}' })).toBe(true);
    expect(isMutatingCall({ name: "apply_patch", args: "{\n  \"input\": \"*** Begin Patch\\n*** Add File: agent_output.json\\n+{" })).toBe(true);
  });

  it("judges shell and code tools by their command, case-insensitively", () => {
    expect(isMutatingCall({ name: "Bash", args: { command: "rm -rf .claude/skills/execPlan" } })).toBe(true);
    expect(isMutatingCall({ name: "Bash", args: { command: "ls -la .claude/skills/ 2>/dev/null || echo none" } })).toBe(false);
    expect(isMutatingCall({ name: "bash", args: { command: "cat <<'EOF' > reproduce_issue.py\nprint(1)\nEOF" } })).toBe(true);
    expect(isMutatingCall({ name: "execute_bash", args: { command: "kubectl get pods -n otel-demo 2>&1 | head" } })).toBe(false);
    // in an IPython cell `a > b` is a comparison; the editing helpers and file writes are changes
    expect(isMutatingCall({ name: "run_ipython", args: { code: "if score > threshold:\n    print(score)" } })).toBe(false);
    expect(isMutatingCall({ name: "run_ipython", args: { code: "edit_file_by_replace('/workspace/App.tsx', to_replace='a', new_content='b')" } })).toBe(true);
    expect(isMutatingCall({ name: "run_ipython", args: { code: "%pip install scitools-pyke" } })).toBe(true);
  });
});

describe("isVerifyingCall", () => {
  it("recognises reading tools, test-named tools, checks in commands and running code", () => {
    expect(isVerifyingCall({ name: "get_alerts" })).toBe(true);
    expect(isVerifyingCall({ name: "run_speed_test" })).toBe(true);
    expect(isVerifyingCall({ name: "Read", args: { file_path: "/repo/a.ts" } })).toBe(true);
    expect(isVerifyingCall({ name: "shell", args: { command: ["jq", ".", "agent_output.json"] } })).toBe(true);
    expect(isVerifyingCall({ name: "python", args: "python tests/missing_colon.py" })).toBe(true);
    expect(isVerifyingCall({ name: "bash", args: { command: "python setup.py install" } })).toBe(false);
    expect(isVerifyingCall({ name: "calculate", args: { expression: "2+2" } })).toBe(false);
    expect(isVerifyingCall({ name: "think", args: { thought: "check it" } })).toBe(false);
  });
});

describe("results", () => {
  it("fails on the error flag, a non-zero exit code, or output that opens with an error — an exit code of 0 wins", () => {
    expect(isFailedOutcome({ output: "Error: not enough seats on flight HAT290" })).toBe(true);
    expect(isFailedOutcome({ output: "error: flag cartFailure on", exitCode: 0 })).toBe(false);
    expect(isFailedOutcome({ output: "ok", isError: true })).toBe(true);
    expect(isFailedOutcome({ output: "", exitCode: 2 })).toBe(true);
  });

  it("recognises a result that returns the resulting state", () => {
    expect(returnsState({ output: '{"reservation_id": "ABC", "flight": "UA180", "status": "confirmed"}' })).toBe(true);
    expect(returnsState({ output: '{"ok": true}' })).toBe(false);
    expect(returnsState({ output: "Certificate certificate_3221322 added to user noah_muller_9847 with amount 50." })).toBe(false);
  });

  it("gives failures that differ only in positions the same signature, and different subjects different ones", () => {
    const cut = (col: number) => failureSignature({ output: `failed to parse function arguments: EOF while parsing a string at line 2 column ${col}` });
    expect(cut(1502)).toBe(cut(1254));
    expect(failureSignature({ output: "Error: flight HAT030 not available on date 2024-05-13" })).not.toBe(failureSignature({ output: "Error: flight HAT223 not available on date 2024-05-14" }));
    expect(failureSignature({ output: "Success. Updated the following files" })).toBe("");
  });
});

describe("argument equivalence", () => {
  it("folds whitespace in one-line values but keeps the indentation of code", () => {
    expect(callKey("shell", { command: "kubectl  get pods " })).toBe(callKey("shell", '{"command": "kubectl get pods"}'));
    expect(normalizeArgs({ body: "def f():\n  return 1" })).not.toEqual(normalizeArgs({ body: "def f():\n    return 1" }));
    expect(callKey("query", { q: "up", request_id: "a1" })).toBe(callKey("query", { q: "up", request_id: "b2" }));
  });
});

describe("changes, completions and cleanup", () => {
  it("names the file a change writes", () => {
    expect(changedFile({ name: "Edit", args: { file_path: "/repo/notes/PLAN.md" } })).toBe("PLAN.md");
    expect(changedFile({ name: "apply_patch", args: { input: "*** Begin Patch\n*** Add File: agent_output.json\n+{}" } })).toBe("agent_output.json");
    expect(changedFile({ name: "bash", args: { command: "sed -i 's/a/b/' src/core.py" } })).toBe("core.py");
    expect(isProseFile("PLAN.md")).toBe(true);
    expect(isProseFile("core.py")).toBe(false);
  });

  it("knows final answers, including mini-SWE-agent's shell submission, and scratch-file cleanup", () => {
    expect(isCompletionCall({ name: "submit" })).toBe(true);
    expect(isCompletionCall({ name: "bash", args: { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached" } })).toBe(true);
    expect(isCompletionCall({ name: "bash", args: { command: "git diff" } })).toBe(false);
    expect(isCleanupCall({ name: "bash", args: { command: "rm reproduce_issue.py test_fix.py" } })).toBe(true);
    expect(isCleanupCall({ name: "bash", args: { command: "git rm -r old/" } })).toBe(false);
  });
});
