import { describe, expect, it } from "vitest";
import { orderedInput, TypeAhead } from "./terminalInput";

describe("orderedInput", () => {
  it("sends typed data at once when no paste is pending", () => {
    const sent: string[] = [];
    const input = orderedInput((d) => sent.push(d));
    input.type("ls");
    input.type("\r");
    expect(sent).toEqual(["ls", "\r"]);
  });

  it("keeps keystrokes typed during a paste behind the pasted text", async () => {
    const sent: string[] = [];
    const input = orderedInput((d) => sent.push(d));
    let give: (t: string) => void = () => undefined;
    const clipboard = new Promise<string>((resolve) => (give = resolve));
    input.type("a");
    // As xterm's paste does: the pasted text comes back through the data event.
    input.paste(clipboard, (t) => input.type(t), () => undefined);
    input.type("\r");
    expect(sent).toEqual(["a"]);
    give("echo pasted");
    await clipboard;
    await Promise.resolve();
    await Promise.resolve();
    expect(sent).toEqual(["a", "echo pasted", "\r"]);
  });

  it("a failed clipboard read reports and releases what waited behind it", async () => {
    const sent: string[] = [];
    const failures: unknown[] = [];
    const input = orderedInput((d) => sent.push(d));
    const clipboard = Promise.reject(new Error("no clipboard"));
    input.paste(clipboard, (t) => input.type(t), (e) => failures.push(e));
    input.type("x");
    await clipboard.catch(() => undefined);
    await Promise.resolve();
    await Promise.resolve();
    expect(failures).toHaveLength(1);
    expect(sent).toEqual(["x"]);
  });
});

describe("TypeAhead", () => {
  const press = (key: string, ctrlKey = false) => ({ key, ctrlKey, altKey: false, metaKey: false });

  it("keeps what is typed before the terminal is ready, in order, with Enter and Backspace", () => {
    const ahead = new TypeAhead();
    for (const k of ["l", "s", "x", "Backspace", " ", "-", "l", "Enter"]) expect(ahead.key(press(k))).toBe(true);
    expect(ahead.take()).toBe("ls -l\r");
    expect(ahead.take()).toBe("");
  });

  it("leaves shortcuts and navigation keys alone", () => {
    const ahead = new TypeAhead();
    expect(ahead.key(press("`", true))).toBe(false);
    expect(ahead.key(press("ArrowUp"))).toBe(false);
    expect(ahead.key(press("Shift"))).toBe(false);
    expect(ahead.take()).toBe("");
  });
});
