import { Suspense, lazy, useCallback, useEffect, useMemo, useState } from "react";
import type { Bootstrap } from "./bindings/app/Bootstrap";
import type { Language } from "./bindings/app/Language";
import type { RecentWorkspace } from "./bindings/app/RecentWorkspace";
import type { SettingsView } from "./bindings/app/SettingsView";
import type { WorkspaceView } from "./bindings/app/WorkspaceView";
import { Help } from "./components/Help";
import { BenchHarness } from "./components/BenchHarness";
import { Welcome } from "./components/Welcome";
import { Tips } from "./components/Tips";
import { I18nContext, translator } from "./i18n";
import * as ipc from "./ipc";

// Loaded on first use: the welcome screen (what an idle app shows) needs none of them, and
// the markdown, highlighting and transcript code they bring stays out of the start-up bundle.
// The workbench is loaded when a workspace opens and held in state, not behind React.lazy:
// React 19 holds a Suspense boundary's content back for up to 300 ms after its fallback.
type WorkbenchModule = typeof import("./components/Workbench");
const Settings = lazy(() => import("./components/Settings").then((m) => ({ default: m.Settings })));
const Usage = lazy(() => import("./components/Usage").then((m) => ({ default: m.Usage })));

type Overlay = "settings" | "usage" | "help" | null;
type Command = { name: "new" | "focus" | "stop" | "search"; at: number } | null;

/** The UI language last used, remembered by the page so the first paint is in it. */
function rememberedLanguage(): Language {
  try {
    const saved = localStorage.getItem("cairn.language");
    return saved === "zh" || saved === "zh-TW" || saved === "ja" || saved === "ko" || saved === "es" ? saved : "en";
  } catch {
    return "en";
  }
}

/** Painted at once, while the backend answers `bootstrap`: the welcome screen without its list. */
function Splash() {
  const language = rememberedLanguage();
  return (
    <I18nContext.Provider value={translator(language)}>
      <div className="app">
        <Welcome recent={[]} error={null} opening={true} stateDir="" lang={language} onPick={() => undefined} onOpen={() => undefined} onForget={() => undefined} />
      </div>
    </I18nContext.Provider>
  );
}

/** The app shell: the welcome screen or a workspace, plus settings, usage and help. */
export function App() {
  const [boot, setBoot] = useState<Bootstrap | null>(null);
  const [bootError, setBootError] = useState<string | null>(null);
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [recent, setRecent] = useState<RecentWorkspace[]>([]);
  const [workspace, setWorkspace] = useState<WorkspaceView | null>(null);
  const [openError, setOpenError] = useState<string | null>(null);
  const [openInstead, setOpenInstead] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const [overlay, setOverlay] = useState<Overlay>(null);
  const [settingsEpoch, setSettingsEpoch] = useState(0);
  const [command, setCommand] = useState<Command>(null);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [workbench, setWorkbench] = useState<WorkbenchModule | null>(null);

  useEffect(() => {
    if (workspace === null || workbench !== null) return;
    let live = true;
    import("./components/Workbench").then(
      (m) => {
        if (live) setWorkbench(m);
      },
      (e: unknown) => setBootError(`cannot load the workbench: ${ipc.describeError(e)}`),
    );
    return () => {
      live = false;
    };
  }, [workspace, workbench]);

  useEffect(() => {
    const asked = performance.timeOrigin + performance.now();
    ipc.bootstrap().then(
      (b) => {
        // Read by the start-up benchmark.
        (window as unknown as { __cairnBoot: number[] }).__cairnBoot = [asked, performance.timeOrigin + performance.now()];
        setBoot(b);
        setSettings(b.settings);
        setRecent(b.recent);
        setWorkspace(b.workspace);
        // Key states need the keyring: fetched after the first screen is up.
        if (!b.bench) ipc.getSettings().then(setSettings, () => undefined);
      },
      (e: unknown) => setBootError(ipc.describeError(e)),
    );
  }, []);

  const language = settings?.language ?? "en";
  const t = useMemo(() => translator(language), [language]);
  useEffect(() => {
    document.documentElement.lang = language === "zh" ? "zh-CN" : "en";
    try {
      localStorage.setItem("cairn.language", language);
    } catch {
      // Storage may be unavailable; the splash then starts in English.
    }
  }, [language]);

  const open = useCallback((path: string) => {
    setOpening(true);
    setOpenError(null);
    setOpenInstead(null);
    ipc.openWorkspace(path).then(
      (w) => {
        setOpening(false);
        setWorkspace(w);
        ipc.getSettings().then(setSettings, () => undefined);
      },
      (e: unknown) => {
        setOpening(false);
        setOpenError(ipc.describeError(e));
        setOpenInstead(ipc.openInsteadOf(e));
      },
    );
  }, []);

  const pick = useCallback(() => {
    setOpenError(null);
    setOpenInstead(null);
    ipc.pickFolder().then(
      (path) => {
        if (path !== null) open(path);
      },
      (e: unknown) => setOpenError(ipc.describeError(e)),
    );
  }, [open]);

  const closeWorkspace = useCallback(() => {
    ipc.closeWorkspace().then(
      (r) => {
        setRecent(r);
        setWorkspace(null);
        setSessionId(null);
      },
      (e: unknown) => setOpenError(ipc.describeError(e)),
    );
  }, []);

  const settingsChanged = useCallback((s: SettingsView) => {
    setSettings(s);
    setSettingsEpoch((n) => n + 1);
  }, []);

  // Keyboard-first: global shortcuts (Esc and Enter live in the composer and overlays).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (e.key === "Escape" && overlay === null) {
        setCommand({ name: "stop", at: Date.now() });
        return;
      }
      if (!mod) return;
      const key = e.key.toLowerCase();
      // Ctrl+Shift+N is File → New Window (the native menu's accelerator).
      if (key === "n" && e.shiftKey) return;
      const act = (f: () => void) => {
        e.preventDefault();
        f();
      };
      if (key === "/") act(() => setOverlay((o) => (o === "help" ? null : "help")));
      else if (key === ",") act(() => setOverlay("settings"));
      else if (key === "u") act(() => setOverlay("usage"));
      else if (key === "o" && workspace === null) act(pick);
      else if (key === "n" && workspace !== null) act(() => setCommand({ name: "new", at: Date.now() }));
      else if (key === "l" && workspace !== null) act(() => setCommand({ name: "focus", at: Date.now() }));
      else if (key === "k" && workspace !== null) act(() => setCommand({ name: "search", at: Date.now() }));
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [overlay, workspace, pick]);

  if (bootError !== null) {
    return (
      <div className="fatal" role="alert">
        Backend unavailable: {bootError}
      </div>
    );
  }
  if (boot === null || settings === null) return <Splash />;
  if (boot.bench) return <BenchHarness />;

  return (
    <I18nContext.Provider value={t}>
      <div className="app">
        {workspace === null ? (
          <Welcome
            recent={recent}
            error={openError}
            openInstead={openInstead}
            opening={opening}
            stateDir={boot.stateDir}
            lang={language}
            onPick={pick}
            onOpen={open}
            onForget={(path) => ipc.forgetWorkspace(path).then(setRecent, () => undefined)}
            settings={settings}
            onSettings={settingsChanged}
            onOpenSettings={() => setOverlay("settings")}
          />
        ) : workbench === null ? null : (
          <workbench.Workbench
            workspace={workspace}
            initialSession={boot.workspace !== null && boot.workspace.path === workspace.path ? boot.workspace.lastSession : null}
            settings={settings}
            onSession={setSessionId}
            approvals={boot.approvals}
            lang={language}
            onWorkspace={setWorkspace}
            onCloseWorkspace={closeWorkspace}
            onOpenSettings={() => setOverlay("settings")}
            onOpenUsage={() => setOverlay("usage")}
            onOpenHelp={() => setOverlay("help")}
            settingsEpoch={settingsEpoch}
            command={command}
          />
        )}
        <span className="app-version" data-testid="app-version" data-tip={`protocol v${boot.info.protocolVersion}`}>
          v{boot.info.version}
        </span>
        {overlay === "settings" && (
          <Suspense fallback={null}>
            <Settings
              settings={settings}
              hasSession={workspace !== null && sessionId !== null}
              stateDir={boot.stateDir}
              logDir={boot.logDir}
              onClose={() => setOverlay(null)}
              onChanged={settingsChanged}
            />
          </Suspense>
        )}
        {overlay === "usage" && (
          <Suspense fallback={null}>
            <Usage onClose={() => setOverlay(null)} lang={language} />
          </Suspense>
        )}
        {overlay === "help" && <Help onClose={() => setOverlay(null)} inWorkspace={workspace !== null} />}
        <Tips />
      </div>
    </I18nContext.Provider>
  );
}
