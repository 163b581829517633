// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { BoardRow } from "./bindings/app/BoardRow";
import type { BoardView } from "./bindings/app/BoardView";
import { BoardStore } from "./board";
import { Sessions } from "./components/Sessions";
import { TICK_MS } from "./store";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

vi.mock("@tauri-apps/api/core", () => ({ invoke: () => new Promise(() => undefined), Channel: class {} }));

function row(id: string, name: string, updatedAt: string, more: Partial<BoardRow> = {}): BoardRow {
  return { id, name, updatedAt, turns: 1, model: "mock-model", activity: { state: "idle" }, changedFiles: null, worktree: null, worktreeRemoved: false, open: false, firstPrompt: "", costUsd: null, tokens: null, ...more };
}
const board = (rows: BoardRow[]): BoardView => ({ rows, viewed: null, openRequest: null, worktrees: [], worktreesUnavailable: null });

let root: Root;
let host: HTMLDivElement;
let boards: BoardStore;
let opened: string[];
let focused = 0;

function render(focusSearch = 0) {
  act(() =>
    root.render(
      <Sessions
        workspaceName="proj"
        workspacePath="/home/u/proj"
        sessions={[]}
        boards={boards}
        activeId={null}
        busy={false}
        anyLive={false}
        lang="en"
        focusSearch={focusSearch}
        onSearchFocused={() => focused++}
        onNew={() => undefined}
        onOpen={(id) => opened.push(id)}
        onRename={() => undefined}
        onDelete={() => undefined}
        onCloseWorkspace={() => undefined}
        onNewWorktree={() => Promise.resolve(true)}
        onMoveToWorktree={null}
        onReview={() => undefined}
      />,
    ),
  );
}

const q = (sel: string) => host.querySelector(sel);
const rowIds = (sel = "[data-testid=session-item]") => [...host.querySelectorAll<HTMLElement>(sel)].map((e) => e.dataset.sessionId);
const field = () => q("[data-testid=session-search]") as HTMLInputElement;

function type(text: string) {
  const input = field();
  act(() => {
    const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
    set?.call(input, text);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}
const key = (k: string) =>
  act(() => {
    field().dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  });

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.parse("2026-12-05T12:00:00Z"));
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
  boards = new BoardStore();
  opened = [];
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.useRealTimers();
});

describe("the sessions board", () => {
  const twenty = () =>
    Array.from({ length: 20 }, (_, i) =>
      row(`s${i}`, i === 4 ? "Refactor the parser" : `Fix the failing test number ${i}`, `2026-12-05T${String(i % 12).padStart(2, "0")}:${String(i).padStart(2, "0")}:00Z`, {
        activity: i === 2 ? { state: "running" } : i === 9 ? { state: "approval", waiting: 1 } : { state: "idle" },
      }),
    );

  it("pins running and waiting sessions first and lists the rest by last activity", () => {
    boards.receive(board(twenty()));
    render();
    expect(rowIds("[data-testid=pinned-sessions] [data-testid=session-item]").sort()).toEqual(["s2", "s9"]);
    const rest = rowIds("[data-testid=sessions-board] [data-testid=session-item]");
    expect(rest).toHaveLength(18);
    expect(rest.slice(0, 2)).toEqual(["s11", "s10"]);
    // The pinned group comes before the list in the page.
    const pinned = q("[data-testid=pinned-sessions]");
    const list = q("[data-testid=sessions-board]");
    expect(pinned !== null && list !== null && pinned.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(q("[data-testid=board-scope]")?.textContent).toContain("another state folder");
  });

  it("finds a session by three characters of its name and opens it with Enter", () => {
    boards.receive(board(twenty()));
    render();
    type("ref");
    expect(rowIds()).toEqual(["s4"]);
    key("Enter");
    expect(opened).toEqual(["s4"]);
    // Opening clears the search: the whole board is back.
    expect(field().value).toBe("");
    expect(rowIds()).toHaveLength(20);
  });

  it("walks the results with the arrow keys; Esc clears the search without reaching the app", () => {
    boards.receive(board(twenty()));
    render();
    type("fix");
    expect(q("[aria-selected=true]")?.getAttribute("data-session-id")).toBe(rowIds()[0]);
    key("ArrowDown");
    key("ArrowDown");
    key("ArrowUp");
    const second = rowIds()[1];
    expect(q("[aria-selected=true]")?.getAttribute("data-session-id")).toBe(second);
    key("Enter");
    expect(opened).toEqual([second]);
    type("zzz");
    expect(q("[data-testid=search-empty]")).not.toBeNull();
    const app = vi.fn();
    window.addEventListener("keydown", app);
    key("Escape");
    window.removeEventListener("keydown", app);
    expect(field().value).toBe("");
    expect(app).not.toHaveBeenCalled();
  });

  it("moves between rows with the arrow keys and opens one with Enter (its button)", () => {
    boards.receive(board(twenty()));
    render();
    const buttons = [...host.querySelectorAll<HTMLButtonElement>("[data-testid=session-open]")];
    buttons[0]?.focus();
    const press = (k: string) =>
      act(() => {
        document.activeElement?.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
      });
    press("ArrowDown");
    press("ArrowDown");
    press("ArrowUp");
    expect(document.activeElement).toBe(buttons[1]);
    press("ArrowUp");
    press("ArrowUp");
    expect(document.activeElement).toBe(buttons[0]);
  });

  it("takes the focus when asked (/ or Ctrl+K), and says it did", () => {
    boards.receive(board(twenty()));
    focused = 0;
    render(0);
    expect(document.activeElement).not.toBe(field());
    expect(focused).toBe(0);
    render(1);
    expect(document.activeElement).toBe(field());
    expect(focused).toBe(1);
  });

  it("updates relative times with the shared clock, and a new board without a rerender of the page", () => {
    boards.receive(board([row("a", "Alpha", "2026-12-05T11:59:00Z")]));
    render();
    expect(q("[data-testid=session-time]")?.textContent).toBe("1 minute ago");
    act(() => vi.advanceTimersByTime(TICK_MS * 4));
    expect(q("[data-testid=session-time]")?.textContent).toBe("3 minutes ago");
    act(() => boards.receive(board([row("cli", "From the CLI", "2026-12-05T12:01:00Z"), row("a", "Alpha", "2026-12-05T11:59:00Z")])));
    expect(rowIds()).toEqual(["cli", "a"]);
  });

  it("words counts with the plural helper", () => {
    boards.receive(board([row("a", "Alpha", "2026-12-05T11:59:00Z", { turns: 1, changedFiles: 1 }), row("b", "Bravo", "2026-12-05T11:58:00Z", { turns: 2, changedFiles: 3 })]));
    render();
    const metas = [...host.querySelectorAll(".session-meta")].map((m) => m.textContent);
    expect(metas[0]).toContain("1 turn · 1 file changed");
    expect(metas[1]).toContain("2 turns · 3 files changed");
  });
});
