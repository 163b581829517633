import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { BoardRow } from "../bindings/app/BoardRow";
import type { SessionEntry } from "../bindings/app/SessionEntry";
import type { WorktreeView } from "../bindings/app/WorktreeView";
import type { Progress } from "../bindings/Progress";
import { dollars } from "./Meter";
import { activityLabel, arrange, isLive, relativeTime, search, type BoardStore } from "../board";
import { plural, useT } from "../i18n";
import { useNow, useStore } from "../store";
import { Icon } from "./Icons";
import { NewWorktree } from "./NewWorktree";

export { activityLabel, isLive, relativeTime } from "../board";

/** Board rows from the saved list alone (before the first board arrives). */
function rowsOf(sessions: SessionEntry[]): BoardRow[] {
  return sessions.map((s) => ({
    id: s.id,
    name: s.name,
    updatedAt: s.updatedAt,
    turns: s.turns,
    model: s.model,
    activity: { state: "idle" },
    changedFiles: null,
    worktree: null,
    worktreeRemoved: false,
    open: false,
    costUsd: null,
    tokens: null,
    firstPrompt: "",
  }));
}

type Props = {
  /** Shown over the chat (a narrow window) rather than beside it. */
  drawer?: boolean;
  workspaceName: string;
  workspacePath: string;
  sessions: SessionEntry[];
  /** The live board (every session with its state, the worktrees), fed by the board channel. */
  boards: BoardStore;
  activeId: string | null;
  /** The shown session runs (its delete is disabled). */
  busy: boolean;
  /** Some session of the window runs or waits (the workspace cannot close). */
  anyLive: boolean;
  lang: string;
  /** Above 0: the search field should take the focus (`/`, Ctrl+K). */
  focusSearch: number;
  /** The search field took the focus. */
  onSearchFocused: () => void;
  onNew: () => void;
  onOpen: (id: string) => void;
  onRename: (id: string, name: string) => void;
  onDelete: (id: string) => void;
  onCloseWorkspace: () => void;
  /** Creates (or reuses) a worktree and starts a session in it; progress of a slow creation. */
  onNewWorktree: (name: string, carry: boolean, onProgress: (p: Progress) => void) => Promise<boolean>;
  /** Moves the shown folder chat into worktree NAME with its history (null: nothing to move). */
  onMoveToWorktree: ((name: string) => Promise<boolean>) | null;
  /** Opens the review of a worktree. */
  onReview: (name: string) => void;
};

type RowProps = {
  row: BoardRow;
  active: boolean;
  /** The keyboard's current row (search results, arrows). */
  cursor: boolean;
  /** Its worktree's name when the row is not under that worktree's group (pinned, search). */
  place: string | null;
  /** An option of the search results' list box. */
  option: boolean;
  /** Its last activity (RFC 3339). */
  at: string;
  now: number;
  lang: string;
  busy: boolean;
  onOpen: (id: string) => void;
  onRename: (id: string, name: string) => void;
  onDelete: (id: string) => void;
};

/** One session of the board: state, name, badge, time or live state, counts; rename and delete. */
function SessionRow(p: RowProps) {
  const t = useT();
  const s = p.row;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [confirm, setConfirm] = useState(false);
  const live = isLive(s.activity);
  const cursor = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (p.cursor) cursor.current?.scrollIntoView?.({ block: "nearest" });
  }, [p.cursor]);
  return (
    <li
      ref={cursor}
      className={`session-item ${p.active ? "session-item-active" : ""} ${p.cursor ? "session-item-cursor" : ""}`}
      aria-current={p.active ? "true" : undefined}
      role={p.option ? "option" : undefined}
      aria-selected={p.option ? p.cursor : p.cursor ? "true" : undefined}
      data-testid="session-item"
      data-session-id={s.id}
      data-state={s.activity.state}
      data-worktree={s.worktree ?? undefined}
      data-worktree-removed={s.worktreeRemoved ? "true" : undefined}
    >
      {editing ? (
        <input
          className="input session-rename"
          data-testid="session-rename-input"
          autoFocus
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={() => setEditing(false)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && draft.trim() !== "") {
              p.onRename(s.id, draft.trim());
              setEditing(false);
            } else if (e.key === "Escape") {
              e.stopPropagation();
              setEditing(false);
            }
          }}
        />
      ) : (
        <button
          type="button"
          className="session-open"
          data-testid="session-open"
          onClick={() => p.onOpen(s.id)}
          onDoubleClick={() => {
            setDraft(s.name);
            setEditing(true);
          }}
        >
          <span className="session-name">
            <span className={`session-state session-state-${s.activity.state}`} data-testid="session-state" data-tip={t(activityLabel(s.activity))} aria-hidden="true" />
            <span className="session-name-text" data-tip={s.firstPrompt !== "" ? s.firstPrompt : s.name === "" ? undefined : s.name}>
              {s.name === "" ? t("sidebar.untitled") : s.name}
            </span>
            {!p.active && (s.activity.state === "approval" || s.activity.state === "answer") && (
              // Part of the row's button: clicking it opens the session at its request.
              <span className="session-badge" data-testid="session-badge" data-tip={t(activityLabel(s.activity))}>
                {s.activity.state === "approval" ? s.activity.waiting : "?"}
              </span>
            )}
          </span>
          <span className="session-meta">
            {live ? (
              t(activityLabel(s.activity))
            ) : (
              <span data-testid="session-time" data-at={p.at}>
                {relativeTime(p.at, p.lang, p.now)}
              </span>
            )}
            {s.activity.state === "queued" && ` (${s.activity.running}/${s.activity.limit})`}
            {" · "}
            {plural(t, s.turns, "count.turn")}
            {s.changedFiles !== null && s.changedFiles > 0 && (
              <span data-testid="session-files">
                {" · "}
                {plural(t, s.changedFiles, "count.fileChanged")}
              </span>
            )}
            {s.costUsd !== null && s.costUsd > 0 && (
              <span data-testid="session-cost" data-cost={s.costUsd}>
                {" · "}
                {dollars(s.costUsd)}
              </span>
            )}
            {s.worktreeRemoved ? (
              <span className="session-worktree" data-testid="session-worktree-removed" data-tip={t("wt.removedTip").replace("{name}", s.worktree ?? "")}>
                {" · ⎇ "}
                {s.worktree} · {t("wt.removedMark")}
              </span>
            ) : (
              p.place !== null && <span className="session-worktree"> · ⎇ {p.place}</span>
            )}
          </span>
        </button>
      )}
      {!editing && (
        <span className="session-actions">
          <button
            type="button"
            className="icon-button"
            data-tip={t("sidebar.rename")}
            aria-label={t("sidebar.rename")}
            data-testid="session-rename"
            onClick={() => {
              setDraft(s.name);
              setEditing(true);
            }}
          >
            ✎
          </button>
          <button
            type="button"
            className="icon-button"
            data-tip={t("sidebar.delete")}
            aria-label={t("sidebar.delete")}
            data-testid="session-delete"
            disabled={live || (p.busy && p.active)}
            onClick={() => setConfirm(true)}
          >
            <Icon name="trash" />
          </button>
        </span>
      )}
      {confirm && (
        <div className="confirm-row" role="alertdialog">
          <span>{t("sidebar.confirmDelete")}</span>
          <button
            type="button"
            className="btn btn-danger btn-small"
            data-testid="session-delete-confirm"
            onClick={() => {
              setConfirm(false);
              p.onDelete(s.id);
            }}
          >
            {t("sidebar.delete")}
          </button>
          <button type="button" className="btn btn-small" onClick={() => setConfirm(false)}>
            {t("settings.close")}
          </button>
        </div>
      )}
    </li>
  );
}

/** A worktree's head on the board: its name, counts and Review. */
function WorktreeHead({ w, onReview }: { w: WorktreeView; onReview: (name: string) => void }) {
  const t = useT();
  return (
    <div className="worktree-head" data-tip={w.path}>
      <span className="worktree-name">⎇ {w.name}</span>
      {w.broken !== null && (
        <span className="session-badge" data-testid="worktree-broken" data-tip={w.broken}>
          {t("wt.broken")}
        </span>
      )}
      <span className="session-meta" data-testid="worktree-counts">
        <span data-testid="worktree-changed" data-count={w.changedFiles}>
          {w.changedFiles} {t("wt.changed")}
        </span>
        {" · "}
        <span data-testid="worktree-unapplied" data-count={w.unappliedFiles}>
          {w.unappliedFiles} {t("wt.unapplied")}
        </span>
        {w.commitsAhead > 0 && ` · ${plural(t, w.commitsAhead, "count.commit")}`}
      </span>
      <button type="button" className="btn btn-small" data-testid="worktree-review" onClick={() => onReview(w.name)}>
        {t("wt.review")}
      </button>
    </div>
  );
}

/**
 * The sessions board: every session of the workspace with its live state (running, queued,
 * waiting for an approval or an answer, idle, error) and changed files. Running and waiting
 * sessions are pinned on top; the others follow by last activity (the agent's or the
 * user's message, never a mere look), worktree sessions grouped under their worktree. A
 * search field (`/`, Ctrl+K) finds sessions by name, worktree, branch, workspace or model;
 * arrows and Enter open one. Switching never stops a running session.
 */
export function Sessions(p: Props) {
  const t = useT();
  const state = useStore(p.boards);
  const now = useNow();
  const [query, setQuery] = useState("");
  const [cursor, setCursor] = useState(-1);
  const searchField = useRef<HTMLInputElement>(null);
  const onSearchFocused = p.onSearchFocused;
  useEffect(() => {
    if (p.focusSearch > 0 && searchField.current !== null) {
      searchField.current.focus();
      searchField.current.select();
      onSearchFocused();
    }
  }, [p.focusSearch, onSearchFocused]);
  const rows = useMemo(() => state.view?.rows ?? rowsOf(p.sessions), [state.view, p.sessions]);
  const worktrees = useMemo(() => state.view?.worktrees ?? [], [state.view]);
  const arranged = useMemo(() => arrange(state, rows, worktrees), [state, rows, worktrees]);
  const searching = query.trim() !== "";
  const found = useMemo(
    () => (searching ? search(state, rows, worktrees, p.workspaceName, query) : []),
    [searching, state, rows, worktrees, p.workspaceName, query],
  );
  const walk = searching ? found : arranged.order;
  const cursorId = cursor >= 0 ? (walk[cursor]?.id ?? null) : null;
  const open = (id: string) => {
    setQuery("");
    setCursor(-1);
    p.onOpen(id);
  };
  const onSearchKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.nativeEvent.isComposing) return;
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setCursor((c) => Math.min(c + 1, walk.length - 1));
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setCursor((c) => Math.max(c - 1, 0));
    } else if (e.key === "Enter") {
      e.preventDefault();
      const pick = walk[cursor >= 0 ? cursor : 0];
      if (pick !== undefined && (searching || cursor >= 0)) open(pick.id);
    } else if (e.key === "Escape") {
      // Not the app's Esc (stop the turn): the search is what the user is in.
      e.stopPropagation();
      if (query !== "" || cursor >= 0) {
        setQuery("");
        setCursor(-1);
      } else searchField.current?.blur();
    }
  };
  const place = (r: BoardRow) => (r.worktree !== null ? r.worktree : null);
  const renderRow = (r: BoardRow, shownPlace: string | null, option = false) => (
    <SessionRow
      key={r.id}
      row={r}
      active={r.id === p.activeId}
      cursor={r.id === cursorId}
      place={shownPlace}
      option={option}
      at={state.lastActivity[r.id] ?? r.updatedAt}
      now={now}
      lang={p.lang}
      busy={p.busy}
      onOpen={open}
      onRename={p.onRename}
      onDelete={p.onDelete}
    />
  );
  const empty = rows.length === 0 && worktrees.length === 0;
  return (
    <nav
      className={`sidebar ${p.drawer ? "drawer drawer-left" : ""}`}
      aria-label={t("sidebar.sessions")}
      data-testid="sidebar"
      onKeyDown={(e) => {
        // Up and Down move between the rows (Tab still walks every control).
        if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
        const from = (e.target as HTMLElement).closest("[data-testid=session-open]");
        if (from === null) return;
        const all = [...e.currentTarget.querySelectorAll<HTMLElement>("[data-testid=session-open]")];
        const next = all[all.indexOf(from as HTMLElement) + (e.key === "ArrowDown" ? 1 : -1)];
        if (next === undefined) return;
        e.preventDefault();
        next.focus();
      }}
    >
      <div className="workspace-card" data-tip={p.workspacePath}>
        <div className="workspace-name" data-testid="workspace-name">{p.workspaceName}</div>
        <div className="workspace-path">{p.workspacePath}</div>
        <button type="button" className="link-button" data-testid="close-workspace" onClick={p.onCloseWorkspace} disabled={p.anyLive}>
          {t("sidebar.closeWorkspace")}
        </button>
      </div>
      <button type="button" className="btn btn-new" data-testid="new-chat" onClick={p.onNew}>
        + {t("sidebar.newChat")}
      </button>
      {!empty && (
        <input
          ref={searchField}
          type="search"
          className="input session-search"
          data-testid="session-search"
          aria-label={t("board.search")}
          placeholder={t("board.searchHint")}
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setCursor(e.target.value.trim() === "" ? -1 : 0);
          }}
          onKeyDown={onSearchKey}
        />
      )}
      {empty ? (
        <p className="sidebar-empty">{t("sidebar.noSessions")}</p>
      ) : searching ? (
        found.length === 0 ? (
          <p className="sidebar-empty" data-testid="search-empty">
            {t("board.noMatch")}
          </p>
        ) : (
          <ul className="session-list" data-testid="search-results" role="listbox" aria-label={t("board.search")}>
            {found.map((r) => renderRow(r, place(r), true))}
          </ul>
        )
      ) : (
        <>
          {arranged.pinned.length > 0 && (
            <section className="pinned-group" data-testid="pinned-sessions" aria-label={t("board.pinned")}>
              <h2 className="sidebar-title">{t("board.pinned")}</h2>
              <ul className="session-list">{arranged.pinned.map((r) => renderRow(r, place(r)))}</ul>
            </section>
          )}
          <h2 className="sidebar-title">{t("sidebar.sessions")}</h2>
          <ul className="session-list" data-testid="sessions-board">
            {arranged.entries.map((e) =>
              e.kind === "session" ? (
                renderRow(e.row, null)
              ) : (
                <li key={`wt:${e.worktree.name}`} className="worktree-entry">
                  <section className="worktree-group" data-testid="worktree-group" data-worktree={e.worktree.name}>
                    <WorktreeHead w={e.worktree} onReview={p.onReview} />
                    {e.rows.length === 0 ? (
                      !arranged.pinned.some((r) => r.worktree === e.worktree.name) && <p className="sidebar-empty">{t("wt.noSessions")}</p>
                    ) : (
                      <ul className="session-list">{e.rows.map((r) => renderRow(r, null))}</ul>
                    )}
                  </section>
                </li>
              ),
            )}
          </ul>
        </>
      )}
      <NewWorktree unavailable={state.view?.worktreesUnavailable ?? null} onCreate={p.onNewWorktree} onMove={p.onMoveToWorktree} />
      <p className="sidebar-note" data-testid="board-scope">
        {t("board.scope")}
      </p>
    </nav>
  );
}
