import { describe, expect, it } from "vitest";
import { mastExample } from "../../testing/corpus.js";
import { segmentAppWorld } from "./appworld.js";


describe("AppWorld splitter", () => {
  it("splits the Spotify excerpt of MAST's few-shot examples into Supervisor and spotify turns", () => {
    const seg = segmentAppWorld(mastExample("Step Repetition"))!;
    expect(seg.segmentation).toBe("framework");
    // the task banner before the first marker is the user's
    expect(seg.steps[0]).toMatchObject({ agent: "user", role: "user" });
    expect(seg.steps[0]!.text).toContain("Keep going to the next song on Spotify until you reach a song by Lily Moon.");
    expect(seg.steps.slice(1).map((s) => s.agent)).toEqual(["spotify", "Supervisor", "spotify", "Supervisor", "spotify", "Supervisor"]);
    const supervisor = seg.steps.filter((s) => s.agent === "Supervisor");
    expect(supervisor.every((s) => s.text!.includes("send_message(app_name='spotify', message='Skip to the next song.')"))).toBe(true);
    expect(supervisor[0]!.text).toMatch(/^Response from Supervisor Agent\n# Now that I have the current song details/);
  });

  it("attributes a delivered message to the agent that sent it (the Premature Termination excerpt)", () => {
    const seg = segmentAppWorld(mastExample("Premature Termination"))!;
    expect(seg.steps.map((s) => [s.agent, s.kind])).toEqual([
      ["user", "message"], // the excerpt's leading "[...]"
      ["user", "handoff"],
      ["Supervisor", "message"],
    ]);
    expect(seg.steps[1]!.text).toMatch(/^Message to Supervisor Agent\nThe access token provided is invalid or expired/);
    expect(seg.steps[2]!.text).toContain('apis.supervisor.complete_task(status="fail")');
  });

  it("makes code execution output a tool result and skips text without AppWorld markers", () => {
    const text = [
      "Message to Supervisor Agent",
      "    Play my top song.",
      "Response from Supervisor Agent",
      "    print(apis.spotify.show_song_library())",
      "Code Execution Output",
      "    Execution failed: 401 Unauthorized",
    ].join("\n");
    const seg = segmentAppWorld(text)!;
    expect(seg.steps.map((s) => [s.agent, s.role, s.kind, s.ref?.line])).toEqual([
      ["user", "user", "handoff", 1],
      ["Supervisor", "assistant", "message", 3],
      ["environment", "tool", "tool_result", 5],
    ]);
    expect(seg.steps[2]!.tool).toEqual({ name: "code_execution", output: "Execution failed: 401 Unauthorized" });
    expect(segmentAppWorld("Response from nobody")).toBeUndefined();
  });
});
