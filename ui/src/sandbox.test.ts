import { describe, expect, it } from "vitest";
import { sandboxLabel, sandboxTip, sandboxWarns } from "./sandbox";
import { translator } from "./i18n";

describe("sandbox pill", () => {
  it("names each state and warns when commands are not confined", () => {
    const t = translator("en");
    const on = { state: "on", detail: "sandbox: enforced", layers: [] };
    const off = { state: "off", detail: "sandbox: off", layers: [] };
    const none = { state: "unavailable", detail: "sandbox: not available here", layers: [] };
    expect(t(sandboxLabel(on))).toBe("Sandboxed");
    expect(t(sandboxLabel(off))).toBe("Sandbox off");
    expect(t(sandboxLabel(none))).toBe("No sandbox");
    expect([on, off, none].map(sandboxWarns)).toEqual([false, true, true]);
  });
});

describe("sandbox tip", () => {
  it("lists each layer, active or not, with what it does or why not", () => {
    const view = {
      state: "on",
      detail: "sandbox: enforced",
      layers: [
        { name: "allow-list home", active: true, detail: "only toolchains are bound back" },
        { name: "seccomp", active: false, detail: "no filter for this architecture" },
      ],
    };
    expect(sandboxTip(view).split("\n")).toEqual([
      "sandbox: enforced",
      "✓ allow-list home: only toolchains are bound back",
      "✗ seccomp: no filter for this architecture",
    ]);
  });
});
