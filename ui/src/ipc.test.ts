import { beforeEach, describe, expect, it, vi } from "vitest";

// Each invoke resolves (or fails) when the test says so, as the real IPC may serve requests
// in any order.
type Call = { cmd: string; args: Record<string, unknown>; resolve: () => void; reject: (e: unknown) => void };
const calls: Call[] = [];
vi.mock("@tauri-apps/api/core", () => ({
  invoke: (cmd: string, args: Record<string, unknown>) =>
    new Promise<void>((resolve, reject) => calls.push({ cmd, args, resolve, reject })),
  Channel: class {},
}));

const { describeError, errorAction, errorCode, terminalTypist } = await import("./ipc");

/** Lets pending promise callbacks run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("terminalTypist", () => {
  beforeEach(() => {
    calls.length = 0;
  });

  it("keeps one write in flight and sends what was typed meanwhile in order, in one write", async () => {
    const errors: unknown[] = [];
    const type = terminalTypist("term-1", (e) => errors.push(e));
    for (const ch of "echo hi\r") type(ch);
    expect(calls.map((c) => c.args)).toEqual([{ id: "term-1", data: "e" }]);
    calls[0]?.resolve();
    await settle();
    expect(calls.map((c) => c.args.data)).toEqual(["e", "cho hi\r"]);
    type("x");
    expect(calls).toHaveLength(2);
    calls[1]?.resolve();
    await settle();
    expect(calls.map((c) => c.args.data)).toEqual(["e", "cho hi\r", "x"]);
    calls[2]?.resolve();
    await settle();
    expect(calls).toHaveLength(3);
    // Idle again: the next key goes out at once.
    type("y");
    expect(calls.map((c) => c.args.data)).toEqual(["e", "cho hi\r", "x", "y"]);
    expect(calls.every((c) => c.cmd === "terminal_write")).toBe(true);
    expect(errors).toEqual([]);
  });

  it("reports a failed write, drops what queued behind it and keeps working", async () => {
    const errors: unknown[] = [];
    const type = terminalTypist("cmd-1", (e) => errors.push(e));
    type("a");
    type("b");
    calls[0]?.reject("no command session `cmd-1`");
    await settle();
    expect(errors).toEqual(["no command session `cmd-1`"]);
    expect(calls).toHaveLength(1);
    type("c");
    expect(calls.map((c) => c.args.data)).toEqual(["a", "c"]);
  });
});

describe("command errors", () => {
  it("are read by code and message, other failures by their text", () => {
    const busy = { code: "busy", message: "A turn is running: stop it first (Esc)." };
    expect(errorCode(busy)).toBe("busy");
    expect(describeError(busy)).toBe("A turn is running: stop it first (Esc).");
    expect(errorCode("plain")).toBeNull();
    expect(errorAction(busy)).toBeNull();
    expect(errorAction({ code: "blocked", message: "No API key", action: "open_settings" })).toBe("open_settings");
    expect(errorAction("plain")).toBeNull();
    expect(describeError("plain")).toBe("plain");
    expect(describeError(new Error("boom"))).toBe("boom");
    expect(errorCode({ code: 3, message: "x" })).toBeNull();
  });
});
