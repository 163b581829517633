import { Suspense, lazy, useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Mode } from "../bindings/Mode";
import type { ApprovalHost } from "../bindings/app/ApprovalHost";
import type { SessionView } from "../bindings/app/SessionView";
import type { SettingsView } from "../bindings/app/SettingsView";
import type { WorkspaceView } from "../bindings/app/WorkspaceView";
import { plural, useT } from "../i18n";
import { Icon } from "./Icons";
import { HeaderActions, type HeaderAction } from "./HeaderMenu";
import { usePanels } from "../hooks/usePanels";
import { useSessionSearch } from "../hooks/useSessionSearch";
import { useTerminal } from "../hooks/useTerminal";
import * as ipc from "../ipc";
import { emptyChat, latestPlan } from "../transcript";
import { ChatStore, type Action } from "../chats";
import type { PendingImage } from "./Attachments";
import { Composer, toUpload, type ComposerDraft } from "./Composer";
import { FilesPanel } from "./FilesPanel";
import { LinkContext } from "./Markdown";
import { useLinks } from "../hooks/useLinks";
import { useStartBatch } from "../hooks/useStartBatch";
import { useAnswers } from "../hooks/useAnswers";
import { Meter } from "./Meter";
import { ModeSwitcher } from "./ModeSwitcher";
import { Sessions } from "./Sessions";
import { isLive } from "../board";
import { preBlocked } from "../blocked";
import { useBoard } from "../hooks/useBoard";
import { useStoreSelect } from "../store";
import { SidePanel } from "./SidePanel";
// xterm.js is loaded with the panel, not at start.
const TerminalPanel = lazy(() => import("./TerminalPanel").then((m) => ({ default: m.TerminalPanel })));
import { RewoundPanel } from "./Rewind";
import { ChangesPanel, useTimeline } from "./Timeline";
import { TimelineList } from "./TimelineList";
import { Transcript, type TranscriptActions } from "./Transcript";
import { WorktreeReview } from "./WorktreeReview";
import type { Progress } from "../bindings/Progress";
import { sandboxLabel, sandboxTip, sandboxWarns } from "../sandbox";
import { describeOutcome } from "../commandOutcome";
import { SkippedBanner } from "./SkippedBanner";

type Props = {
  workspace: WorkspaceView;
  /** The session to show at once (the one open when the app last stopped). */
  initialSession?: string | null;
  settings: SettingsView;
  onSession: (id: string | null) => void;
  approvals: ApprovalHost;
  lang: string;
  onWorkspace: (w: WorkspaceView) => void;
  onCloseWorkspace: () => void;
  onOpenSettings: () => void;
  onOpenUsage: () => void;
  onOpenHelp: () => void;
  /** Bumped by the app after a settings or key change: refresh the session's state. */
  settingsEpoch: number;
  /** Set by the app's shortcuts. */
  command: { name: "new" | "focus" | "stop" | "search"; at: number } | null;
};

/** The workspace view: sessions, chat, todo and plan panels. */
export function Workbench(p: Props) {
  const t = useT();
  const [session, setSession] = useState<SessionView | null>(null);
  // Every open session's transcript, outside React, fed by the sessions' event channels.
  const [store] = useState(() => new ChatStore());
  useEffect(() => () => store.dispose(), [store]);
  // Only the shown session's part: the sessions streaming in the background fold into their
  // own transcripts without rendering the workbench at each frame.
  const shownId = session?.id ?? "";
  const chat = useStoreSelect(store, (s) => s.chats[shownId] ?? emptyChat);
  const pending = useStoreSelect(store, (s) => s.inFlight[shownId] === true);
  const setPendingOf = useCallback((id: string, on: boolean) => store.setPending(id, on), [store]);
  const dispatchTo = useCallback((keyed: { id: string; action: Action }) => store.dispatch(keyed.id, keyed.action), [store]);
  // Counts the user's prompts: each one brings the transcript down to it.
  const [sent, setSent] = useState(0);
  // The mode picked before the first message (the session is created when it is sent).
  const [firstMode, setFirstMode] = useState<Mode>("interactive");
  const firstModeRef = useRef(firstMode);
  firstModeRef.current = firstMode;
  const composer = useRef<HTMLTextAreaElement>(null);
  const sessionRef = useRef<SessionView | null>(null);
  sessionRef.current = session;
  const steeringRef = useRef(chat.steering);
  steeringRef.current = chat.steering;
  // Actions on the shown session's transcript.
  const dispatch = useCallback((action: Action) => dispatchTo({ id: sessionRef.current?.id ?? "", action }), [dispatchTo]);

  const eventsOf = useCallback((id: string) => store.eventsOf(id), [store]);

  // A failure that a setting fixes (no key, no model) offers Settings on its notice.
  const fail = useCallback(
    (e: unknown) =>
      dispatch({ type: "notice", text: ipc.describeError(e), action: ipc.errorAction(e) === "open_settings" ? "settings" : undefined }),
    [dispatch],
  );
  // Set once `show` exists: a conversation rewind rebuilds the transcript from its view.
  const showRewound = useRef<(view: SessionView) => void>(() => undefined);
  const timeline = useTimeline(session?.id ?? null, fail, (view) => showRewound.current(view));
  const terminal = useTerminal(composer);
  // The worktree whose review is open.
  const [reviewing, setReviewing] = useState<string | null>(null);
  // The files panel (shown by default) and what it or a failed send puts into the prompt.
  const [filesOpen, setFilesOpen] = useState(true);
  const [draft, setDraft] = useState<ComposerDraft | null>(null);
  const plan = latestPlan(chat);
  const showSide = filesOpen || chat.todos.length > 0 || plan !== null || (timeline.actions.timeline?.checkpoints.length ?? 0) > 0 || (timeline.actions.timeline?.rewinds.length ?? 0) > 0;
  const panels = usePanels(showSide);
  const { sidebarAt, sideAt, compact } = panels;
  // Bumped by `/` and Ctrl+K: the board's search field takes the focus.
  const { focusSearch, searchSessions, searchFocused } = useSessionSearch(panels.showSidebar);
  // Links in answers: a workspace file shows in the files panel, a web page after a confirmation.
  const showSidePanel = panels.showSidePanel;
  const showFiles = useCallback(() => {
    setFilesOpen(true);
    showSidePanel();
  }, [showSidePanel]);
  const links = useLinks(showFiles, fail);
  const mention = useCallback((path: string) => setDraft({ kind: "mention", path, at: Date.now() }), []);
  const checkpoints = timeline.actions.timeline?.checkpoints;
  const changedFiles = useMemo(
    () => new Set((checkpoints ?? []).filter((c) => c.kind === "agent").flatMap((c) => c.files.map((f) => f.path))),
    [checkpoints],
  );
  const [runs, setRuns] = useState(0);
  // Tool calls a stopped process left open in the shown session (the resume banner).
  const [openCalls, setOpenCalls] = useState(0);
  // Through a ref: a send that started before its session existed still refreshes the
  // timeline of the session it created (its callbacks were made before that).
  const timelineRefresh = useRef(timeline.refresh);
  timelineRefresh.current = timeline.refresh;
  const refreshTimeline = useCallback(() => timelineRefresh.current(), []);

  const refreshList = useCallback(() => {
    ipc.listSessions().then(p.onWorkspace, () => undefined);
  }, [p.onWorkspace]);

  const refreshStatus = useCallback(() => {
    if (sessionRef.current === null) return;
    ipc.sessionStatus().then(
      (s) =>
        setSession((cur) =>
          cur === null || cur.id !== s.id ? cur : { ...cur, model: s.model, mode: s.mode, blocked: s.blocked, provider: s.provider, busy: s.busy, skipped: s.skipped },
        ),
      () => undefined,
    );
  }, []);
  useEffect(() => {
    if (p.settingsEpoch > 0) refreshStatus();
  }, [p.settingsEpoch, refreshStatus]);

  const onSession = p.onSession;
  const show = useCallback(
    (view: SessionView | null, rebuild = false) => {
      // The logged events only build the transcript (below): the view kept for the session
      // does not hold on to them (thousands in a long session).
      const held = view === null ? null : { ...view, events: [] };
      setSession(held);
      sessionRef.current = held;
      setOpenCalls(view?.pendingCalls ?? 0);
      // A session whose run goes on keeps the transcript its events built (the log lacks
      // the text streamed so far); any other is rebuilt from its saved events.
      const id = view?.id ?? "";
      if (rebuild || !store.isLive(id)) dispatchTo({ id, action: { type: "reset", view } });
      onSession(view?.id ?? null);
    },
    [onSession, store, dispatchTo],
  );
  showRewound.current = (view: SessionView) => show(view, true);

  // Switching never waits for, pauses or stops a running session.
  const open = useCallback(
    (id: string) => {
      if (sessionRef.current?.id === id) return;
      ipc.openSession(id).then((v) => show(v), fail);
    },
    [show, fail],
  );

  // The sessions board (a store outside React, fed by the board channel); a click on a
  // session's notification asks to open it.
  const { boards, board } = useBoard(open, fail);

  // After a restart the window reopens the conversation it showed.
  const initial = useRef(p.initialSession ?? null);
  useEffect(() => {
    const id = initial.current;
    initial.current = null;
    if (id !== null) ipc.openSession(id).then((v) => show(v), fail);
  }, [show, fail]);

  const newChat = useCallback(() => {
    ipc.newSession().then((v) => {
      show(v);
      composer.current?.focus();
    }, fail);
  }, [show, fail]);

  // A new session in a git worktree, running beside the folder's (and any other).
  const newWorktree = useCallback(
    (name: string, carry: boolean, onProgress: (p: Progress) => void) =>
      ipc.newWorktreeSession(name, carry, onProgress).then(
        (v) => {
          show(v);
          composer.current?.focus();
          return true;
        },
        (e: unknown) => {
          fail(e);
          return false;
        },
      ),
    [show, fail],
  );

  // Handoff: the chat goes on in another place with its history (the original stays as it
  // was). Back in the folder, the copy is shown (selected on the board) with a notice saying
  // what happened: the worktree's changes applied, or its worktree gone.
  const handoff = useCallback(
    async (id: string, to: string | null, removed: string | null = null) => {
      const done = await ipc.handoffSession(id, to);
      show(await ipc.openSession(done.session));
      if (to === null) {
        const applied = done.apply;
        const parts =
          removed !== null
            ? [t("wt.continuedRemoved").replace("{name}", removed)]
            : [
                t("wt.continued"),
                ...(applied === null ? [] : [`${t("wt.continuedApplied")}: ${plural(t, applied.applied.length, "count.file")}.`]),
                ...(applied !== null && applied.conflicts.length > 0 ? [t("wt.continuedConflicts")] : []),
              ];
        dispatchTo({ id: done.session, action: { type: "notice", text: parts.join(" "), tone: "info" } });
      }
      refreshList();
      refreshTimeline();
      return done;
    },
    [show, refreshList, refreshTimeline, dispatchTo, t],
  );
  // Steering queued for a turn that was then stopped goes back into the composer, in the
  // order it was typed, instead of waiting to be injected after the next prompt.
  const reclaimSteering = useCallback(async () => {
    const queued = steeringRef.current.filter((s) => s.state === "queued").map((s) => s.text);
    const back: string[] = [];
    for (const text of queued) {
      if (await ipc.removeSteering(text)) {
        dispatch({ type: "unsteer", text });
        back.push(text);
      }
    }
    if (back.length === 0) return;
    setDraft({ kind: "reclaim", texts: back, at: Date.now() });
    dispatch({ type: "notice", text: t("composer.reclaimed") });
  }, [t, dispatch]);

  const afterRun = useCallback(
    (id: string, end: ipc.RunEnd, nothingToRetry = true) => {
      setPendingOf(id, false);
      // A run of a session in the background only updates the lists.
      const shown = sessionRef.current?.id === id;
      if (shown && end.kind === "not_started" && nothingToRetry) dispatch({ type: "notice", text: "Nothing to retry." });
      if (shown && end.kind === "ended" && end.status === "interrupted") reclaimSteering().catch(fail);
      // A slash command done without a turn says what it did; a new mode shows at once.
      if (end.kind === "command") {
        const { text, tone } = describeOutcome(end.outcome, t);
        dispatchTo({ id, action: { type: "notice", text, tone } });
        const effect = end.outcome.effect;
        if (shown && effect.kind === "mode") setSession((cur) => (cur !== null && cur.id === id ? { ...cur, mode: effect.mode } : cur));
      }
      refreshList();
      refreshStatus();
      refreshTimeline();
      setRuns((n) => n + 1);
    },
    [refreshList, refreshStatus, refreshTimeline, reclaimSteering, fail, setPendingOf, dispatch, dispatchTo, t],
  );

  const send = useCallback(
    async (text: string, images: PendingImage[]) => {
      let started = sessionRef.current?.id ?? "";
      setPendingOf(started, true);
      setSent((n) => n + 1);
      // A turn refused before it started (a bad mention or image) gives the prompt back.
      const giveBack = () => setDraft({ kind: "restore", text, images, at: Date.now() });
      try {
        let current = sessionRef.current;
        if (current === null) {
          current = await ipc.newSession();
          if (current.mode !== firstModeRef.current) {
            await ipc.setMode(firstModeRef.current);
            current = { ...current, mode: firstModeRef.current };
          }
          setPendingOf(started, false);
          started = current.id;
          setPendingOf(started, true);
          show(current);
        }
        if (current.blocked !== null) {
          setPendingOf(started, false);
          giveBack();
          return;
        }
        // A new prompt closes the calls left open as interrupted (the engine does it).
        setOpenCalls(0);
        // Shown at once: its turn may wait for a free slot (turn_start replaces it).
        dispatchTo({ id: current.id, action: { type: "waiting", text } });
        const end = await ipc.runTurn(text, eventsOf(current.id), images.map(toUpload));
        dispatchTo({ id: current.id, action: { type: "waiting", text: null } });
        afterRun(current.id, end);
      } catch (e) {
        dispatchTo({ id: sessionRef.current?.id ?? started, action: { type: "waiting", text: null } });
        setPendingOf(started, false);
        giveBack();
        fail(e);
        refreshStatus();
      }
    },
    [eventsOf, afterRun, fail, show, refreshStatus, setPendingOf, dispatchTo],
  );

  // Several worktree sessions at once, the same first message each, under one shared cap.
  const startBatch = useStartBatch(newWorktree, send, fail);

  const steer = useCallback(
    (text: string, images: PendingImage[]) => {
      // Shown at once, so the engine's `queue_steering` event always finds the chip.
      dispatch({ type: "steer", text });
      ipc.queueSteering(text, images.map(toUpload)).catch((e: unknown) => {
        dispatch({ type: "unsteer", text });
        // Nothing is lost: the words and images go back into the composer.
        setDraft({ kind: "restore", text, images, at: Date.now() });
        fail(e);
      });
    },
    [fail, dispatch],
  );

  const removeSteering = useCallback(
    (text: string) => {
      ipc.removeSteering(text).then((removed) => {
        if (removed) dispatch({ type: "unsteer", text });
      }, fail);
    },
    [fail, dispatch],
  );

  // Review comments go to the worktree's newest session as its next turn (a new session
  // in the worktree when it has none).
  const boardRef = useRef(board);
  boardRef.current = board;
  const sendToWorktree = useCallback(
    async (name: string, message: string) => {
      const b = boardRef.current;
      const saved = b?.worktrees.find((w) => w.name === name)?.sessions[0];
      const id = saved ?? b?.rows.find((r) => r.worktree === name)?.id;
      if (id === undefined) {
        show(await ipc.newWorktreeSession(name, false, () => undefined));
      } else if (sessionRef.current?.id !== id) {
        show(await ipc.openSession(id));
      }
      // The turn runs on; the review closes at once.
      void send(message, []);
    },
    [show, send],
  );

  const stop = useCallback(() => {
    ipc.interrupt().catch(fail);
  }, [fail]);

  const retry = useCallback(() => {
    const id = sessionRef.current?.id ?? "";
    setPendingOf(id, true);
    ipc.retryTurn(eventsOf(id)).then((end) => afterRun(id, end), (e: unknown) => {
      setPendingOf(id, false);
      fail(e);
    });
  }, [eventsOf, afterRun, fail, setPendingOf]);

  const resume = useCallback(() => {
    const id = sessionRef.current?.id ?? "";
    setOpenCalls(0);
    setPendingOf(id, true);
    ipc.resumeTurn(eventsOf(id)).then((end) => {
      // `not_started`: nothing was open any more (not a failed retry).
      afterRun(id, end, false);
    }, (e: unknown) => {
      setPendingOf(id, false);
      fail(e);
    });
  }, [eventsOf, afterRun, fail, setPendingOf]);

  // The engine leaves plan mode when a plan is accepted, so the work can start.
  const planAccepted = useCallback(
    () => setSession((cur) => (cur !== null && cur.mode === "plan" ? { ...cur, mode: "interactive" } : cur)),
    [],
  );
  const answerers = useAnswers(dispatch, fail, planAccepted);

  const running = chat.running || pending;
  // A folder chat that ran turns (it is on the board) can move into a worktree.
  const shownRowOfBoard = session === null ? undefined : board?.rows.find((r) => r.id === session.id);
  const movable = shownRowOfBoard !== undefined && shownRowOfBoard.worktree === null && !running ? shownRowOfBoard.id : null;
  const moveToWorktree = useMemo(
    () =>
      movable === null
        ? null
        : (name: string) =>
            handoff(movable, name).then(
              () => true,
              (e: unknown) => {
                fail(e);
                return false;
              },
            ),
    [movable, handoff, fail],
  );

  // Older turns of a long session come a page at a time, on request.
  const historyBefore = chat.historyBefore;
  // A timeline entry's turn, shown in the transcript.
  const [jump, setJump] = useState<{ turn: number; at: number } | null>(null);
  const showTurn = useCallback((turn: number) => setJump({ turn, at: Date.now() }), []);
  // One page at a time: a second click while one loads would add the same turns twice.
  const loadingEarlier = useRef(false);
  const earlier = useCallback(async () => {
    const id = sessionRef.current?.id;
    if (id === undefined || historyBefore === null || loadingEarlier.current) return;
    loadingEarlier.current = true;
    await ipc
      .sessionHistory(historyBefore)
      .then(
        (page) => dispatchTo({ id, action: { type: "older", events: page.events, first: page.first } }),
        fail,
      )
      .finally(() => {
        loadingEarlier.current = false;
      });
  }, [historyBefore, fail, dispatchTo]);
  const actions: TranscriptActions = useMemo(
    () => ({
      ...answerers,
      retry,
      nativeApprovals: p.approvals === "native",
      running,
      timeline: timeline.actions,
      openSettings: p.onOpenSettings,
      goOn: () => void send(t("budget.continue"), []),
      earlier: historyBefore === null ? undefined : earlier,
      fail,
    }),
    [answerers, retry, p.approvals, running, timeline.actions, p.onOpenSettings, historyBefore, earlier, send, t, fail],
  );

  const setMode = (mode: Mode) => {
    if (session === null) {
      setFirstMode(mode);
      return;
    }
    ipc.setMode(mode).then(() => setSession({ ...session, mode }), fail);
  };

  const rename = (id: string, name: string) => {
    ipc.renameSession(id, name).then(() => {
      if (session?.id === id) setSession({ ...session, name });
      refreshList();
    }, fail);
  };
  const remove = (id: string) => {
    ipc.deleteSession(id).then(() => {
      if (session?.id === id) show(null);
      refreshList();
    }, fail);
  };

  // Shortcuts the app forwards (Ctrl+N, Ctrl+L, Ctrl+K, Esc).
  useEffect(() => {
    if (p.command === null) return;
    if (p.command.name === "search") searchSessions();
    else if (p.command.name === "new") newChat();
    else if (p.command.name === "focus") composer.current?.focus();
    else if (p.command.name === "stop" && running) stop();
    // Only a new command matters, not callback identity.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [p.command]);

  const shownRow = board?.rows.find((r) => r.id === session?.id) ?? null;
  const blocked = session !== null ? session.blocked : preBlocked(p.settings);
  const headerActions: HeaderAction[] = [
    { testId: "toggle-terminal", icon: "terminal", label: t("terminal.toggle"), shortcut: "Ctrl+`", pressed: terminal.shown, onClick: terminal.click },
    { testId: "toggle-files", icon: "files", label: t("files.toggle"), pressed: filesOpen, onClick: () => setFilesOpen((v) => !v) },
    { testId: "new-window", icon: "newWindow", label: t("header.newWindow"), shortcut: "Ctrl+Shift+N", onClick: () => void ipc.newWindow().catch(fail) },
    { testId: "open-usage", icon: "usage", label: t("header.usage"), shortcut: "Ctrl+U", onClick: p.onOpenUsage },
    { testId: "open-help", icon: "help", label: t("header.help"), shortcut: "Ctrl+/", onClick: p.onOpenHelp },
  ];
  const layout = [sidebarAt === "docked" ? "with-sidebar" : "", sideAt === "docked" ? "with-side" : "", compact ? "compact" : ""];
  return (
    <div
      className={`workbench ${layout.join(" ")}`}
      data-testid="workbench"
      data-sidebar={sidebarAt}
      data-side={sideAt}
      onKeyDown={(e) => {
        if (e.key === "Escape" && (sidebarAt === "drawer" || sideAt === "drawer")) panels.closeDrawers();
      }}
    >
      <header className="app-header">
        <div className="brand">
          <button
            type="button"
            className={`icon-button ${sidebarAt !== "hidden" ? "icon-button-on" : ""}`}
            data-tip={t("header.sidebar")}
            aria-label={t("header.sidebar")}
            aria-pressed={sidebarAt !== "hidden"}
            data-testid="toggle-sidebar"
            onClick={panels.toggleSidebar}
          >
            <Icon name="sidebar" />
          </button>
          <span className="brand-name" data-testid="app-name">Cairn</span>
          <span className="crumb">/</span>
          <span className="crumb-workspace" data-tip={p.workspace.path}>{p.workspace.name}</span>
          {shownRow !== null && shownRow.worktree !== null && (
            <>
              <span className="crumb">/</span>
              <span className="crumb-worktree" data-tip={t("wt.title")} data-testid="worktree-crumb">
                ⎇ {shownRow.worktree}
              </span>
            </>
          )}
          {session !== null && (
            <>
              <span className="crumb">/</span>
              <span className="crumb-session" data-testid="session-title">
                {chat.sessionName ??
                  (session.name !== ""
                    ? session.name
                    : (p.workspace.sessions.find((x) => x.id === session.id)?.name || t("sidebar.untitled")))}
              </span>
            </>
          )}
        </div>
        <div className="header-tools">
          <ModeSwitcher mode={session?.mode ?? firstMode} onChange={setMode} disabled={false} />
          {session !== null && <Meter meter={chat.meter} model={session.model} compaction={chat.compaction} />}
          {session !== null && (
            <span
              className={`sandbox-pill ${sandboxWarns(session.sandbox) ? "sandbox-pill-warn" : ""}`}
              data-tip={sandboxTip(session.sandbox)}
              data-testid="sandbox-pill"
              data-state={session.sandbox.state}
            >
              {t(sandboxLabel(session.sandbox))}
            </span>
          )}
          {session !== null && (
            <span className="model-pill" data-tip={session.provider} data-testid="model-pill">
              {session.model.id}
            </span>
          )}
          <HeaderActions actions={headerActions} compact={compact} />
          {showSide && (
            <button
              type="button"
              className={`icon-button ${sideAt !== "hidden" ? "icon-button-on" : ""}`}
              data-tip={t("header.sidePanel")}
              aria-label={t("header.sidePanel")}
              aria-pressed={sideAt !== "hidden"}
              data-testid="toggle-side"
              onClick={panels.toggleSide}
            >
              <Icon name="panel" />
            </button>
          )}
          <button type="button" className="icon-button" data-tip={`${t("header.settings")} (Ctrl+,)`} aria-label={t("header.settings")} data-testid="open-settings" onClick={p.onOpenSettings}>
            <Icon name="settings" />
          </button>
        </div>
      </header>
      {(sidebarAt === "drawer" || sideAt === "drawer") && <div className="drawer-backdrop" data-testid="drawer-backdrop" onClick={panels.closeDrawers} />}
      {sidebarAt !== "hidden" && (
        <Sessions
          drawer={sidebarAt === "drawer"}
          workspaceName={p.workspace.name}
          workspacePath={p.workspace.path}
          sessions={p.workspace.sessions}
          boards={boards}
          focusSearch={focusSearch}
          onSearchFocused={searchFocused}
          activeId={session?.id ?? null}
          busy={running}
          anyLive={running || (board?.rows ?? []).some((r) => r.open && isLive(r.activity))}
          lang={p.lang}
          onNew={newChat}
          onOpen={(id) => {
            panels.closeSidebarDrawer();
            // A chat whose worktree was removed goes on in the folder, with its history.
            const row = boardRef.current?.rows.find((r) => r.id === id);
            if (row?.worktreeRemoved === true) handoff(id, null, row.worktree).catch(fail);
            else open(id);
          }}
          onRename={rename}
          onDelete={remove}
          onCloseWorkspace={p.onCloseWorkspace}
          onNewWorktree={newWorktree}
          onMoveToWorktree={moveToWorktree}
          onStartBatch={startBatch}
          onReview={(name) => {
            panels.closeSidebarDrawer();
            setReviewing(name);
          }}
        />
      )}
      <main className="chat">
        {/* Keyed by session: another session opens pinned to its bottom. */}
        <LinkContext.Provider value={links.openLink}>
          <Transcript key={session?.id ?? "none"} items={chat.items} actions={actions} sent={sent} historyBefore={historyBefore} jump={jump} />
        </LinkContext.Provider>
        {terminal.shown && (
          <Suspense
            fallback={
              // While the panel loads, keys typed after Ctrl+` wait for its terminal.
              <section
                className="terminal-panel"
                tabIndex={-1}
                ref={(el) => {
                  if (terminal.focusAt > 0) el?.focus();
                }}
                onKeyDown={(e) => {
                  if (terminal.typeAhead.key(e)) e.preventDefault();
                }}
              />
            }
          >
            <TerminalPanel fail={fail} epoch={runs} openIn={terminal.openIn} focusAt={terminal.focusAt} typeAhead={terminal.typeAhead} />
          </Suspense>
        )}
        {shownRow?.activity.state === "queued" && (
          <div className="blocked queued-banner" role="status" data-testid="queued-banner">
            <span>
              {t("board.queuedBanner")} ({shownRow.activity.running}/{shownRow.activity.limit})
            </span>
          </div>
        )}
        {session !== null && <SkippedBanner key={`skipped:${session.id}`} skipped={session.skipped} onReview={p.onOpenSettings} />}
        {openCalls > 0 && !running && (
          <div className="blocked resume-banner" role="alert" data-testid="resume-banner">
            <span>
              {plural(t, openCalls, "resume.waiting")}
            </span>
            <span className="resume-actions">
              <button type="button" className="btn btn-small" data-testid="resume-calls" onClick={resume}>
                {t("resume.resume")}
              </button>
              <button type="button" className="btn btn-small" data-testid="dismiss-resume" onClick={() => setOpenCalls(0)}>
                {t("resume.dismiss")}
              </button>
            </span>
          </div>
        )}
        {blocked !== null && (
          <div className="blocked" role="alert" data-testid="blocked">
            <span>{blocked}</span>
            <button type="button" className="btn btn-small" onClick={p.onOpenSettings}>
              {t("blocked.openSettings")}
            </button>
          </div>
        )}
        <Composer
          ref={composer}
          running={running}
          disabled={blocked !== null}
          steering={chat.steering}
          onSend={(text, images) => void send(text, images)}
          onSteer={steer}
          onRemoveSteering={removeSteering}
          onStop={stop}
          draft={draft}
        />
      </main>
      {sideAt !== "hidden" && (
        <SidePanel drawer={sideAt === "drawer"} todos={chat.todos} plan={plan} answerPlan={answerers.plan}>
          <TimelineList actions={timeline.actions} onJump={showTurn} />
          <ChangesPanel actions={timeline.actions} busy={running} />
          <RewoundPanel actions={timeline.actions} onReuse={(text) => setDraft({ kind: "restore", text, images: [], at: Date.now() })} />
          {/* Keyed by the folder it shows: a worktree session's panel lists its own checkout. */}
          {filesOpen && <FilesPanel key={session?.workspace ?? p.workspace.path} changed={changedFiles} onMention={mention} reveal={links.reveal} />}
        </SidePanel>
      )}
      {timeline.dialogs}
      {links.dialog}
      {reviewing !== null && (
        <WorktreeReview
          key={reviewing}
          name={reviewing}
          onClose={() => setReviewing(null)}
          onSend={(message) => sendToWorktree(reviewing, message).catch(fail)}
          onApplied={() => refreshTimeline()}
          onOpenChat={(id) => {
            setReviewing(null);
            open(id);
          }}
          onHandoff={(() => {
            const b = boardRef.current;
            const id = b?.worktrees.find((w) => w.name === reviewing)?.sessions[0] ?? b?.rows.find((r) => r.worktree === reviewing)?.id;
            return id === undefined ? null : () => handoff(id, null).then((d) => d.apply);
          })()}
          onTerminal={() => {
            terminal.openInWorktree(reviewing);
            setReviewing(null);
          }}
          onRemoved={() => {
            // Its sessions were closed with it.
            const shown = boardRef.current?.rows.find((r) => r.id === sessionRef.current?.id);
            if (shown?.worktree === reviewing) show(null);
            setReviewing(null);
            refreshList();
          }}
        />
      )}
    </div>
  );
}
