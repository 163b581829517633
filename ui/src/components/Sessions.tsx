import { useState } from "react";
import type { BoardRow } from "../bindings/app/BoardRow";
import type { SessionActivity } from "../bindings/app/SessionActivity";
import type { SessionEntry } from "../bindings/app/SessionEntry";
import type { WorktreeView } from "../bindings/app/WorktreeView";
import type { Progress } from "../bindings/Progress";
import { useT, type MessageKey } from "../i18n";
import { Icon } from "./Icons";
import { formatDate, relativeTimeFormat } from "../format";

/** "3 min ago" style time, in the UI language. */
export function relativeTime(iso: string, lang: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const secs = Math.round((then - Date.now()) / 1000);
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

/** Whether closing the session now would stop something. */
export function isLive(a: SessionActivity): boolean {
  return a.state !== "idle" && a.state !== "error";
}

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
    open: false,
    costUsd: null,
    tokens: null,
  }));
}

type Props = {
  /** Shown over the chat (a narrow window) rather than beside it. */
  drawer?: boolean;
  workspaceName: string;
  workspacePath: string;
  sessions: SessionEntry[];
  /** The live board (every session with its state); `null` until it arrives. */
  board: BoardRow[] | null;
  activeId: string | null;
  /** The shown session runs (its delete is disabled). */
  busy: boolean;
  /** Some session of the window runs or waits (the workspace cannot close). */
  anyLive: boolean;
  lang: string;
  onNew: () => void;
  onOpen: (id: string) => void;
  onRename: (id: string, name: string) => void;
  onDelete: (id: string) => void;
  onCloseWorkspace: () => void;
  /** The workspace's git worktrees (their sessions are the rows naming them). */
  worktrees: WorktreeView[];
  /** Why the workspace cannot have worktrees (not a git repository), else null. */
  worktreesUnavailable: string | null;
  /** Creates (or reuses) a worktree and starts a session in it; progress of a slow creation. */
  onNewWorktree: (name: string, carry: boolean, onProgress: (p: Progress) => void) => Promise<boolean>;
  /** Moves the shown folder chat into worktree NAME with its history (null: nothing to move). */
  onMoveToWorktree: ((name: string) => Promise<boolean>) | null;
  /** Opens the review of a worktree. */
  onReview: (name: string) => void;
};

/** "New worktree session": a name, "carry my uncommitted changes", progress while it is made. */
function NewWorktree({
  unavailable,
  onCreate,
  onMove,
}: {
  unavailable: string | null;
  onCreate: Props["onNewWorktree"];
  onMove: Props["onMoveToWorktree"];
}) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [carry, setCarry] = useState(false);
  const [move, setMove] = useState(false);
  const [working, setWorking] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const create = () => {
    if (name.trim() === "" || working) return;
    setWorking(true);
    setProgress(null);
    const made = move && onMove !== null ? onMove(name.trim()) : onCreate(name.trim(), carry, setProgress);
    made.then((ok) => {
      setWorking(false);
      setProgress(null);
      if (ok) {
        setOpen(false);
        setName("");
        setCarry(false);
        setMove(false);
      }
    }, () => setWorking(false));
  };
  if (!open) {
    return (
      <>
        <button type="button" className="btn btn-new btn-worktree" data-testid="new-worktree" disabled={unavailable !== null} data-tip={unavailable ?? undefined} onClick={() => setOpen(true)}>
          + {t("wt.new")}
        </button>
        {unavailable !== null && (
          <p className="sidebar-empty" data-testid="worktrees-unavailable">
            {unavailable}
          </p>
        )}
      </>
    );
  }
  return (
    <form
      className="worktree-form"
      data-testid="worktree-form"
      onSubmit={(e) => {
        e.preventDefault();
        create();
      }}
    >
      <input className="input" data-testid="worktree-name" aria-label={t("wt.name")} placeholder={t("wt.name")} autoFocus value={name} disabled={working} onChange={(e) => setName(e.target.value)} />
      <label className="worktree-carry">
        <input type="checkbox" data-testid="worktree-carry" checked={carry || move} disabled={working || move} onChange={(e) => setCarry(e.target.checked)} /> {t("wt.carry")}
      </label>
      {onMove !== null && (
        <label className="worktree-carry">
          <input type="checkbox" data-testid="worktree-move" checked={move} disabled={working} onChange={(e) => setMove(e.target.checked)} /> {t("wt.handoffHere")}
        </label>
      )}
      {working && (
        <p className="worktree-progress" role="status" data-testid="worktree-progress">
          {progress === null ? t("wt.creating") : `${t("wt.progress")} ${progress.done}${progress.total !== null ? ` / ${progress.total}` : ""}`}
          {progress !== null && progress.total !== null && progress.total > 0 && <progress max={progress.total} value={progress.done} />}
        </p>
      )}
      <span className="worktree-form-actions">
        <button type="submit" className="btn btn-small btn-primary" data-testid="worktree-create" disabled={working || name.trim() === ""}>
          {t("wt.create")}
        </button>
        <button type="button" className="btn btn-small" disabled={working} onClick={() => setOpen(false)}>
          {t("wt.cancel")}
        </button>
      </span>
    </form>
  );
}

/**
 * The sessions board: every session of the workspace with its live state (running, queued,
 * waiting for an approval or an answer, idle, error) and changed files; open, rename, delete.
 * Switching never stops a running session.
 */
export function Sessions(p: Props) {
  const t = useT();
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [confirm, setConfirm] = useState<string | null>(null);
  const rows = p.board ?? rowsOf(p.sessions);
  const worktreeNames = new Set(p.worktrees.map((w) => w.name));
  // Sessions of a worktree show under it; the rest are the folder's.
  const folderRows = rows.filter((r) => r.worktree === null || !worktreeNames.has(r.worktree));
  const renderRow = (s: BoardRow) => {
            const active = s.id === p.activeId;
            const live = isLive(s.activity);
            return (
              <li
                key={s.id}
                className={`session-item ${active ? "session-item-active" : ""}`}
                aria-current={active ? "true" : undefined}
                data-testid="session-item"
                data-session-id={s.id}
                data-state={s.activity.state}
              >
                {editing === s.id ? (
                  <input
                    className="input session-rename"
                    data-testid="session-rename-input"
                    autoFocus
                    value={draft}
                    onChange={(e) => setDraft(e.target.value)}
                    onBlur={() => setEditing(null)}
                    onKeyDown={(e) => {
                      if (e.key === "Enter" && draft.trim() !== "") {
                        p.onRename(s.id, draft.trim());
                        setEditing(null);
                      } else if (e.key === "Escape") {
                        e.stopPropagation();
                        setEditing(null);
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
                      setEditing(s.id);
                    }}
                  >
                    <span className="session-name">
                      <span className={`session-state session-state-${s.activity.state}`} data-testid="session-state" data-tip={t(activityLabel(s.activity))} aria-hidden="true" />
                      <span className="session-name-text">{s.name === "" ? t("sidebar.untitled") : s.name}</span>
                      {!active && (s.activity.state === "approval" || s.activity.state === "answer") && (
                        // Part of the row's button: clicking it opens the session at its request.
                        <span className="session-badge" data-testid="session-badge" data-tip={t(activityLabel(s.activity))}>
                          {s.activity.state === "approval" ? s.activity.waiting : "?"}
                        </span>
                      )}
                    </span>
                    <span className="session-meta">
                      {live ? t(activityLabel(s.activity)) : relativeTime(s.updatedAt, p.lang)}
                      {s.activity.state === "queued" && ` (${s.activity.running}/${s.activity.limit})`}
                      {" · "}
                      {s.turns} {t(s.turns === 1 ? "sidebar.turn" : "sidebar.turns")}
                      {s.changedFiles !== null && s.changedFiles > 0 && (
                        <span data-testid="session-files">
                          {" · "}
                          {s.changedFiles} {t(s.changedFiles === 1 ? "board.file" : "board.files")}
                        </span>
                      )}
                      {s.worktree !== null && !worktreeNames.has(s.worktree) && <span className="session-worktree"> · {s.worktree}</span>}
                    </span>
                  </button>
                )}
                {editing !== s.id && (
                  <span className="session-actions">
                    <button
                      type="button"
                      className="icon-button"
                      data-tip={t("sidebar.rename")}
                      aria-label={t("sidebar.rename")}
                      data-testid="session-rename"
                      onClick={() => {
                        setDraft(s.name);
                        setEditing(s.id);
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
                      disabled={live || (p.busy && active)}
                      onClick={() => setConfirm(s.id)}
                    >
                      <Icon name="trash" />
                    </button>
                  </span>
                )}
                {confirm === s.id && (
                  <div className="confirm-row" role="alertdialog">
                    <span>{t("sidebar.confirmDelete")}</span>
                    <button
                      type="button"
                      className="btn btn-danger btn-small"
                      data-testid="session-delete-confirm"
                      onClick={() => {
                        setConfirm(null);
                        p.onDelete(s.id);
                      }}
                    >
                      {t("sidebar.delete")}
                    </button>
                    <button type="button" className="btn btn-small" onClick={() => setConfirm(null)}>
                      {t("settings.close")}
                    </button>
                  </div>
                )}
              </li>
            );
  };
  return (
    <nav className={`sidebar ${p.drawer ? "drawer drawer-left" : ""}`} aria-label={t("sidebar.sessions")} data-testid="sidebar">
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
      <h2 className="sidebar-title">{t("sidebar.sessions")}</h2>
      {folderRows.length === 0 && p.worktrees.length === 0 ? (
        <p className="sidebar-empty">{t("sidebar.noSessions")}</p>
      ) : (
        <ul className="session-list" data-testid="sessions-board">
          {folderRows.map(renderRow)}
        </ul>
      )}
      <NewWorktree unavailable={p.worktreesUnavailable} onCreate={p.onNewWorktree} onMove={p.onMoveToWorktree} />
      {p.worktrees.length > 0 && (
        <>
          <h2 className="sidebar-title">{t("wt.title")}</h2>
          {p.worktrees.map((w) => {
            const mine = rows.filter((r) => r.worktree === w.name);
            return (
              <section key={w.name} className="worktree-group" data-testid="worktree-group" data-worktree={w.name}>
                <div className="worktree-head" data-tip={w.path}>
                  <span className="worktree-name">{w.name}</span>
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
                    {w.commitsAhead > 0 && ` · ${w.commitsAhead} ${t("wt.ahead")}`}
                  </span>
                  <button type="button" className="btn btn-small" data-testid="worktree-review" onClick={() => p.onReview(w.name)}>
                    {t("wt.review")}
                  </button>
                </div>
                {mine.length === 0 ? (
                  <p className="sidebar-empty">{t("wt.noSessions")}</p>
                ) : (
                  <ul className="session-list">{mine.map(renderRow)}</ul>
                )}
              </section>
            );
          })}
        </>
      )}
    </nav>
  );
}
