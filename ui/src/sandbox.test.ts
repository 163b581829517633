import { describe, expect, it } from "vitest";
import { sandboxLabel, sandboxWarns } from "./sandbox";
import { translator } from "./i18n";

describe("sandbox pill", () => {
  it("names each state and warns when commands are not confined", () => {
    const t = translator("en");
    const on = { state: "on", detail: "sandbox: enforced" };
    const off = { state: "off", detail: "sandbox: off" };
    const none = { state: "unavailable", detail: "sandbox: not available here" };
    expect(t(sandboxLabel(on))).toBe("Sandboxed");
    expect(t(sandboxLabel(off))).toBe("Sandbox off");
    expect(t(sandboxLabel(none))).toBe("No sandbox");
    expect([on, off, none].map(sandboxWarns)).toEqual([false, true, true]);
  });
});
