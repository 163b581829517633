// The session timeline: a checkpoint marker under every turn that changed files, its diff
// (per file, restorable file by file), "Restore to here" with a dry-run confirmation, undoable
// restore entries, and the "changes this session" panel with per-file revert. Paths and diffs
// are untrusted text: rendered as text nodes only.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { CheckpointView } from "../bindings/app/CheckpointView";
import type { FileChange } from "../bindings/app/FileChange";
import type { RestoreView } from "../bindings/app/RestoreView";
import type { SessionView } from "../bindings/app/SessionView";
import type { TimelineView } from "../bindings/app/TimelineView";
import { conflictText } from "../conflicts";
import { plural, useT } from "../i18n";
import * as ipc from "../ipc";
import { DiffView, type DiffMode } from "./DiffView";
import { Overlay } from "./Overlay";
import { RewindDialog, type RewindAsk } from "./Rewind";

/** A restore the user is about to confirm: target checkpoint and (optionally) chosen files. */
export type RestoreAsk = { toTurn: number; paths: string[] };

/** What the timeline's views can do. */
export type TimelineActions = {
  timeline: TimelineView | null;
  showDiff: (turn: number, paths?: string[]) => void;
  askRestore: (ask: RestoreAsk) => void;
  askRewind: (ask: RewindAsk) => void;
};

/** The timeline of the window's session: loaded on demand, refreshed after every turn;
 * `onRewound` gets the session after a conversation rewind (to rebuild the transcript). */
export function useTimeline(sessionId: string | null, fail: (e: unknown) => void, onRewound?: (view: SessionView) => void) {
  const rewound = useRef(onRewound);
  rewound.current = onRewound;
  const [rewind, setRewind] = useState<RewindAsk | null>(null);
  const [timeline, setTimeline] = useState<TimelineView | null>(null);
  const [diff, setDiff] = useState<{ turn: number; paths: string[] } | null>(null);
  const [restore, setRestore] = useState<RestoreAsk | null>(null);
  // The last restore, announced where the user is looking (its timeline entry may be off screen).
  const [toast, setToast] = useState<RestoreView | null>(null);
  useEffect(() => {
    if (toast === null) return;
    const timer = window.setTimeout(() => setToast(null), TOAST_MS);
    return () => window.clearTimeout(timer);
  }, [toast]);
  const refresh = useCallback(() => {
    if (sessionId === null) {
      setTimeline(null);
      return;
    }
    ipc.sessionTimeline().then(setTimeline, fail);
  }, [sessionId, fail]);
  useEffect(refresh, [refresh]);
  const actions: TimelineActions = useMemo(
    () => ({
      timeline,
      showDiff: (turn, paths) => setDiff({ turn, paths: paths ?? [] }),
      askRestore: setRestore,
      askRewind: setRewind,
    }),
    [timeline],
  );
  const dialogs = (
    <>
      {diff !== null && (
        <DiffDialog
          turn={diff.turn}
          paths={diff.paths}
          onClose={() => setDiff(null)}
          onRestore={(ask) => {
            setDiff(null);
            setRestore(ask);
          }}
        />
      )}
      {rewind !== null && (
        <RewindDialog
          ask={rewind}
          onClose={() => setRewind(null)}
          onDone={(view) => {
            setRewind(null);
            if (view !== null) rewound.current?.(view);
            refresh();
          }}
        />
      )}
      {restore !== null && (
        <RestoreDialog
          ask={restore}
          onClose={() => setRestore(null)}
          onDone={(view) => {
            setRestore(null);
            refresh();
            if (!view.dryRun && view.turn !== null) setToast(view);
          }}
        />
      )}
      {toast !== null && (
        <RestoreToast
          view={toast}
          onUndo={(turn) => {
            setToast(null);
            setRestore({ toTurn: turn - 1, paths: [] });
          }}
          onClose={() => setToast(null)}
        />
      )}
    </>
  );
  return { actions, refresh, dialogs };
}

/** How long a restore's toast stays. */
const TOAST_MS = 10_000;

/** "Restored to turn N · Undo", shown over the chat after a restore. */
function RestoreToast({ view, onUndo, onClose }: { view: RestoreView; onUndo: (turn: number) => void; onClose: () => void }) {
  const t = useT();
  const label = view.toTurn === 0 ? t("timeline.restoredStart") : `${t("timeline.restoredTo")} ${view.toTurn}`;
  const files = view.restored.length + view.deleted.length;
  return (
    <div className="toast" data-testid="toast" role="status">
      <span>
        {label} · {plural(t, files, "count.file")}
        {view.conflicts.length > 0 && ` · ${view.conflicts.length} ${t("timeline.kept")}`}
      </span>
      {view.turn !== null && (
        <button type="button" className="btn btn-small" data-testid="toast-undo" onClick={() => onUndo(view.turn ?? 0)}>
          {t("timeline.undo")}
        </button>
      )}
      <button type="button" className="toast-close" data-testid="toast-close" aria-label={t("toast.close")} onClick={onClose}>
        ×
      </button>
    </div>
  );
}

function plusMinus(files: FileChange[]) {
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  return (
    <span className="plus-minus">
      <span className="pm-add">+{added}</span> <span className="pm-del">−{removed}</span>
    </span>
  );
}

/** The checkpoints recorded in chat turn `turn`, shown under its end marker. */
export function CheckpointMarkers({ turn, actions, busy }: { turn: number; actions: TimelineActions; busy: boolean }) {
  const here = actions.timeline?.checkpoints.filter((c) => c.sessionTurn === turn) ?? [];
  if (here.length === 0) return null;
  return (
    <div className="checkpoints">
      {here.map((c) =>
        c.kind === "agent" ? (
          <AgentMarker key={c.turn} c={c} actions={actions} busy={busy} />
        ) : c.kind === "user" ? (
          <UserMarker key={c.turn} c={c} actions={actions} />
        ) : c.kind === "apply" ? (
          <ApplyMarker key={c.turn} c={c} actions={actions} busy={busy} />
        ) : (
          <RestoreMarker key={c.turn} c={c} actions={actions} busy={busy} />
        ),
      )}
    </div>
  );
}

function AgentMarker({ c, actions, busy }: { c: CheckpointView; actions: TimelineActions; busy: boolean }) {
  const t = useT();
  return (
    <div className="checkpoint" data-testid="checkpoint" data-turn={c.turn} data-kind="agent">
      <span className="checkpoint-dot" aria-hidden="true" />
      <button type="button" className="checkpoint-summary" data-testid="checkpoint-open" onClick={() => actions.showDiff(c.turn)}>
        {t("timeline.checkpoint")} {c.turn} · {plural(t, c.files.length, "count.file")} {plusMinus(c.files)}
      </button>
      <span className="checkpoint-files">{c.files.map((f) => f.path).join(", ")}</span>
      <button type="button" className="btn btn-small" data-testid="checkpoint-restore" disabled={busy} onClick={() => actions.askRestore({ toTurn: c.turn, paths: [] })}>
        {t("timeline.restoreHere")}
      </button>
      <button type="button" className="btn btn-small" data-testid="checkpoint-rewind" disabled={busy} onClick={() => actions.askRewind({ checkpoint: c.turn, sessionTurn: c.sessionTurn })}>
        {t("rewind.button")}
      </button>
    </div>
  );
}
/**
 * The number `cairn turns`, `restore --json` and `--to-turn N` use for this checkpoint: every
 * entry shows it, so the numbers never seem to jump and `/undo`'s words find their entry.
 */
function CheckpointNumber({ turn }: { turn: number }) {
  return (
    <span className="checkpoint-number" data-testid="checkpoint-number">
      {turn} ·{" "}
    </span>
  );
}

/** The user's own edits that a restore after them recorded (its Undo brings them back). */
function UserMarker({ c, actions }: { c: CheckpointView; actions: TimelineActions }) {
  const t = useT();
  return (
    <div className="checkpoint checkpoint-user" data-testid="checkpoint" data-turn={c.turn} data-kind="user">
      <span className="checkpoint-dot" aria-hidden="true" />
      <button type="button" className="checkpoint-summary" data-testid="user-entry" onClick={() => actions.showDiff(c.turn)}>
        <CheckpointNumber turn={c.turn} />
        {t("timeline.userEdits")} · {plural(t, c.files.length, "count.file")} {plusMinus(c.files)}
      </button>
      <span className="checkpoint-files">{c.files.map((f) => f.path).join(", ")}</span>
    </div>
  );
}

/** A worktree applied to the folder; its Undo restores to the checkpoint before it. */
function ApplyMarker({ c, actions, busy }: { c: CheckpointView; actions: TimelineActions; busy: boolean }) {
  const t = useT();
  return (
    <div className="checkpoint checkpoint-apply" data-testid="checkpoint" data-turn={c.turn} data-kind="apply" data-tip={c.summary}>
      <span className="checkpoint-dot" aria-hidden="true" />
      <button type="button" className="checkpoint-summary" data-testid="applied-entry" onClick={() => actions.showDiff(c.turn)}>
        <CheckpointNumber turn={c.turn} />
        {c.appliedFrom === null ? t("timeline.appliedWorktree") : t("timeline.appliedNamed").replace("{name}", c.appliedFrom)} · {plural(t, c.files.length, "count.file")} {plusMinus(c.files)}
      </button>
      <span className="checkpoint-files">{c.files.map((f) => f.path).join(", ")}</span>
      <button type="button" className="btn btn-small" data-testid="checkpoint-undo" disabled={busy} onClick={() => actions.askRestore({ toTurn: c.turn - 1, paths: [] })}>
        {t("timeline.undo")}
      </button>
    </div>
  );
}

function RestoreMarker({ c, actions, busy }: { c: CheckpointView; actions: TimelineActions; busy: boolean }) {
  const t = useT();
  const label = c.restoredTo === 0 ? t("timeline.restoredStart") : `${t("timeline.restoredTo")} ${c.restoredTo ?? "?"}`;
  return (
    <div className="checkpoint checkpoint-restore" data-testid="checkpoint" data-turn={c.turn} data-kind="restore">
      <span className="checkpoint-dot" aria-hidden="true" />
      <button type="button" className="checkpoint-summary" data-testid="restored-entry" onClick={() => actions.showDiff(c.turn)}>
        <CheckpointNumber turn={c.turn} />
        {label} · {plural(t, c.files.length, "count.file")} {plusMinus(c.files)}
      </button>
      <button type="button" className="btn btn-small" data-testid="checkpoint-undo" disabled={busy} onClick={() => actions.askRestore({ toTurn: c.turn - 1, paths: [] })}>
        {t("timeline.undo")}
      </button>
    </div>
  );
}

/** Splits a git-style unified diff into one chunk per file. */
export function splitDiff(diff: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const line of diff.split("\n")) {
    const m = /^diff --git a\/.* b\/(.*)$/.exec(line);
    if (m !== null) out.push({ path: m[1] ?? "", text: "" });
    const last = out[out.length - 1];
    if (last === undefined) continue;
    // The git header lines carry no content; the file name is the section's title.
    if (m !== null || /^(index |new file mode|deleted file mode|similarity index|rename (from|to) |old mode|new mode)/.test(line)) continue;
    last.text += `${line}\n`;
  }
  return out.map((f) => ({ ...f, text: f.text.replace(/\n+$/, "\n") }));
}

function DiffDialog({
  turn,
  paths,
  onClose,
  onRestore,
}: {
  turn: number;
  paths: string[];
  onClose: () => void;
  onRestore: (ask: RestoreAsk) => void;
}) {
  const t = useT();
  const [diff, setDiff] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [mode, setMode] = useState<DiffMode>(() => (localStorage.getItem("cairn.diffMode") === "split" ? "split" : "unified"));
  const pickMode = (m: DiffMode) => {
    setMode(m);
    localStorage.setItem("cairn.diffMode", m);
  };
  useEffect(() => {
    ipc.checkpointDiff(turn, paths).then(setDiff, (e: unknown) => setError(ipc.describeError(e)));
    // The dialog is keyed by what it shows; paths only change with a new dialog.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [turn]);
  const files = useMemo(() => (diff === null ? [] : splitDiff(diff)), [diff]);
  const toggle = (path: string) =>
    setChosen((cur) => {
      const next = new Set(cur);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });
  // A checkpoint's diff restores to that checkpoint; "everything this session" restores
  // chosen files to the session's start.
  const title = turn === 0 ? t("timeline.allChangesTitle") : `${t("timeline.diffTitle")} ${turn}`;
  return (
    <Overlay title={title} onClose={onClose} testId="diff-dialog" wide>
      {error !== null && <div className="notice notice-error">{error}</div>}
      {diff !== null && files.length === 0 && <p className="sidebar-empty">{t("timeline.noDiff")}</p>}
      {files.length > 0 && (
        <div className="diff-mode-toggle" role="group">
          <button type="button" className={`btn btn-small${mode === "unified" ? " btn-active" : ""}`} aria-pressed={mode === "unified"} data-testid="diff-mode-unified" onClick={() => pickMode("unified")}>
            {t("diff.unified")}
          </button>
          <button type="button" className={`btn btn-small${mode === "split" ? " btn-active" : ""}`} aria-pressed={mode === "split"} data-testid="diff-mode-split" onClick={() => pickMode("split")}>
            {t("diff.split")}
          </button>
        </div>
      )}
      <div className="diff-files">
        {files.map((f) => (
          <section key={f.path} className="diff-file-section" data-testid="diff-file" data-path={f.path}>
            <label className="diff-file-head">
              <input type="checkbox" data-testid="diff-file-pick" checked={chosen.has(f.path)} onChange={() => toggle(f.path)} />
              <span className="diff-file-path">{f.path}</span>
            </label>
            <DiffView diff={f.text} testId="diff-text" path={f.path} mode={mode} />
          </section>
        ))}
      </div>
      {turn > 0 && (
        <footer className="dialog-actions">
          <button type="button" className="btn" data-testid="diff-restore-here" onClick={() => onRestore({ toTurn: turn, paths: [] })}>
            {t("timeline.restoreHere")}
          </button>
          <button
            type="button"
            className="btn btn-primary"
            data-testid="diff-restore-selected"
            disabled={chosen.size === 0}
            onClick={() => onRestore({ toTurn: turn, paths: [...chosen] })}
          >
            {t("timeline.restoreSelected")} ({chosen.size})
          </button>
        </footer>
      )}
    </Overlay>
  );
}

function PathList({ title, paths, testId, tone }: { title: string; paths: string[]; testId: string; tone: string }) {
  if (paths.length === 0) return null;
  return (
    <section className={`restore-group restore-${tone}`} data-testid={testId}>
      <h3>
        {title} <span className="count">{paths.length}</span>
      </h3>
      <ul>
        {paths.map((p) => (
          <li key={p} data-testid={`${testId}-path`}>
            {p}
          </li>
        ))}
      </ul>
    </section>
  );
}

function RestoreDialog({ ask, onClose, onDone }: { ask: RestoreAsk; onClose: () => void; onDone: (v: RestoreView) => void }) {
  const t = useT();
  const [force, setForce] = useState(false);
  const [plan, setPlan] = useState<RestoreView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  useEffect(() => {
    setPlan(null);
    ipc.restoreCheckpoint({ toTurn: ask.toTurn, paths: ask.paths, dryRun: true, force }).then(setPlan, (e: unknown) => setError(ipc.describeError(e)));
  }, [ask, force]);
  const run = () => {
    setWorking(true);
    ipc.restoreCheckpoint({ toTurn: ask.toTurn, paths: ask.paths, dryRun: false, force }).then(onDone, (e: unknown) => {
      setWorking(false);
      setError(ipc.describeError(e));
    });
  };
  const empty = plan !== null && plan.restored.length === 0 && plan.deleted.length === 0;
  return (
    <Overlay title={t("timeline.confirmTitle")} onClose={onClose} testId="restore-dialog">
      <p data-testid="restore-target">
        {ask.toTurn === 0 ? t("timeline.targetStart") : `${t("timeline.target")} ${ask.toTurn}`}
        {ask.paths.length > 0 && ` · ${ask.paths.join(", ")}`}
      </p>
      {error !== null && (
        <div className="notice notice-error" role="alert" data-testid="restore-error">
          {error}
        </div>
      )}
      {plan === null && error === null && <p className="sidebar-empty">{t("timeline.planning")}</p>}
      {plan !== null && (
        <div data-testid="restore-plan">
          <PathList title={t("timeline.written")} paths={plan.restored} testId="restore-written" tone="written" />
          <PathList title={t("timeline.deleted")} paths={plan.deleted} testId="restore-deleted" tone="deleted" />
          <PathList title={t("timeline.conflicts")} paths={plan.conflicts.map((c) => `${c.path} (${conflictText(c, t)})`)} testId="restore-conflicts" tone="conflict" />
          {empty && <p className="sidebar-empty">{t("timeline.nothing")}</p>}
        </div>
      )}
      {(plan?.conflicts.length ?? 0) > 0 || force ? (
        <label className="restore-force">
          <input type="checkbox" data-testid="restore-force" checked={force} onChange={(e) => setForce(e.target.checked)} /> {t("timeline.force")}
        </label>
      ) : null}
      <footer className="dialog-actions">
        <button type="button" className="btn" onClick={onClose}>
          {t("timeline.cancel")}
        </button>
        <button type="button" className="btn btn-primary" data-testid="restore-confirm" disabled={plan === null || empty || working} onClick={run}>
          {t("timeline.restore")}
        </button>
      </footer>
    </Overlay>
  );
}

/** "Changes this session": every file changed since the session started, with revert. */
export function ChangesPanel({ actions, busy }: { actions: TimelineActions; busy: boolean }) {
  const t = useT();
  const changes = actions.timeline?.changes ?? [];
  return (
    <section className="panel-section" data-testid="changes-panel">
      <h2 className="sidebar-title">
        {t("timeline.changes")} {changes.length > 0 && <span className="count">{changes.length}</span>}
        {changes.length > 0 && (
          <button type="button" className="link-button" data-testid="changes-view-all" onClick={() => actions.showDiff(0)}>
            {t("timeline.viewAll")}
          </button>
        )}
      </h2>
      {actions.timeline?.pendingRestore != null && <div className="notice notice-error">{actions.timeline.pendingRestore}</div>}
      {changes.length === 0 ? (
        <p className="sidebar-empty">{t("timeline.noChanges")}</p>
      ) : (
        <ul className="changes-list">
          {changes.map((f) => (
            <li key={f.path} className="change" data-testid="change" data-path={f.path}>
              <button type="button" className="change-path" data-tip={f.path} onClick={() => actions.showDiff(0, [f.path])}>
                {f.path}
              </button>
              {plusMinus([f])}
              <button type="button" className="btn btn-small" data-testid="change-revert" disabled={busy} onClick={() => actions.askRestore({ toTurn: 0, paths: [f.path] })}>
                {t("timeline.revert")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
