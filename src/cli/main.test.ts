import { describe, expect, it } from "vitest";
import { buildProgram, commandsFor } from "./main.js";

describe("the CLI loads only the command it runs", () => {
  it("one command's module for that command, none for --version, all for help or a mistake", () => {
    expect(commandsFor(["node", "faultline", "analyze", "examples/"])).toEqual(["analyze"]);
    expect(commandsFor(["node", "faultline", "--version"])).toEqual([]);
    expect(commandsFor(["node", "faultline", "-V"])).toEqual([]);
    const all = commandsFor(["node", "faultline", "--help"]);
    expect(all).toContain("analyze");
    expect(all).toContain("collect");
    expect(commandsFor(["node", "faultline", "anlyze"])).toEqual(all);
    expect(commandsFor(["node", "faultline"])).toEqual(all);
    // an inherited property name is not a command
    expect(commandsFor(["node", "faultline", "constructor"])).toEqual(all);
  });

  it("builds a program with exactly the commands asked for", async () => {
    const one = await buildProgram(() => {}, ["stats"]);
    expect(one.commands.map((c) => c.name())).toEqual(["stats"]);
    const every = await buildProgram(() => {});
    expect(every.commands.map((c) => c.name())).toEqual(expect.arrayContaining(["analyze", "serve", "judge", "stats", "submit", "worker", "collect", "taxonomy"]));
  });
});
