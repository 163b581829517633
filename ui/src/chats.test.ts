import { describe, expect, it } from "vitest";
import type { Event } from "./bindings/Event";
import { ChatStore, reduce } from "./chats";
import { emptyChat, WAITING_ID } from "./transcript";
import recorded from "./fixtures/two-sessions.events.json";

/** A frame the test runs by hand. */
function frames() {
  const pending: (() => void)[] = [];
  return {
    schedule: (f: () => void) => {
      pending.push(f);
      return () => pending.splice(pending.indexOf(f), 1);
    },
    run: () => pending.splice(0).forEach((f) => f()),
    count: () => pending.length,
  };
}

const texts = (store: ChatStore, id: string) =>
  store
    .chat(id)
    .items.filter((i) => i.kind === "assistant")
    .map((i) => (i.kind === "assistant" ? i.text : ""));

describe("the chat store", () => {
  it("folds each session's recorded events into its own transcript, once per frame", () => {
    const f = frames();
    const store = new ChatStore(f.schedule);
    let notified = 0;
    store.subscribe(() => notified++);
    for (const [id, event] of recorded.events as [string, Event][]) store.eventsOf(id)(event);
    // One frame scheduled for the whole burst; nothing folded before it.
    expect(f.count()).toBe(1);
    expect(store.get().chats).toEqual({});
    f.run();
    expect(notified).toBe(1);
    expect(texts(store, "alpha")).toEqual(["Alpha answer: the parser reads tokens."]);
    expect(texts(store, "bravo")).toEqual(["Bravo answer: the cache keeps the newest entries."]);
    // Alpha's turn ended, Bravo's runs on (shown or not).
    expect(store.isLive("alpha")).toBe(false);
    expect(store.isLive("bravo")).toBe(true);
    expect(store.chat("alpha").items.filter((i) => i.kind === "user").length).toBe(1);
  });

  it("keeps a run call in flight apart from the transcript, and notices per session", () => {
    const store = new ChatStore(frames().schedule);
    store.setPending("", true);
    expect(store.isLive("")).toBe(true);
    const before = store.get();
    store.setPending("", true);
    expect(store.get()).toBe(before);
    store.setPending("", false);
    expect(store.isLive("")).toBe(false);
    store.dispatch("alpha", { type: "notice", text: "The key was rejected", tone: "error", action: "settings" });
    expect(store.chat("alpha").items.map((i) => i.kind)).toEqual(["notice"]);
    expect(store.chat("bravo").items).toEqual([]);
  });

  it("drops a scheduled fold when the page goes away", () => {
    const f = frames();
    const store = new ChatStore(f.schedule);
    const [first] = recorded.events as [string, Event][];
    if (first !== undefined) store.eventsOf(first[0])(first[1]);
    store.dispose();
    expect(f.count()).toBe(0);
  });
});

describe("a prompt waiting for its turn", () => {
  it("is shown at once and replaced by its turn's start", () => {
    let s = reduce(emptyChat, { type: "waiting", text: "fifth chat's question" });
    expect(s.items).toEqual([{ kind: "user", id: WAITING_ID, text: "fifth chat's question", steering: false, waiting: true }]);
    s = reduce(s, {
      type: "events",
      events: [{ type: "turn_start", data: { taskId: "t9", input: "fifth chat's question", sessionId: "s", turn: 1 } }],
      view: null,
    });
    expect(s.items.map((i) => i.id)).toEqual(["t9:user"]);
  });
  it("goes away when the turn is refused", () => {
    const s = reduce(reduce(emptyChat, { type: "waiting", text: "x" }), { type: "waiting", text: null });
    expect(s.items).toEqual([]);
  });
});
