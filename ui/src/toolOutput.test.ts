import { describe, expect, it } from "vitest";
import { ENGINE_PREVIEW_CHARS, previewIsWhole } from "./toolOutput";

describe("previewIsWhole", () => {
  it("a short preview of a tool that streamed nothing is the whole result", () => {
    expect(previewIsWhole("", "Todo list updated: 3 items.")).toBe(true);
    expect(previewIsWhole("", "")).toBe(true);
    expect(previewIsWhole("", "é".repeat(ENGINE_PREVIEW_CHARS))).toBe(true);
  });

  it("a cut preview is not", () => {
    expect(previewIsWhole("", `${"x".repeat(ENGINE_PREVIEW_CHARS)}…`)).toBe(false);
    expect(previewIsWhole("", "x".repeat(ENGINE_PREVIEW_CHARS + 1))).toBe(false);
  });

  it("the engine's truncation flag decides when it is given", () => {
    expect(previewIsWhole("", "ends with an ellipsis…", false)).toBe(true);
    expect(previewIsWhole("", "short", true)).toBe(false);
  });

  it("streamed output or a missing preview may leave more to fetch", () => {
    expect(previewIsWhole("hello\n", "hello\n[exit code 0]")).toBe(false);
    expect(previewIsWhole("", null)).toBe(false);
  });
});
