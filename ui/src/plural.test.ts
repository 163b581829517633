import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeOutcome } from "./commandOutcome";
import { plural, translator } from "./i18n";
import { en } from "./locales/en";
import { shortcutsFor } from "./components/Help";

const t = translator("en");

describe("plural", () => {
  it("words one and many (and zero) in English, with digit grouping", () => {
    expect(plural(t, 1, "count.turn")).toBe("1 turn");
    expect(plural(t, 0, "count.turn")).toBe("0 turns");
    expect(plural(t, 2, "count.commit")).toBe("2 commits");
    expect(plural(t, 1, "count.commit")).toBe("1 commit");
    expect(plural(t, 1, "count.line")).toBe("1 line");
    expect(plural(t, 12345, "count.file")).toBe("12,345 files");
    expect(plural(t, 1, "resume.waiting")).toBe("1 tool call was waiting when Cairn stopped");
  });

  it("uses the language's one form in Chinese", () => {
    expect(plural(translator("zh"), 3, "count.turn")).toBe("3 轮");
  });

  it("is the one way counts are worded: no 'x(s)' strings, no `=== 1 ?` in components", () => {
    expect(Object.entries(en).filter(([, v]) => v.includes("(s)"))).toEqual([]);
    for (const key of Object.keys(en)) {
      if (key.endsWith(".one")) expect(Object.keys(en), key).toContain(key.replace(/\.one$/, ".other"));
    }
    const dir = join(__dirname, "components");
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith(".tsx"))
      .filter((f) => /\b\w+(\.length)? === 1 \? "/.test(readFileSync(join(dir, f), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("words /undo's outcome", () => {
    const r = { restored: ["a"], overwritten: [], deleted: [], missing: [], conflicts: [], dryRun: false, toTurn: 1, turn: 2 };
    expect(describeOutcome({ input: "/undo", effect: { kind: "undone", restore: r } }, t).text).toBe("Undid the last change: 1 file put back.");
  });
});

describe("the shortcut sheet", () => {
  it("lists only shortcuts that work where the user is", () => {
    const inWorkspace = shortcutsFor(true).map(([k]) => k);
    const welcome = shortcutsFor(false).map(([k]) => k);
    expect(inWorkspace).not.toContain("Ctrl+O");
    expect(inWorkspace).toEqual(expect.arrayContaining(["Ctrl+N", "Ctrl+L", "Ctrl+K", "Ctrl+`", "Ctrl+/"]));
    expect(welcome).toContain("Ctrl+O");
    expect(welcome).not.toContain("Ctrl+N");
    expect(welcome).not.toContain("Ctrl+`");
  });
});
