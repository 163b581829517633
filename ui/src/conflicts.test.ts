import { describe, expect, it } from "vitest";
import { conflictText } from "./conflicts";
import { translator } from "./i18n";

const t = translator("en");
const c = (kind: "outside" | "uncertain" | "other_session" | "other") => ({ path: "a.txt", reason: "changed outside the agent's commands (use --force to overwrite)", kind });

describe("conflictText", () => {
  it("words kept paths in the app's terms, never with CLI flags", () => {
    for (const kind of ["outside", "uncertain", "other_session"] as const) {
      const text = conflictText(c(kind), t);
      expect(text).not.toContain("--force");
      expect(text.length).toBeGreaterThan(10);
    }
    expect(conflictText(c("outside"), t)).toContain("Overwrite my own edits");
    expect(conflictText(c("other_session"), t)).toContain("another session");
  });
  it("keeps the store's reason for anything else", () => {
    expect(conflictText({ path: "big.bin", reason: "was not covered by that checkpoint", kind: "other" }, t)).toBe(
      "was not covered by that checkpoint",
    );
  });
});
