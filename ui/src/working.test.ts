import { describe, expect, it } from "vitest";
import type { Item } from "./transcript";
import { elapsedText, phaseKey, workingPhase } from "./working";

const user: Item = { kind: "user", id: "u", text: "hi", steering: false };
const tool = (state: "proposed" | "awaiting" | "running" | "ok"): Item =>
  ({ kind: "tool", id: "t", name: "run_shell", toolKind: "command", args: {}, state, startedAt: null }) as unknown as Item;
const assistant = (text: string, streaming: boolean): Item => ({
  kind: "assistant",
  id: "a",
  text,
  reasoning: "",
  streaming,
  usage: null,
});

describe("workingPhase", () => {
  it("is null when no turn runs", () => {
    expect(workingPhase([user], false)).toBeNull();
  });
  it("waits for the model after sending and after a tool finished", () => {
    expect(workingPhase([], true)).toEqual({ kind: "model" });
    expect(workingPhase([user], true)).toEqual({ kind: "model" });
    expect(workingPhase([user, tool("ok")], true)).toEqual({ kind: "model" });
    expect(workingPhase([user, assistant("", true)], true)).toEqual({ kind: "model" });
  });
  it("says writing, running a tool or waiting for approval", () => {
    expect(workingPhase([user, assistant("Hel", true)], true)).toEqual({ kind: "writing" });
    expect(workingPhase([user, tool("running")], true)).toEqual({ kind: "tool", name: "run_shell" });
    expect(workingPhase([user, tool("awaiting")], true)).toEqual({ kind: "approval", name: "run_shell" });
  });
  it("keys phases so the timer restarts when the phase changes", () => {
    expect(phaseKey({ kind: "model" })).not.toBe(phaseKey({ kind: "writing" }));
    expect(phaseKey({ kind: "tool", name: "a" })).not.toBe(phaseKey({ kind: "tool", name: "b" }));
  });
});

describe("elapsedText", () => {
  it("shows seconds, then minutes and seconds", () => {
    expect(elapsedText(0)).toBe("0s");
    expect(elapsedText(7400)).toBe("7s");
    expect(elapsedText(65_000)).toBe("1m 05s");
    expect(elapsedText(-5)).toBe("0s");
  });
});
