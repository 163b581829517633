import { describe, expect, it } from "vitest";
import type { RestoreView } from "./bindings/app/RestoreView";
import { describeOutcome } from "./commandOutcome";
import { translator } from "./i18n";

const t = translator("en");
const restore = (over: Partial<RestoreView>): RestoreView => ({
  restored: [],
  overwritten: [],
  deleted: [],
  missing: [],
  conflicts: [],
  dryRun: false,
  toTurn: 1,
  turn: 3,
  ...over,
});

describe("describeOutcome", () => {
  it("names the new mode in the switcher's words", () => {
    const n = describeOutcome({ input: "/mode interactive", effect: { kind: "mode", mode: "interactive" } }, t);
    expect(n).toEqual({ text: "Mode is now Ask.", tone: "info" });
  });
  it("counts what /undo restored and names the files it kept", () => {
    const ok = describeOutcome({ input: "/undo", effect: { kind: "undone", restore: restore({ restored: ["a.txt"], deleted: ["b.txt"] }) } }, t);
    expect(ok.tone).toBe("info");
    expect(ok.text).toContain("2");
    const kept = describeOutcome(
      { input: "/undo", effect: { kind: "undone", restore: restore({ conflicts: [{ path: "c.txt", kind: "outside", reason: "changed since" }] }) } },
      t,
    );
    expect(kept.tone).toBe("error");
    expect(kept.text).toContain("c.txt");
  });
  it("reports a failed /undo as a problem", () => {
    expect(describeOutcome({ input: "/undo", effect: { kind: "undo_failed", reason: "store locked" } }, t)).toEqual({
      text: "Undo failed: store locked",
      tone: "error",
    });
  });
});
