// Navigating a long session's transcript: which turns it shows (the live chat, or a window
// of older turns from the runtime's history API, see ../historyWindow.ts), paging in as the
// user scrolls near either end, Home to the first turn, End back to the newest, and jumps
// to a search hit or a timeline entry's turn. The transcript does the scrolling; this says
// what to show and where to go.
import { useCallback, useRef, useState } from "react";
import type { HistoryPage } from "../bindings/app/HistoryPage";
import type { SearchHit } from "../bindings/app/SearchHit";
import {
  baseId,
  fromFor,
  hitItemId,
  indexOfId,
  indexOfTurn,
  LIVE_TURNS,
  PAGE_TURNS,
  turnsIn,
  windowOf,
  withNewer,
  withOlder,
  type HistoryWindow,
} from "../historyWindow";
import * as ipc from "../ipc";
import type { Item } from "../transcript";

/** Where the transcript should scroll once the items shown hold it. */
export type Target =
  | { kind: "id"; id: string; align: "start" | "center"; unlessKept?: boolean }
  | { kind: "turn"; turn: number }
  | { kind: "top" }
  | { kind: "bottom" };

/** What the transcript needs to page and jump. */
export type LongTranscript = {
  /** The items shown: the window's, or the live chat's. */
  items: Item[];
  /** The window shown, or null for the live chat. */
  window: HistoryWindow | null;
  /** Where to scroll next (consumed by the transcript). */
  target: Target | null;
  /** The transcript scrolled to the target. */
  reached: () => void;
  /** Whether older turns than those shown exist. */
  hasOlder: boolean;
  /** A page is being fetched (a second request would be refused). */
  busy: () => boolean;
  /** Loads the page before the first turn shown (the transcript keeps the view in place). */
  older: () => Promise<boolean>;
  /** Loads the page after the last turn shown, or goes back to the live chat. */
  newer: () => Promise<boolean>;
  home: () => void;
  end: () => void;
  showHit: (hit: SearchHit) => void;
  showTurn: (turn: number) => void;
};

/**
 * `live` is the chat's items, `liveBefore` where its older turns end (null: it holds the
 * first turn), `earlier` its own "load the page before" (the live chat pages in up to
 * [`LIVE_TURNS`] turns before a window takes over).
 */
export function useLongTranscript(live: Item[], liveBefore: number | null, earlier: (() => Promise<void>) | undefined, fail: (e: unknown) => void): LongTranscript {
  const [win, setWin] = useState<HistoryWindow | null>(null);
  const [target, setTarget] = useState<Target | null>(null);
  const busy = useRef(false);
  const winRef = useRef(win);
  winRef.current = win;
  const liveFirst = liveBefore ?? 0;

  // One request at a time: a second scroll event while a page loads would ask again.
  const load = useCallback(
    async (get: () => Promise<HistoryPage | null>, put: (page: HistoryPage) => void): Promise<boolean> => {
      if (busy.current) return false;
      busy.current = true;
      try {
        const page = await get();
        if (page === null) return false;
        put(page);
        return true;
      } catch (e) {
        fail(e);
        return false;
      } finally {
        busy.current = false;
      }
    },
    [fail],
  );

  const older = useCallback(async () => {
    const w = winRef.current;
    if (w === null) {
      if (liveBefore === null) return false;
      if (earlier !== undefined && turnsIn(live) < LIVE_TURNS) {
        if (busy.current) return false;
        busy.current = true;
        try {
          await earlier();
        } finally {
          busy.current = false;
        }
        return true;
      }
      // The live chat holds enough: a window of the turns around its top takes over (the
      // view stays on the same rows: their ids are the same).
      const from = Math.max(0, liveBefore - PAGE_TURNS);
      return load(() => ipc.sessionHistoryFrom(from, PAGE_TURNS * 2), (p) => setWin(windowOf(p)));
    }
    if (w.first === 0) return false;
    return load(() => ipc.sessionHistory(w.first, PAGE_TURNS), (p) => setWin((cur) => (cur === null ? cur : withOlder(cur, p))));
  }, [live, liveBefore, earlier, load]);

  const newer = useCallback(async () => {
    const w = winRef.current;
    if (w === null) return false;
    // The window reaches the live chat's turns: the live chat takes over, on the same rows:
    // the transcript keeps the rows in view when the live chat holds them, else the window's
    // last row is brought into view (never the live chat's end, which would skip the turns
    // between).
    if (w.end > liveFirst) {
      const last = w.items[w.items.length - 1];
      setWin(null);
      if (last !== undefined) setTarget({ kind: "id", id: baseId(last.id), align: "start", unlessKept: true });
      return true;
    }
    return load(() => ipc.sessionHistoryFrom(w.end, PAGE_TURNS), (p) => setWin((cur) => (cur === null ? cur : withNewer(cur, p))));
  }, [liveFirst, load]);

  const home = useCallback(() => {
    if (liveBefore === null) {
      setWin(null);
      setTarget({ kind: "top" });
      return;
    }
    void load(
      () => ipc.sessionHistoryFrom(0, PAGE_TURNS),
      (p) => {
        setWin(windowOf(p));
        setTarget({ kind: "top" });
      },
    );
  }, [liveBefore, load]);

  const end = useCallback(() => {
    setWin(null);
    setTarget({ kind: "bottom" });
  }, []);

  const showHit = useCallback(
    (hit: SearchHit) => {
      const to: Target = { kind: "id", id: hitItemId(hit), align: "center" };
      const w = winRef.current;
      if (w !== null && hit.group >= w.first && hit.group < w.end && indexOfId(w.items, to.id) !== -1) {
        setTarget(to);
      } else if (hit.group >= liveFirst && indexOfId(live, to.id) !== -1) {
        setWin(null);
        setTarget(to);
      } else {
        void load(
          () => ipc.sessionHistoryFrom(fromFor(hit.group), PAGE_TURNS),
          (p) => {
            setWin(windowOf(p));
            setTarget(to);
          },
        );
      }
    },
    [live, liveFirst, load],
  );

  const showTurn = useCallback(
    (turn: number) => {
      const to: Target = { kind: "turn", turn };
      const w = winRef.current;
      if (indexOfTurn(w?.items ?? live, turn) !== -1) {
        setTarget(to);
      } else if (w !== null && indexOfTurn(live, turn) !== -1) {
        setWin(null);
        setTarget(to);
      } else {
        void load(
          () => ipc.sessionHistoryAtTurn(turn, PAGE_TURNS),
          (p) => {
            setWin(windowOf(p));
            setTarget(to);
          },
        );
      }
    },
    [live, load],
  );

  const reached = useCallback(() => setTarget(null), []);
  const isBusy = useCallback(() => busy.current, []);
  const hasOlder = win === null ? liveBefore !== null : win.first > 0;
  return { items: win?.items ?? live, window: win, target, reached, hasOlder, busy: isBusy, older, newer, home, end, showHit, showTurn };
}
