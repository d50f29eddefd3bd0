import { describe, expect, it } from "vitest";
import { ACTION_PRECEDENCE, GuardSet } from "./pipeline.js";
import { intervene, ManualClock, proceed, type Guard, type GuardAction, type GuardContext, type GuardEvent } from "./types.js";

/** A guard that answers every event with a fixed action and remembers what it was told. */
function fixed(name: string, action: GuardAction, message = `${name} says ${action}`) {
  const seen: { outcome?: GuardAction; ctx?: GuardContext } = {};
  const guard: Guard = {
    name,
    modes: ["1.3"],
    observe: (_e, ctx) => {
      seen.ctx = ctx;
      return action === "continue" ? proceed(name, "fine") : intervene(action, name, "1.3", `${name} reason`, message);
    },
    settle: (_e, outcome) => {
      seen.outcome = outcome;
    },
    reset: () => {},
  };
  return { guard, seen };
}

const ev: GuardEvent = { type: "tool_call", call: { name: "x" } };

describe("GuardSet", () => {
  it("orders actions stop > block > require > warn > continue", () => {
    const order = (Object.keys(ACTION_PRECEDENCE) as GuardAction[]).sort((a, b) => ACTION_PRECEDENCE[b] - ACTION_PRECEDENCE[a]);
    expect(order).toEqual(["stop", "block", "require", "warn", "continue"]);
  });

  it.each<[GuardAction[], GuardAction]>([
    [["continue", "warn"], "warn"],
    [["warn", "require"], "require"],
    [["require", "block", "warn"], "block"],
    [["block", "stop", "continue"], "stop"],
    [["continue", "continue"], "continue"],
  ])("combines %j into %s", (actions, expected) => {
    const set = new GuardSet(actions.map((a, i) => fixed(`g${i}`, a).guard));
    expect(set.observe(ev).action).toBe(expected);
  });

  it("keeps every intervention, the strongest first, and tells each guard the combined outcome", () => {
    const a = fixed("a", "warn");
    const b = fixed("b", "block");
    const c = fixed("c", "warn");
    const v = new GuardSet([a.guard, b.guard, c.guard]).observe(ev);
    expect(v.primary?.guard).toBe("b");
    expect(v.interventions.map((d) => d.guard)).toEqual(["b", "a", "c"]);
    expect(v.messages).toEqual(["b says block", "a says warn", "c says warn"]);
    expect([a.seen.outcome, b.seen.outcome, c.seen.outcome]).toEqual(["block", "block", "block"]);
  });

  it("appends informational messages after interventions", () => {
    const info: Guard = { name: "info", modes: [], observe: () => proceed("info", "summary", { message: "state: fine" }), reset: () => {} };
    const v = new GuardSet([info, fixed("w", "warn").guard]).observe(ev);
    expect(v.action).toBe("warn");
    expect(v.messages).toEqual(["w says warn", "state: fine"]);
  });

  it("reports a guard that throws instead of hiding it, and goes on", () => {
    const broken: Guard = {
      name: "broken",
      modes: [],
      observe: () => {
        throw new Error("predicate exploded");
      },
      reset: () => {},
    };
    const v = new GuardSet([broken, fixed("ok", "warn").guard]).observe(ev);
    expect(v.errors).toEqual([{ guard: "broken", error: "predicate exploded" }]);
    expect(v.action).toBe("warn");
  });

  it("uses the event time when recorded and the clock otherwise, and numbers events", () => {
    const g = fixed("g", "continue");
    const clock = new ManualClock(1000);
    const set = new GuardSet([g.guard], { clock });
    set.observe(ev);
    expect(g.seen.ctx).toEqual({ now: 1000, seq: 0 });
    set.observe({ ...ev, at: 5 });
    expect(g.seen.ctx).toEqual({ now: 5, seq: 1 });
  });

  it("remembers the first stop", () => {
    const set = new GuardSet([fixed("s", "stop").guard]);
    set.observe(ev);
    set.observe(ev);
    expect([set.stopped, set.stoppedAtSeq]).toEqual([true, 0]);
    set.reset();
    expect(set.stopped).toBe(false);
  });

  it("refuses two guards with the same name", () => {
    expect(() => new GuardSet([fixed("a", "warn").guard, fixed("a", "stop").guard])).toThrow(/two guards are named "a"/);
  });
});
