// @vitest-environment jsdom
// The workbench reads only the shown session's part of the chat store (store.ts's
// useStoreSelect): the recorded events of a session streaming in the background fold into its
// own transcript without rendering the component that shows the other session.
import { act } from "react";
import { createRoot } from "react-dom/client";
import { expect, it } from "vitest";
import type { Event } from "./bindings/Event";
import { ChatStore } from "./chats";
import recorded from "./fixtures/two-sessions.events.json";
import { useStoreSelect } from "./store";
import { emptyChat } from "./transcript";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

it("a session streaming in the background does not render the one shown", async () => {
  const pending: (() => void)[] = [];
  const store = new ChatStore((f) => {
    pending.push(f);
    return () => undefined;
  });
  let renders = 0;
  let shownItems = 0;
  function Shown({ id }: { id: string }) {
    const chat = useStoreSelect(store, (s) => s.chats[id] ?? emptyChat);
    renders++;
    shownItems = chat.items.length;
    return null;
  }
  const root = createRoot(document.createElement("div"));
  await act(async () => root.render(<Shown id="alpha" />));
  const events = recorded.events as [string, Event][];
  // Alpha's events: the shown session renders with them.
  for (const [id, event] of events) if (id === "alpha") store.eventsOf(id)(event);
  await act(async () => pending.splice(0).forEach((f) => f()));
  const afterAlpha = renders;
  expect(shownItems).toBeGreaterThan(0);
  // Bravo's (in the background): folded into bravo's transcript, no render of alpha's view.
  for (const [id, event] of events) if (id === "bravo") store.eventsOf(id)(event);
  await act(async () => pending.splice(0).forEach((f) => f()));
  expect(store.chat("bravo").items.length).toBeGreaterThan(0);
  expect(renders).toBe(afterAlpha);
  act(() => root.unmount());
});
