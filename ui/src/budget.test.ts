import { describe, expect, it } from "vitest";
import type { Event } from "./bindings/Event";
import { suggestedCap } from "./components/RaiseBudget";
import { applyEvents, emptyChat } from "./transcript";

describe("the spending cap", () => {
  it("suggests twice the cap, in its unit", () => {
    expect(suggestedCap({ unit: "usd", limit: 0.025, spentUsd: 0.03, spentTokens: 900 })).toBe(0.05);
    expect(suggestedCap({ unit: "tokens", limit: 5000, spentUsd: null, spentTokens: 5100 })).toBe(10000);
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
