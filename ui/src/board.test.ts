import { afterEach, describe, expect, it, vi } from "vitest";
import type { BoardRow } from "./bindings/app/BoardRow";
import type { BoardView } from "./bindings/app/BoardView";
import type { WorktreeView } from "./bindings/app/WorktreeView";
import { arrange, BoardStore, relativeTime, search } from "./board";
import { Clock, TICK_MS } from "./store";

/** A board row as the `watch_board` channel sends it. */
function row(id: string, name: string, updatedAt: string, more: Partial<BoardRow> = {}): BoardRow {
  return { id, name, updatedAt, turns: 1, model: "mock-model", activity: { state: "idle" }, changedFiles: 0, worktree: null, worktreeRemoved: false, open: false, firstPrompt: "", costUsd: null, tokens: null, ...more };
}

function worktree(name: string, createdAt: string, sessions: string[] = []): WorktreeView {
  return {
    name,
    path: `/home/u/.local/state/cairn/worktrees/proj/${name}`,
    branch: `cairn/${name}`,
    base: "0123abcd",
    sessions,
    changedFiles: 1,
    unappliedFiles: 1,
    commitsAhead: 0,
    createdAt,
    bytes: 1000,
    broken: null,
  };
}

function board(rows: BoardRow[], worktrees: WorktreeView[] = [], viewed: string | null = null): BoardView {
  return { rows, viewed, openRequest: null, worktrees, worktreesUnavailable: null };
}

const ids = (rows: BoardRow[]) => rows.map((r) => r.id);

describe("the board store", () => {
  it("keeps a row where it was when it is merely viewed (a save without a turn)", () => {
    const store = new BoardStore();
    const seen: number[] = [];
    store.subscribe(() => seen.push(1));
    store.receive(board([row("b", "Bravo", "2026-12-05T10:00:00Z"), row("a", "Alpha", "2026-12-05T09:00:00Z", { turns: 3 })]));
    // Opening "a" and switching away saves it: its time moves, its turn count does not.
    store.receive(board([row("a", "Alpha", "2026-12-05T11:00:00Z", { turns: 3 }), row("b", "Bravo", "2026-12-05T10:00:00Z")], [], "a"));
    const s = store.get();
    expect(s.lastActivity).toEqual({ a: "2026-12-05T09:00:00Z", b: "2026-12-05T10:00:00Z" });
    expect(ids(arrange(s, s.view?.rows ?? [], []).order)).toEqual(["b", "a"]);
    expect(seen).toHaveLength(2);
  });

  it("moves a row up when it ran a turn (the user's message or the agent's work)", () => {
    const store = new BoardStore();
    store.receive(board([row("b", "Bravo", "2026-12-05T10:00:00Z"), row("a", "Alpha", "2026-12-05T09:00:00Z")]));
    store.receive(board([row("a", "Alpha", "2026-12-05T11:00:00Z", { activity: { state: "running" } }), row("b", "Bravo", "2026-12-05T10:00:00Z")]));
    store.receive(board([row("a", "Alpha", "2026-12-05T11:00:05Z", { turns: 2 }), row("b", "Bravo", "2026-12-05T10:00:00Z")]));
    const s = store.get();
    expect(s.lastActivity.a).toBe("2026-12-05T11:00:05Z");
    expect(ids(arrange(s, s.view?.rows ?? [], []).order)).toEqual(["a", "b"]);
  });

  it("compares times by value whatever their form (Z or +00:00, milliseconds or not)", () => {
    const store = new BoardStore();
    // As text "…00Z" sorts after "…00.500Z", though it is half a second older.
    store.receive(board([row("a", "Alpha", "2026-12-05T10:00:00.500Z"), row("b", "Bravo", "2026-12-05T10:00:00Z"), row("c", "Charlie", "2026-12-05T09:59:59+00:00")]));
    const s = store.get();
    expect(ids(arrange(s, s.view?.rows ?? [], []).order)).toEqual(["a", "b", "c"]);
  });

  it("lists a session another process started on its first board", () => {
    const store = new BoardStore();
    store.receive(board([row("a", "Alpha", "2026-12-05T09:00:00Z")]));
    store.receive(board([row("cli", "Started by the CLI", "2026-12-05T12:00:00Z"), row("a", "Alpha", "2026-12-05T09:00:00Z")]));
    const s = store.get();
    expect(ids(arrange(s, s.view?.rows ?? [], []).order)).toEqual(["cli", "a"]);
  });

  it("forgets everything on clear", () => {
    const store = new BoardStore();
    store.receive(board([row("a", "Alpha", "2026-12-05T09:00:00Z")]));
    store.clear();
    expect(store.get()).toEqual({ view: null, lastActivity: {}, liveSince: {} });
  });
});

describe("arrange", () => {
  it("pins running, queued and waiting sessions on top, the latest to start first, and keeps their order while they stream", () => {
    const store = new BoardStore();
    const idle = row("idle", "Idle one", "2026-12-05T12:00:00Z");
    store.receive(board([idle, row("r1", "First run", "2026-12-05T08:00:00Z", { activity: { state: "running" } }), row("old", "Old", "2026-12-01T08:00:00Z")]));
    store.receive(
      board([
        row("r2", "Second run", "2026-12-05T12:01:00Z", { activity: { state: "approval", waiting: 1 } }),
        idle,
        row("r1", "First run", "2026-12-05T12:02:00Z", { activity: { state: "running" } }),
        row("q", "Queued", "2026-12-05T07:00:00Z", { activity: { state: "queued", running: 4, limit: 4 } }),
        row("old", "Old", "2026-12-01T08:00:00Z"),
      ]),
    );
    // r1 streams on (its save time moves): the pinned order stays.
    store.receive(
      board([
        row("r1", "First run", "2026-12-05T12:03:00Z", { activity: { state: "running" } }),
        row("r2", "Second run", "2026-12-05T12:01:00Z", { activity: { state: "approval", waiting: 1 } }),
        idle,
        row("q", "Queued", "2026-12-05T07:00:00Z", { activity: { state: "queued", running: 4, limit: 4 } }),
        row("old", "Old", "2026-12-01T08:00:00Z"),
      ]),
    );
    const s = store.get();
    const a = arrange(s, s.view?.rows ?? [], []);
    expect(ids(a.pinned)).toEqual(["r2", "q", "r1"]);
    expect(a.entries.map((e) => (e.kind === "session" ? e.row.id : e.worktree.name))).toEqual(["idle", "old"]);
    expect(ids(a.order)).toEqual(["r2", "q", "r1", "idle", "old"]);
  });

  it("groups worktree sessions under their worktree, placed by its newest activity (not at the bottom)", () => {
    const store = new BoardStore();
    const wts = [worktree("feature", "2026-12-01T00:00:00Z", ["w1", "w2"]), worktree("empty", "2026-11-01T00:00:00Z")];
    store.receive(
      board(
        [
          row("f1", "Folder new", "2026-12-05T12:00:00Z"),
          row("w1", "In feature", "2026-12-05T11:00:00Z", { worktree: "feature" }),
          row("f2", "Folder old", "2026-12-04T12:00:00Z"),
          row("w2", "In feature too", "2026-12-03T11:00:00Z", { worktree: "feature" }),
          row("gone", "Worktree removed", "2026-12-02T11:00:00Z", { worktree: "removed" }),
        ],
        wts,
      ),
    );
    const s = store.get();
    const a = arrange(s, s.view?.rows ?? [], wts);
    expect(a.entries.map((e) => (e.kind === "session" ? e.row.id : `[${e.worktree.name}: ${ids(e.rows).join(",")}]`))).toEqual([
      "f1",
      "[feature: w1,w2]",
      "f2",
      // A session whose worktree is gone stays a folder row.
      "gone",
      "[empty: ]",
    ]);
    expect(ids(a.order)).toEqual(["f1", "w1", "w2", "f2", "gone"]);
  });

  it("takes a running worktree session into the pinned group and out of its worktree", () => {
    const wts = [worktree("feature", "2026-12-01T00:00:00Z", ["w1"])];
    const store = new BoardStore();
    store.receive(board([row("w1", "In feature", "2026-12-05T11:00:00Z", { worktree: "feature", activity: { state: "running" } })], wts));
    const s = store.get();
    const a = arrange(s, s.view?.rows ?? [], wts);
    expect(ids(a.pinned)).toEqual(["w1"]);
    expect(a.entries).toEqual([{ kind: "worktree", worktree: wts[0], rows: [] }]);
  });
});

describe("search", () => {
  // Twenty sessions with similar prompts (the first week of a heavy user).
  const rows = Array.from({ length: 20 }, (_, i) =>
    row(`s${i}`, i === 13 ? "Refactor the parser module" : `Fix the failing test in module ${i}`, `2026-12-05T${String(i).padStart(2, "0")}:00:00Z`),
  );
  rows.push(row("wt", "Try a new cache", "2026-12-01T00:00:00Z", { worktree: "speedup" }));
  const wts = [worktree("speedup", "2026-11-30T00:00:00Z", ["wt"])];
  const store = new BoardStore();
  store.receive(board(rows, wts));

  it("puts a name typed by three characters first", () => {
    expect(ids(search(store.get(), rows, wts, "proj", "ref")).slice(0, 3)).toEqual(["s13"]);
    expect(ids(search(store.get(), rows, wts, "proj", "par"))[0]).toBe("s13");
  });

  it("ranks a name's start over a word of it over anywhere, then by last activity", () => {
    const found = ids(search(store.get(), rows, wts, "proj", "fail"));
    expect(found).toHaveLength(19);
    // Same rank: newest activity first.
    expect(found.slice(0, 3)).toEqual(["s19", "s18", "s17"]);
    // Every word must match; the whole phrase in a name ranks first.
    expect(ids(search(store.get(), rows, wts, "proj", "module 7"))).toEqual(["s7", "s17"]);
  });

  it("finds a session by its first prompt, after the names", () => {
    const withPrompt = [...rows, row("fp", "Untitled", "2026-12-05T23:00:00Z", { firstPrompt: "Why does the scheduler drop deadlines?" })];
    expect(ids(search(store.get(), withPrompt, wts, "proj", "scheduler"))).toEqual(["fp"]);
    // A name match ranks above a first-prompt match, however recent.
    const both = [...withPrompt, row("nm", "Scheduler notes", "2026-12-01T00:00:00Z")];
    expect(ids(search(store.get(), both, wts, "proj", "sched"))).toEqual(["nm", "fp"]);
  });

  it("finds sessions by worktree, branch, workspace and model, and nothing for nothing", () => {
    expect(ids(search(store.get(), rows, wts, "proj", "speedup"))).toEqual(["wt"]);
    expect(ids(search(store.get(), rows, wts, "proj", "cairn/speed"))).toEqual(["wt"]);
    expect(search(store.get(), rows, wts, "proj", "PROJ")).toHaveLength(21);
    expect(search(store.get(), rows, wts, "proj", "zzz")).toEqual([]);
    expect(search(store.get(), rows, wts, "proj", "   ")).toEqual([]);
  });
});

describe("relative times", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("read the shared clock's time", () => {
    const at = Date.parse("2026-12-05T12:00:00Z");
    expect(relativeTime("2026-12-05T11:57:00Z", "en", at)).toBe("3 minutes ago");
    expect(relativeTime("2026-12-05T11:57:00Z", "en", at + 60 * 60_000)).toBe("1 hour ago");
    expect(relativeTime("not a time", "en", at)).toBe("");
  });

  it("tick from one timer that runs only while something shows a time", () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse("2026-12-05T12:00:00Z"));
    const clock = new Clock();
    const ticks: number[] = [];
    const off1 = clock.subscribe(() => ticks.push(clock.get()));
    const off2 = clock.subscribe(() => undefined);
    expect(clock.running).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(TICK_MS);
    expect(ticks).toEqual([Date.parse("2026-12-05T12:00:30Z")]);
    off1();
    expect(clock.running).toBe(true);
    off2();
    expect(clock.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});
