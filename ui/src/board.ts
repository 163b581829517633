// The sessions board outside React: the latest board pushed by the backend, each session's
// last activity (what orders the board), and how the rows are arranged for the sidebar
// (live sessions pinned on top, worktree sessions grouped under their worktree, search).
import type { BoardRow } from "./bindings/app/BoardRow";
import type { BoardView } from "./bindings/app/BoardView";
import type { SessionActivity } from "./bindings/app/SessionActivity";
import type { WorktreeView } from "./bindings/app/WorktreeView";
import type { MessageKey } from "./i18n";
import { formatDate, relativeTimeFormat } from "./format";
import { Store } from "./store";

/** "3 min ago" style time of `iso` seen at `now`, in the UI language. */
export function relativeTime(iso: string, lang: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  // A board time is never ahead: a moment in the future (the page's clock a little behind
  // the one that stamped it) reads "now", not "in 1 second".
  const secs = Math.min(0, Math.round((then - now) / 1000));
  const rtf = relativeTimeFormat(lang);
  const abs = Math.abs(secs);
  if (abs < 60) return rtf.format(secs, "second");
  if (abs < 3600) return rtf.format(Math.round(secs / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(secs / 3600), "hour");
  if (abs < 86400 * 30) return rtf.format(Math.round(secs / 86400), "day");
  return formatDate(new Date(then), lang);
}

/** The board's label of a live state. */
export function activityLabel(a: SessionActivity): MessageKey {
  switch (a.state) {
    case "running":
      return "board.running";
    case "queued":
      return "board.queued";
    case "approval":
      return "board.approval";
    case "answer":
      return a.ask === "plan" ? "board.plan" : a.ask === "directory" ? "board.directory" : "board.question";
    case "error":
      return "board.error";
    case "idle":
      return "board.idle";
  }
}

/** Whether closing the session now would stop something (it runs, queues or waits). */
export function isLive(a: SessionActivity): boolean {
  return a.state !== "idle" && a.state !== "error";
}

/** An RFC 3339 time as milliseconds (0 when unreadable): times from different writers
 * ("Z" or "+00:00", with or without milliseconds) compare by value, not as text. */
const ms = (iso: string) => {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
};

/** What the store remembers of a session between two boards. */
type Mark = {
  /** Its last activity (RFC 3339): what orders the board. */
  at: string;
  /** Turns run when last seen. */
  turns: number;
  /** Live when last seen. */
  live: boolean;
  /** When it last became live (orders the pinned group; stable while it streams). */
  liveSince: number;
};

/** The board as the sidebar reads it. */
export type BoardState = {
  /** The last board pushed; `null` before the first one. */
  view: BoardView | null;
  /** Each session's last activity by the agent or the user's message (RFC 3339), by id. */
  lastActivity: Readonly<Record<string, string>>;
  /** When each live session became live (a counter: larger is later), by id. */
  liveSince: Readonly<Record<string, number>>;
};

/**
 * The sessions board store, fed by the board channel. A session's last activity moves only
 * when it ran a turn (its turn count changed) or while and right after it was live: a save
 * that changed nothing else (opening a session to look at it, closing it) leaves it where it
 * was, so rows do not jump when merely viewed.
 */
export class BoardStore extends Store<BoardState> {
  private marks = new Map<string, Mark>();
  private seq = 0;

  constructor() {
    super({ view: null, lastActivity: {}, liveSince: {} });
  }

  /** Takes a board pushed by the backend. */
  receive(view: BoardView): void {
    const next = new Map<string, Mark>();
    // Sessions that became live with this board share its number (then: by activity).
    const now = ++this.seq;
    for (const row of view.rows) {
      const live = isLive(row.activity);
      const prev = this.marks.get(row.id);
      let mark: Mark;
      if (prev === undefined) {
        mark = { at: row.updatedAt, turns: row.turns, live, liveSince: live ? now : 0 };
      } else {
        // A turn ran, runs, or just ended: that is activity. Anything else kept the time.
        const active = row.turns !== prev.turns || live || prev.live;
        const at = active && ms(row.updatedAt) > ms(prev.at) ? row.updatedAt : prev.at;
        mark = { at, turns: row.turns, live, liveSince: live ? (prev.live ? prev.liveSince : now) : 0 };
      }
      next.set(row.id, mark);
    }
    this.marks = next;
    const lastActivity: Record<string, string> = {};
    const liveSince: Record<string, number> = {};
    for (const [id, m] of next) {
      lastActivity[id] = m.at;
      if (m.live) liveSince[id] = m.liveSince;
    }
    this.set({ view, lastActivity, liveSince });
  }

  /** Forgets everything (another workspace). */
  clear(): void {
    this.marks = new Map();
    this.set({ view: null, lastActivity: {}, liveSince: {} });
  }
}

/** One entry of the board below the pinned group: a folder session, or a worktree with its sessions. */
export type BoardEntry =
  | { kind: "session"; row: BoardRow }
  | { kind: "worktree"; worktree: WorktreeView; rows: BoardRow[] };

/** The board arranged for the sidebar. */
export type Arranged = {
  /** Running, queued and waiting sessions (any place), the latest to become live first. */
  pinned: BoardRow[];
  /** The other sessions by last activity, worktree sessions grouped under their worktree
   * (a group sits where its latest session would). */
  entries: BoardEntry[];
  /** The rows in the order the keyboard walks them (pinned, then entries). */
  order: BoardRow[];
};

const byActivity = (lastActivity: Readonly<Record<string, string>>) => (a: BoardRow, b: BoardRow) => {
  const x = ms(lastActivity[a.id] ?? a.updatedAt);
  const y = ms(lastActivity[b.id] ?? b.updatedAt);
  if (x !== y) return y - x;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
};

/** Arranges the board: pinned live sessions, then folder sessions and worktree groups by activity. */
export function arrange(state: BoardState, rows: BoardRow[], worktrees: WorktreeView[]): Arranged {
  const { lastActivity, liveSince } = state;
  const sorted = [...rows].sort(byActivity(lastActivity));
  const pinned = sorted
    .filter((r) => isLive(r.activity))
    .sort((a, b) => (liveSince[b.id] ?? 0) - (liveSince[a.id] ?? 0));
  const rest = sorted.filter((r) => !isLive(r.activity));
  const names = new Set(worktrees.map((w) => w.name));
  const folder = rest.filter((r) => r.worktree === null || !names.has(r.worktree));
  type Keyed = { key: number; id: string; entry: BoardEntry };
  const keyed: Keyed[] = folder.map((row) => ({ key: ms(lastActivity[row.id] ?? row.updatedAt), id: row.id, entry: { kind: "session", row } }));
  for (const w of worktrees) {
    const mine = rest.filter((r) => r.worktree === w.name);
    // A group sits where its newest session's activity (pinned ones too) puts it.
    const times = rows.filter((r) => r.worktree === w.name).map((r) => ms(lastActivity[r.id] ?? r.updatedAt));
    const key = Math.max(ms(w.createdAt), ...times);
    keyed.push({ key, id: `~${w.name}`, entry: { kind: "worktree", worktree: w, rows: mine } });
  }
  keyed.sort((a, b) => (a.key !== b.key ? b.key - a.key : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const entries = keyed.map((k) => k.entry);
  const order = [...pinned, ...entries.flatMap((e) => (e.kind === "session" ? [e.row] : e.rows))];
  return { pinned, entries, order };
}

/** How well a row matches a search (lower is better), or null when it does not. */
function score(row: BoardRow, q: string, worktrees: WorktreeView[], workspaceName: string): number | null {
  const name = row.name.toLowerCase();
  if (name.startsWith(q)) return 0;
  if (name.split(/[^\p{L}\p{N}]+/u).some((w) => w.startsWith(q))) return 1;
  if (name.includes(q)) return 2;
  const wt = row.worktree === null ? undefined : worktrees.find((w) => w.name === row.worktree);
  const others = [row.firstPrompt, row.worktree ?? "", wt?.branch ?? "", workspaceName, row.model];
  if (others.some((f) => f.toLowerCase().includes(q))) return 3;
  return null;
}

/**
 * The rows matching a search of names (then first prompt, worktree, branch, workspace and model), best
 * match first (a name starting with the query, then a word of it, then anywhere), then by
 * last activity. Every word of the query must match.
 */
export function search(state: BoardState, rows: BoardRow[], worktrees: WorktreeView[], workspaceName: string, query: string): BoardRow[] {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return [];
  const whole = words.join(" ");
  const scored: { row: BoardRow; s: number }[] = [];
  for (const row of rows) {
    const each = words.map((w) => score(row, w, worktrees, workspaceName));
    if (each.some((s) => s === null)) continue;
    const full = score(row, whole, worktrees, workspaceName);
    scored.push({ row, s: full ?? 4 + Math.max(...(each as number[])) });
  }
  const order = byActivity(state.lastActivity);
  return scored.sort((a, b) => a.s - b.s || order(a.row, b.row)).map((x) => x.row);
}
