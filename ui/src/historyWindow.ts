// A long session's older turns, a window at a time: what the transcript shows when the user
// went far up (Home, a search match, a timeline entry, scrolling past the live chat's cap).
// The live chat keeps the newest turns (and keeps folding events); the window holds a
// contiguous run of older turn groups fetched from the runtime's history API, never more than
// WINDOW_TURNS, so the page never holds the whole log of a session of thousands of turns.
import type { Event } from "./bindings/Event";
import type { HistoryPage } from "./bindings/app/HistoryPage";
import type { SearchHit } from "./bindings/app/SearchHit";
import { applyEvents, closeStaleTools, emptyChat, type Item } from "./transcript";

/** Turns asked for per page. */
export const PAGE_TURNS = 100;
/** The most turns a window holds; a page beyond it drops the far end. */
export const WINDOW_TURNS = 300;
/** The most turns the live chat pages in above its newest before a window takes over. */
export const LIVE_TURNS = 300;

/** A contiguous run of turn groups `[first, end)` and their items. */
export type HistoryWindow = {
  first: number;
  end: number;
  /** How many turn groups the session had when the last page came. */
  total: number;
  items: Item[];
  /** The index in `items` where each group starts (`starts[g - first]`). */
  starts: number[];
};

/** The prefix of a window item's id: ids stay the same whichever page brought the turn. */
const TAG = "h/";

/** An item's id without the tag of the page that brought it (live, earlier page or window). */
export function baseId(id: string): string {
  return id.replace(/^(?:earlier-\d+\/|h\/)/, "");
}

/** The events of a page split into its turn groups (a group starts at each `turn_start`). */
function groups(events: readonly Event[]): Event[][] {
  const out: Event[][] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (last === undefined || e.type === "turn_start") out.push([e]);
    else last.push(e);
  }
  return out;
}

/** The items of one page, each group folded on its own, and where each group starts. */
function fold(page: HistoryPage): { items: Item[]; starts: number[] } {
  const items: Item[] = [];
  const starts: number[] = [];
  for (const g of groups(page.events)) {
    starts.push(items.length);
    const chat = closeStaleTools(applyEvents(emptyChat, g));
    for (const it of chat.items) items.push({ ...it, id: TAG + it.id });
  }
  return { items, starts };
}

/** A window of one page. */
export function windowOf(page: HistoryPage): HistoryWindow {
  const { items, starts } = fold(page);
  return { first: page.first, end: page.end, total: page.total, items, starts };
}

/** Groups `[from, to)` of `w` (within its range) as a window. */
function slice(w: HistoryWindow, from: number, to: number): HistoryWindow {
  const a = Math.max(from, w.first);
  const b = Math.min(to, w.end);
  if (b <= a) return { ...w, first: a, end: a, items: [], starts: [] };
  const lo = w.starts[a - w.first] ?? w.items.length;
  const hi = b === w.end ? w.items.length : (w.starts[b - w.first] ?? w.items.length);
  return {
    first: a,
    end: b,
    total: w.total,
    items: w.items.slice(lo, hi),
    starts: w.starts.slice(a - w.first, b - w.first).map((s) => s - lo),
  };
}

/**
 * `w` with the older page `page` (ending where `w` starts) put before it; beyond `cap` turns
 * the newest groups go. A page that does not join on is taken as a new window.
 */
export function withOlder(w: HistoryWindow, page: HistoryPage, cap = WINDOW_TURNS): HistoryWindow {
  if (page.end !== w.first) return windowOf(page);
  const older = windowOf(page);
  const joined: HistoryWindow = {
    first: older.first,
    end: w.end,
    total: page.total,
    items: [...older.items, ...w.items],
    starts: [...older.starts, ...w.starts.map((s) => s + older.items.length)],
  };
  return slice(joined, joined.first, joined.first + cap);
}

/** `w` with the newer page `page` (starting where `w` ends) after it; beyond `cap` turns
 * the oldest groups go. */
export function withNewer(w: HistoryWindow, page: HistoryPage, cap = WINDOW_TURNS): HistoryWindow {
  if (page.first !== w.end) return windowOf(page);
  const newer = windowOf(page);
  const joined: HistoryWindow = {
    first: w.first,
    end: newer.end,
    total: page.total,
    items: [...w.items, ...newer.items],
    starts: [...w.starts, ...newer.starts.map((s) => s + w.items.length)],
  };
  return slice(joined, joined.end - cap, joined.end);
}

/** The page to ask for to show group `group` near its middle: its `from`. */
export function fromFor(group: number, limit = PAGE_TURNS): number {
  return Math.max(0, group - Math.floor(limit / 2));
}

/** The index in `items` of the first item whose id (untagged) is `id`, or -1. */
export function indexOfId(items: readonly Item[], id: string): number {
  return items.findIndex((it) => baseId(it.id) === id);
}

/** The id of the item a search hit is in (a prompt's user row, an answer's row). */
export function hitItemId(hit: SearchHit): string {
  return hit.role === "user" ? `${hit.id}:user` : hit.id;
}

/** The index of the first row of chat turn `turn` in `items` (its prompt), or -1. */
export function indexOfTurn(items: readonly Item[], turn: number): number {
  const end = items.findIndex((it) => it.kind === "turn_end" && it.turn === turn);
  if (end === -1) return -1;
  for (let i = end; i >= 0; i--) if (items[i]?.kind === "user") return i;
  return end;
}

/** How many turns a chat's items hold (its `turn_end` rows and a running turn's start). */
export function turnsIn(items: readonly Item[]): number {
  let n = 0;
  for (const it of items) if (it.kind === "turn_end") n++;
  return n;
}
