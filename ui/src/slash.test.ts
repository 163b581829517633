import { describe, expect, it } from "vitest";
import type { CommandView } from "./bindings/app/CommandView";
import { pickCommand, rankCommands, slashAt } from "./slash";

const cmd = (name: string, source: CommandView["source"] = "built-in", description = ""): CommandView => ({
  name,
  description,
  source,
  file: "",
  skill: false,
  allowedTools: [],
});

describe("slashAt", () => {
  it("finds the command name at the start while the caret is in it", () => {
    expect(slashAt("/", 1)).toBe("");
    expect(slashAt("/un", 3)).toBe("un");
    expect(slashAt("/undo now", 3)).toBe("undo");
  });
  it("is not a command past the name, escaped, or not at the start", () => {
    expect(slashAt("/undo now", 7)).toBeNull();
    expect(slashAt("//undo", 3)).toBeNull();
    expect(slashAt("a /undo", 5)).toBeNull();
    expect(slashAt("/undo", 0)).toBeNull();
  });
});

describe("rankCommands", () => {
  const all = [cmd("compact"), cmd("undo"), cmd("review"), cmd("fix-issue", "project", "fix a GitHub issue"), cmd("deploy", "user", "review and ship")];
  it("puts name prefixes first, in the list's order", () => {
    expect(rankCommands(all, "").map((c) => c.name)).toEqual(["compact", "undo", "review", "fix-issue", "deploy"]);
    expect(rankCommands(all, "re").map((c) => c.name)).toEqual(["review", "deploy"]);
    expect(rankCommands(all, "ISSUE").map((c) => c.name)).toEqual(["fix-issue"]);
  });
  it("matches nothing for an unknown name", () => {
    expect(rankCommands(all, "usr")).toEqual([]);
  });
});

describe("pickCommand", () => {
  it("replaces the name and keeps what follows", () => {
    expect(pickCommand("/un", "undo")).toEqual({ text: "/undo ", caret: 6 });
    expect(pickCommand("/fi 42", "fix-issue")).toEqual({ text: "/fix-issue 42", caret: 11 });
  });
});
