import { describe, expect, it } from "vitest";
import type { Event } from "./bindings/Event";
import { suggestedCap } from "./components/RaiseBudget";
import { applyEvents, emptyChat } from "./transcript";

describe("the spending cap", () => {
  it("suggests twice the cap, in its unit", () => {
    expect(suggestedCap({ unit: "usd", limit: 0.025, spentUsd: 0.03, spentTokens: 900, sessions: 1 })).toBe(0.05);
    expect(suggestedCap({ unit: "tokens", limit: 5000, spentUsd: null, spentTokens: 5100, sessions: 1 })).toBe(10000);
  });
  it("a budget_exceeded error offers to raise the cap; other errors do not", () => {
    const error = (type: string): Event => ({
      type: "error",
      data: { error: "stopped", error_type: type, retriable: false, iteration: 1, reqId: "", logTime: "", taskId: "t" },
    });
    const s = applyEvents(emptyChat, [error("budget_exceeded"), error("bad_request"), error("network")]);
    const notices = s.items.filter((i) => i.kind === "notice");
    expect(notices.map((n) => n.kind === "notice" && n.action)).toEqual(["budget", undefined, "settings"]);
  });
});

describe("errors meant for a terminal", () => {
  it("are shown in the app's words (no path, OS error number or CLI command)", () => {
    const error = (type: string, text: string): Event => ({
      type: "error",
      data: { error: text, error_type: type, retriable: false, iteration: 1, reqId: "", logTime: "", taskId: "t" },
    });
    const s = applyEvents(emptyChat, [
      error("save_failed", "could not write /tmp/x/state.json.tmp: No space left on device (os error 28); run `cairn run --session 1`"),
      error("budget_exceeded", "… continue with `cairn run --session ID --resume` …"),
      error("compaction_stalled", "compaction could not bring the conversation under its budget"),
    ]);
    const words = s.items.map((i) => (i.kind === "notice" ? (i.words ?? null) : null));
    expect(words).toEqual(["error.saveFailed", "error.budgetExceeded", null]);
  });
});
