import { describe, expect, it } from "vitest";
import { formatCount, formatDate, relativeTimeFormat } from "./format";

describe("locale formatting", () => {
  it("formats counts, dates and relative times in the locale asked for", () => {
    expect(formatCount(12345, "en")).toBe("12,345");
    expect(formatCount(12345, "de")).toBe("12.345");
    const d = new Date(Date.UTC(2026, 11, 2, 15, 4));
    expect(formatDate(d, "en")).toBe(new Intl.DateTimeFormat("en").format(d));
    expect(formatDate(d, "en", true)).toBe(
      new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" }).format(d),
    );
    expect(relativeTimeFormat("en").format(-1, "day")).toBe("yesterday");
  });

  it("builds one formatter per locale and style", () => {
    expect(relativeTimeFormat("en")).toBe(relativeTimeFormat("en"));
    expect(relativeTimeFormat("en")).not.toBe(relativeTimeFormat("zh"));
  });
});
