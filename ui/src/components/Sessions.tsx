import { useState } from "react";
import type { SessionEntry } from "../bindings/app/SessionEntry";
import { useT } from "../i18n";
import { Icon } from "./Icons";

/** "3 min ago" style time, in the UI language. */
export function relativeTime(iso: string, lang: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const secs = Math.round((then - Date.now()) / 1000);
  const rtf = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  const abs = Math.abs(secs);
  if (abs < 60) return rtf.format(secs, "second");
  if (abs < 3600) return rtf.format(Math.round(secs / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(secs / 3600), "hour");
  if (abs < 86400 * 30) return rtf.format(Math.round(secs / 86400), "day");
  return new Date(then).toLocaleDateString(lang);
}

type Props = {
  /** Shown over the chat (a narrow window) rather than beside it. */
  drawer?: boolean;
  workspaceName: string;
  workspacePath: string;
  sessions: SessionEntry[];
  activeId: string | null;
  busy: boolean;
  lang: string;
  onNew: () => void;
  onOpen: (id: string) => void;
  onRename: (id: string, name: string) => void;
  onDelete: (id: string) => void;
  onCloseWorkspace: () => void;
};

/** The sessions of the workspace: name, time and turns; resume, rename, delete. */
export function Sessions(p: Props) {
  const t = useT();
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [confirm, setConfirm] = useState<string | null>(null);
  return (
    <nav className={`sidebar ${p.drawer ? "drawer drawer-left" : ""}`} aria-label={t("sidebar.sessions")} data-testid="sidebar">
      <div className="workspace-card" title={p.workspacePath}>
        <div className="workspace-name" data-testid="workspace-name">{p.workspaceName}</div>
        <div className="workspace-path">{p.workspacePath}</div>
        <button type="button" className="link-button" data-testid="close-workspace" onClick={p.onCloseWorkspace} disabled={p.busy}>
          {t("sidebar.closeWorkspace")}
        </button>
      </div>
      <button type="button" className="btn btn-new" data-testid="new-chat" onClick={p.onNew} disabled={p.busy}>
        + {t("sidebar.newChat")}
      </button>
      <h2 className="sidebar-title">{t("sidebar.sessions")}</h2>
      {p.sessions.length === 0 ? (
        <p className="sidebar-empty">{t("sidebar.noSessions")}</p>
      ) : (
        <ul className="session-list">
          {p.sessions.map((s) => {
            const active = s.id === p.activeId;
            return (
              <li
                key={s.id}
                className={`session-item ${active ? "session-item-active" : ""}`}
                aria-current={active ? "true" : undefined}
                data-testid="session-item"
                data-session-id={s.id}
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
                    disabled={p.busy && !active}
                    onClick={() => p.onOpen(s.id)}
                    onDoubleClick={() => {
                      setDraft(s.name);
                      setEditing(s.id);
                    }}
                  >
                    <span className="session-name">{s.name === "" ? t("sidebar.untitled") : s.name}</span>
                    <span className="session-meta">
                      {relativeTime(s.updatedAt, p.lang)} · {s.turns} {t(s.turns === 1 ? "sidebar.turn" : "sidebar.turns")}
                    </span>
                  </button>
                )}
                {editing !== s.id && (
                  <span className="session-actions">
                    <button
                      type="button"
                      className="icon-button"
                      title={t("sidebar.rename")}
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
                      title={t("sidebar.delete")}
                      aria-label={t("sidebar.delete")}
                      data-testid="session-delete"
                      disabled={p.busy && active}
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
          })}
        </ul>
      )}
    </nav>
  );
}
