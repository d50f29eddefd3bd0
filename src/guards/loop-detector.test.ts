import { describe, expect, it } from "vitest";
import { LoopDetector, type LoopDetectorOptions } from "./loop-detector.js";
import { GuardSet, type GuardVerdict } from "./pipeline.js";
import { ManualClock, type GuardEvent } from "./types.js";

let ids = 0;
/** A tool call followed by its result, as a live loop would report them. */
function callAndResult(name: string, args: unknown, output: string, extra: { exitCode?: number } = {}): GuardEvent[] {
  const id = `c${ids++}`;
  return [
    { type: "tool_call", call: { id, name, args } },
    { type: "tool_result", result: { callId: id, name, args, output, ...extra } },
  ];
}

function run(events: GuardEvent[], opts: LoopDetectorOptions = {}): GuardVerdict[] {
  return new GuardSet([new LoopDetector(opts)], { clock: new ManualClock() }).run(events);
}

const interventions = (vs: GuardVerdict[]) => vs.filter((v) => v.action !== "continue");

describe("LoopDetector: repeated equivalent calls (FM-1.3)", () => {
  it("warns on the 3rd and blocks the 5th identical call whose result never changes", () => {
    const events = Array.from({ length: 5 }, () => callAndResult("apply_patch", { path: "agent_output.json", patch: "+{}" }, "Success")).flat();
    const vs = run(events);
    const hits = interventions(vs);
    expect(hits.map((v) => [v.event.type, v.action, v.primary?.mode])).toEqual([
      ["tool_call", "warn", "1.3"],
      ["tool_call", "warn", "1.3"],
      ["tool_call", "block", "1.3"],
    ]);
    expect(hits[0]!.seq).toBe(4); // the third call
    expect(hits[2]!.primary?.message).toMatch(/not executed/);
  });

  it("treats calls differing only in key order, whitespace or ignored keys as the same call", () => {
    const events = [
      ...callAndResult("query", { q: "rate(errors[5m])", timestamp: 1 }, "0.2"),
      ...callAndResult("query", '{"timestamp": 2, "q": "rate(errors[5m]) "}', "0.2"),
      ...callAndResult("query", { timestamp: 3, q: "rate(errors[5m])" }, "0.2"),
    ];
    expect(interventions(run(events)).map((v) => v.action)).toEqual(["warn"]);
    expect(interventions(run(events, { equivalence: { ignoreKeys: [] } }))).toEqual([]);
  });

  it("does not confuse calls with different arguments", () => {
    const events = ["cart", "checkout", "frontend", "cart-redis"].flatMap((svc) => callAndResult("get_logs", { service: svc }, `logs of ${svc}`));
    expect(interventions(run(events))).toEqual([]);
  });

  it("honours per-tool thresholds for tools that are expected to repeat", () => {
    const events = Array.from({ length: 6 }, () => callAndResult("rollout_status", { deployment: "cart" }, "Waiting for rollout")).flat();
    expect(interventions(run(events, { perTool: { rollout_status: { warnAt: 6, blockAt: 0 } } })).map((v) => v.action)).toEqual(["warn"]);
  });
});

describe("LoopDetector: no false alarms", () => {
  it("accepts legitimate polling of a metric whose value changes", () => {
    const values = [0.91, 0.88, 0.74, 0.63, 0.52, 0.41, 0.33, 0.21, 0.12, 0.05, 0.04, 0.02];
    const events = values.flatMap((v) => callAndResult("get_metric", { name: "cart_error_rate", window: "1m" }, `{"value": ${v}}`));
    const vs = run(events);
    expect(vs).toHaveLength(24);
    expect(interventions(vs)).toEqual([]);
  });

  it("accepts a long but productive run of many distinct calls", () => {
    const events: GuardEvent[] = [];
    for (let i = 0; i < 150; i++) {
      if (i % 10 === 0) events.push({ type: "message", role: "assistant", text: `Checkpoint ${i}: examined ${i} services, next the batch starting at ${i + 1}.` });
      events.push(...callAndResult("kubectl_get", { kind: "pod", name: `svc-${i}` }, `pod svc-${i} Running restarts=${i % 3}`));
    }
    expect(interventions(run(events))).toEqual([]);
  });

  it("forgets calls that fell out of the window: a re-check far apart is not a loop", () => {
    const events: GuardEvent[] = [];
    for (let round = 0; round < 4; round++) {
      events.push(...callAndResult("get_alerts", {}, "CartFailure firing"));
      for (let i = 0; i < 45; i++) events.push(...callAndResult("read_file", { path: `f${round}-${i}` }, `content ${round}-${i}`));
    }
    expect(interventions(run(events))).toEqual([]);
  });

  it("does not count clock noise as change when told which output parts are volatile", () => {
    const events = ["10:00:01", "10:00:06", "10:00:11"].flatMap((t) => callAndResult("pod_status", { pod: "cart" }, `${t} cart Pending`));
    expect(interventions(run(events))).toEqual([]); // the clock makes each result differ: progress by the polling rule
    expect(interventions(run(events, { volatileOutput: ["\\d{2}:\\d{2}:\\d{2}"] })).map((v) => v.action)).toEqual(["warn"]);
  });
});

describe("LoopDetector: messages", () => {
  it("warns when the assistant says the same thing for the third time", () => {
    const say = (text: string): GuardEvent => ({ type: "message", role: "assistant", text });
    const vs = run([say("First we'll list the pods in otel-demo."), say("First we'll list the pods in otel-demo."), say("First, we'll list the pods in otel-demo!")]);
    expect(interventions(vs).map((v) => [v.seq, v.action, v.primary?.mode])).toEqual([[2, "warn", "1.3"]]);
  });

  it("flags a harness nudge that has to be repeated (FM-1.5), not short user replies", () => {
    const nudge = "I don't see agent_output.json file. Please resume the investigation and write it.";
    const user = (text: string): GuardEvent => ({ type: "message", role: "user", text });
    const vs = run([user(nudge), user("yes"), user("yes"), user(nudge)]);
    expect(interventions(vs).map((v) => [v.seq, v.primary?.mode])).toEqual([[3, "1.5"]]);
  });
});

describe("LoopDetector: no-progress windows (FM-1.5)", () => {
  it("warns after a window of actions without progress and stops after the configured number of windows", () => {
    // A ping-pong between two reads that keep returning the same thing; repeat counting off to isolate the window.
    const events = Array.from({ length: 14 }, (_, i) => callAndResult(i % 2 ? "get_pods" : "get_events", {}, i % 2 ? "cart CrashLoopBackOff" : "no events")).flat();
    const vs = run(events, { repeatWarnAt: 0, repeatBlockAt: 0, noProgressWindow: 4, noProgressStopAfter: 3 });
    const hits = interventions(vs);
    expect(hits.map((v) => [v.event.type, v.action, v.primary?.mode])).toEqual([
      ["tool_result", "warn", "1.5"],
      ["tool_result", "warn", "1.5"],
      ["tool_result", "stop", "1.5"],
    ]);
    // the first two results were new, so 4 unchanged results after them end at the 6th result (event 11)
    expect(hits[0]!.seq).toBe(11);
  });

  it("resets the window whenever something new happens", () => {
    const events: GuardEvent[] = [];
    for (let i = 0; i < 30; i++) {
      events.push(...callAndResult("get_pods", {}, "cart CrashLoopBackOff"));
      events.push(...callAndResult("read_file", { path: `file-${i}` }, `content ${i}`));
    }
    const hits = interventions(run(events, { repeatWarnAt: 0, repeatBlockAt: 0, noProgressWindow: 3 }));
    expect(hits).toEqual([]);
  });

  it("keeps stopping an agent that keeps retrying a blocked call", () => {
    const events = Array.from({ length: 12 }, () => ({ type: "tool_call", call: { name: "restart", args: { svc: "cart" } } }) as GuardEvent);
    const vs = run(events, { repeatWarnAt: 2, repeatBlockAt: 3, noProgressWindow: 4, noProgressStopAfter: 2 });
    // the first no-progress window falls on a blocked call (block outranks its warning); the second stops the run
    expect(vs.map((v) => v.action)).toEqual(["continue", "warn", "block", "block", "block", "block", "block", "block", "block", "stop", "block", "block"]);
  });
});

describe("LoopDetector: the same failure in a row (FM-1.3)", () => {
  const cut = (col: number) => `failed to parse function arguments: EOF while parsing a string at line 2 column ${col}`;

  it("warns on the 3rd failure in a row with the same error although the arguments differ each time", () => {
    // the ITBench gpt-oss pattern: the same patch, cut off at a different length on every try
    const events = [1502, 1254, 1320, 1167].flatMap((col, i) => callAndResult("apply_patch", `{"input": "*** Add File: agent_output.json\\n+{${"x".repeat(i)}`, cut(col)));
    const hits = interventions(run(events));
    expect(hits.map((v) => [v.event.type, v.action, v.primary?.mode])).toEqual([
      ["tool_result", "warn", "1.3"],
      ["tool_result", "warn", "1.3"],
    ]);
    expect(hits[0]!.primary?.reason).toMatch(/^apply_patch failed 3 times in a row with the same error/);
    expect(hits[0]!.primary?.message).toMatch(/change the approach/);
  });

  it("lets another tool in between, a different error or a success end the streak", () => {
    const fail = (output: string) => callAndResult("update_reservation_flights", { id: "X", flights: [Math.random()] }, output);
    const seats = "Error: not enough seats on flight HAT290";
    expect(interventions(run([...fail(seats), ...callAndResult("search_direct_flight", { date: "2024-05-13" }, "[]"), ...fail(seats), ...fail(seats)]))).toEqual([]);
    expect(interventions(run([...fail(seats), ...fail("Error: flight HAT030 not available on date 2024-05-13"), ...fail(seats)]))).toEqual([]);
    expect(interventions(run([...fail(seats), ...fail(seats), ...callAndResult("update_reservation_flights", { id: "X" }, '{"reservation_id": "X", "status": "ok", "cabin": "economy"}'), ...fail(seats)]))).toEqual([]);
    expect(interventions(run([...fail(seats), ...fail(seats), ...fail(seats)], { failureRepeatWarnAt: 0 }))).toEqual([]);
  });

  it("does not warn twice for identical failing calls the repeat rule already counts", () => {
    const same = () => callAndResult("book_reservation", { user: "u1", amount: 374 }, "Error: payment amount does not add up, total price is 375, but paid 374");
    const hits = interventions(run([...same(), ...same(), ...same()]));
    expect(hits.map((v) => [v.event.type, v.primary?.reason.slice(0, 22)])).toEqual([["tool_call", "repeated call #3 of bo"]]);
  });
});
