import { useState } from "react";
import type { RecentWorkspace } from "../bindings/app/RecentWorkspace";
import type { SettingsView } from "../bindings/app/SettingsView";
import { useT } from "../i18n";
import { SetupCard, setupComplete } from "./Connection";
import { relativeTime } from "../board";
import { useNow } from "../store";
import { StoneMark } from "./StoneMark";

type Props = {
  recent: RecentWorkspace[];
  error: string | null;
  /** A folder the refusal offers to open instead (a git directory's work tree). */
  openInstead?: string | null;
  opening: boolean;
  stateDir: string;
  lang: string;
  onPick: () => void;
  onOpen: (path: string) => void;
  onForget: (path: string) => void;
  /** The settings (none on the splash screen, before the backend answered). */
  settings?: SettingsView;
  onSettings?: (s: SettingsView) => void;
  onOpenSettings?: () => void;
};

function FolderIcon() {
  return (
    <svg className="folder-glyph" width="15" height="15" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M1.5 3.5a1 1 0 0 1 1-1h3.6l1.6 1.6h5.8a1 1 0 0 1 1 1v7.4a1 1 0 0 1-1 1h-11a1 1 0 0 1-1-1z" fill="currentColor" opacity="0.85" />
    </svg>
  );
}

/** The last part of a path (`/home/me/repo` → `repo`). */
function folderName(path: string): string {
  const last = path.split("/").filter((s) => s !== "").pop();
  return last ?? path;
}

/** The start screen: "Open folder…" (native picker) and recent workspaces. */
export function Welcome(p: Props) {
  const t = useT();
  // Times tick with the app's one clock.
  const now = useNow();
  const [changing, setChanging] = useState(false);
  const settings = p.settings;
  return (
    <main className="welcome" data-testid="welcome">
      <div className="welcome-card">
        <StoneMark size={64} />
        <h1>{t("welcome.title")}</h1>
        <p className="welcome-lead">{t("welcome.lead")}</p>
        <button type="button" className="btn btn-primary btn-large" data-testid="open-folder" onClick={p.onPick} disabled={p.opening}>
          {t("welcome.open")}
        </button>
        <span className="kbd-hint">Ctrl+O</span>
        {settings === undefined ? null : !setupComplete(settings) || changing ? (
          <SetupCard
            settings={settings}
            onChanged={(s) => {
              setChanging(false);
              p.onSettings?.(s);
            }}
          />
        ) : (
          <div className="setup-summary" data-testid="setup-summary">
            <span>
              {t("setup.using")} <code>{settings.model}</code> · {settings.providers.find((x) => x.id === settings.provider)?.label ?? settings.provider}
            </span>
            <button type="button" className="link-button" data-testid="setup-change" onClick={() => setChanging(true)}>
              {t("setup.change")}
            </button>
            <button type="button" className="link-button" data-testid="welcome-settings" onClick={p.onOpenSettings}>
              {t("header.settings")}
            </button>
          </div>
        )}
        {p.error !== null && (
          <div className="welcome-error" role="alert" data-testid="workspace-error">
            <strong>{t("welcome.refused")}</strong>
            <div>{p.error}</div>
            {p.openInstead != null && (
              <button
                type="button"
                className="btn btn-primary"
                data-testid="open-instead"
                data-path={p.openInstead}
                disabled={p.opening}
                onClick={() => p.onOpen(p.openInstead as string)}
              >
                {t("welcome.openInstead").replace("{name}", folderName(p.openInstead))}
              </button>
            )}
          </div>
        )}
        <section className="recent">
          <h2 className="sidebar-title">{t("welcome.recent")}</h2>
          {p.recent.length === 0 ? (
            <p className="sidebar-empty">{t("welcome.noRecent")}</p>
          ) : (
            <ul className="recent-list">
              {p.recent.map((r) => (
                <li key={r.path} className={`recent-item ${r.available ? "" : "recent-missing"}`}>
                  <button
                    type="button"
                    className="recent-open"
                    data-testid="recent-workspace"
                    data-path={r.path}
                    disabled={!r.available || p.opening}
                    onClick={() => p.onOpen(r.path)}
                  >
                    <span className="recent-name">
                      <FolderIcon /> {r.name}
                      {!r.available && <span className="tag">{t("welcome.missing")}</span>}
                    </span>
                    <span className="recent-path">{r.path}</span>
                  </button>
                  <span className="recent-time">{relativeTime(r.openedAt, p.lang, now)}</span>
                  <button
                    type="button"
                    className="icon-button"
                    data-tip={t("welcome.forget")}
                    aria-label={t("welcome.forget")}
                    onClick={() => p.onForget(r.path)}
                  >
                    ×
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
        <p className="welcome-foot">
          {t("welcome.stateDir")} <code>{p.stateDir}</code>
        </p>
      </div>
    </main>
  );
}
