// @vitest-environment jsdom
// The transcript's paging state (hooks/useLongTranscript.ts) against the runtime's recorded
// pages of a 12-turn log: the live chat holds turns 9-12, Home shows a window from the first
// turn, a search hit and a checkpoint's turn load the page that holds them, the window grows
// down and hands back to the live chat when it reaches it, End goes back to it.
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { HistoryPage } from "./bindings/app/HistoryPage";
import type { SessionSearch } from "./bindings/app/SessionSearch";
import recorded from "./fixtures/long-session.json";
import { applyEvents, emptyChat } from "./transcript";
import type { LongTranscript } from "./hooks/useLongTranscript";

const pages = recorded as unknown as Record<"newest" | "older" | "home" | "second" | "atTurn7", HistoryPage>;
const from = vi.fn((f: number, _limit?: number) => Promise.resolve(f === 0 ? pages.home : f === 4 ? pages.second : pages.newest));
const before = vi.fn((_b: number, _limit?: number) => Promise.resolve(pages.older));
const atTurn = vi.fn((_t: number, _limit?: number) => Promise.resolve<HistoryPage | null>(pages.atTurn7));
vi.mock("./ipc", async (original) => ({
  ...(await original<typeof import("./ipc")>()),
  sessionHistoryFrom: (f: number, l?: number) => from(f, l),
  sessionHistory: (b: number, l?: number) => before(b, l),
  sessionHistoryAtTurn: (t: number, l?: number) => atTurn(t, l),
}));

const { useLongTranscript } = await import("./hooks/useLongTranscript");

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

// The live chat as the app builds it from the session's view: the newest page (turns 9-12).
const live = applyEvents(emptyChat, pages.newest.events).items;
let got: LongTranscript | null = null;
function Probe() {
  got = useLongTranscript(live, pages.newest.first, undefined, (e) => {
    throw e;
  });
  return null;
}
const now = () => {
  if (got === null) throw new Error("not rendered");
  return got;
};
const prompts = () => now().items.flatMap((i) => (i.kind === "user" ? [i.text.split(":")[0]] : []));

let root: Root;
beforeEach(async () => {
  root = createRoot(document.createElement("div"));
  await act(async () => root.render(<Probe />));
});
afterEach(() => {
  act(() => root.unmount());
  vi.clearAllMocks();
});

it("goes Home to the first turn, down page by page, back to the live chat and to the end", async () => {
  expect(now().window).toBeNull();
  expect(prompts()).toEqual(["Step 9", "Step 10", "Step 11", "Step 12"]);
  await act(async () => now().home());
  expect(from).toHaveBeenCalledWith(0, 100);
  expect(prompts()[0]).toBe("Step 1");
  expect(now().target).toEqual({ kind: "top" });
  expect(now().hasOlder).toBe(false);
  act(() => now().reached());
  // Down: the next pages join on below ([0, 8), [0, 12)); once the window overlaps the live
  // chat (which starts at turn group 8) the live chat takes over, on the same rows.
  await act(async () => void (await now().newer()));
  expect(from).toHaveBeenLastCalledWith(4, 100);
  expect([now().window?.first, now().window?.end]).toEqual([0, 8]);
  await act(async () => void (await now().newer()));
  expect(from).toHaveBeenLastCalledWith(8, 100);
  expect([now().window?.first, now().window?.end]).toEqual([0, 12]);
  await act(async () => void (await now().newer()));
  expect(from).toHaveBeenCalledTimes(3);
  expect(now().window).toBeNull();
  await act(async () => now().home());
  await act(async () => now().end());
  expect([now().window, now().target]).toEqual([null, { kind: "bottom" }]);
});

it("loads the page of a search hit and of a checkpoint's turn, and pages older from a window", async () => {
  const hit = (recorded.quokka as unknown as SessionSearch).hits[0];
  if (hit === undefined) throw new Error("the recorded search has a hit");
  // Group 6 is not in the live chat: the page from group 6 - 50 (clamped to 0) is asked for
  // (the recorded log's page holding group 6 stands in for the runtime's answer).
  from.mockResolvedValueOnce(pages.second);
  await act(async () => now().showHit(hit));
  expect(from).toHaveBeenCalledWith(0, 100);
  expect(now().target).toEqual({ kind: "id", id: "long-7-r1", align: "center" });
  act(() => now().reached());
  await act(async () => now().showTurn(7));
  // Turn 7 is in the window shown: no request, only the scroll.
  expect(atTurn).not.toHaveBeenCalled();
  expect(now().target).toEqual({ kind: "turn", turn: 7 });
  // A turn in the live chat leaves the window for it.
  await act(async () => now().showTurn(11));
  expect(now().window).toBeNull();
  // One far back in neither asks the runtime for its page.
  await act(async () => now().showTurn(5));
  expect(atTurn).toHaveBeenCalledWith(5, 100);
  expect([now().window?.first, now().window?.end]).toEqual([4, 8]);
  // Older from that window: the page ending at its first turn.
  before.mockResolvedValueOnce({ ...pages.home });
  await act(async () => void (await now().older()));
  expect(before).toHaveBeenCalledWith(4, 100);
  expect([now().window?.first, now().window?.end]).toEqual([0, 8]);
});
