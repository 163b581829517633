import { describe, expect, it } from "vitest";
import { CONTENT_LINES, contentDiff, replacementDiff } from "./editDiff";

describe("edit diffs", () => {
  it("a final newline adds no empty line", () => {
    expect(contentDiff("a.txt", "written\n")).toBe("+++ b/a.txt\n+written");
    expect(replacementDiff("a.txt", "one\n", "two\n")).toBe("--- a/a.txt\n+++ b/a.txt\n@@\n-one\n+two");
  });

  it("empty lines inside the content stay", () => {
    expect(contentDiff("a.txt", "a\n\nb")).toBe("+++ b/a.txt\n+a\n+\n+b");
    expect(contentDiff("a.txt", "")).toBe("+++ b/a.txt");
  });

  it("long content says how much is not shown", () => {
    const text = Array.from({ length: CONTENT_LINES + 3 }, (_, i) => `l${i}`).join("\n");
    const diff = contentDiff("a.txt", text).split("\n");
    expect(diff).toHaveLength(CONTENT_LINES + 2);
    expect(diff[diff.length - 1]).toBe(" … 3 more lines");
  });
});
