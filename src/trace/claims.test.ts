import { describe, expect, it } from "vitest";
import { detectCompletionClaim, endsWithQuestion } from "./claims.js";

describe("detectCompletionClaim", () => {
  it.each([
    "Root cause identified: the flagd-config ConfigMap enables cartFailure.",
    "I have identified the root cause and written agent_output.json.",
    "The root cause is an expired API-server certificate.",
    "Done.",
    "All done — the diagnosis is in agent_output.json.",
    "The fix has been verified: the alert cleared.",
    "The incident is resolved.",
    "I've fixed the failing test and all tests pass.",
    "Investigation complete. Summary below.",
    "agent_output.json has been written with 2 entities.",
    "Verified: no alert is firing any more.",
  ])("claims success: %s", (text) => {
    expect(detectCompletionClaim(text).claimsSuccess).toBe(true);
  });

  it.each([
    "First we'll list the pods in otel-demo.",
    "I could not find the root cause.",
    "The alert is not resolved yet; I will check the cart logs.",
    "Tests have not passed; the build is still red.",
    "What needs to be done next is to check the logs.",
    "Let me verify the deployment status.",
    "The root cause has not been identified.",
    "I have not verified the fix.",
    "",
  ])("makes no claim: %s", (text) => {
    expect(detectCompletionClaim(text).claimsSuccess).toBe(false);
  });

  it("judges sentences separately, so a negation elsewhere does not cancel a claim", () => {
    const d = detectCompletionClaim("I did not find other problems. Root cause identified: flagd-config.");
    expect(d).toEqual({ claimsSuccess: true, sentence: "Root cause identified: flagd-config." });
  });
});

describe("endsWithQuestion", () => {
  it("recognises a turn that ends by asking", () => {
    expect(endsWithQuestion("I found two deployments named cart.\nWhich namespace do you mean?")).toBe(true);
    expect(endsWithQuestion("Should I restart it? **")).toBe(true);
    expect(endsWithQuestion("Is it the cart service? I will assume so and proceed.")).toBe(false);
    expect(endsWithQuestion("Done.")).toBe(false);
  });
});
