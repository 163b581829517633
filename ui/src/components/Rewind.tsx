// "Rewind to here" from a checkpoint marker, as Claude Code's rewind: the user chooses code
// only (the workspace restore, with its dry run), conversation only (later turns leave the
// history and the transcript) or both. Paths are untrusted text: rendered as text nodes only.
import { useEffect, useState } from "react";
import type { RestoreView } from "../bindings/app/RestoreView";
import type { SessionView } from "../bindings/app/SessionView";
import type { TimelineActions } from "./Timeline";
import { conflictText } from "../conflicts";
import { useT } from "../i18n";
import * as ipc from "../ipc";
import { Overlay } from "./Overlay";
import { formatDate } from "../format";

/** A rewind the user is about to choose: the checkpoint (code) and the session turn (chat). */
export type RewindAsk = { checkpoint: number; sessionTurn: number };

/** What to rewind. */
type Scope = "both" | "code" | "chat";

function Paths({ title, paths, testId }: { title: string; paths: string[]; testId: string }) {
  if (paths.length === 0) return null;
  return (
    <section className="restore-group" data-testid={testId}>
      <h3>
        {title} <span className="count">{paths.length}</span>
      </h3>
      <ul>
        {paths.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    </section>
  );
}

/** The rewind dialog: scope, the code dry run when code is rewound, then the rewind. */
export function RewindDialog({
  ask,
  onClose,
  onDone,
}: {
  ask: RewindAsk;
  onClose: () => void;
  onDone: (session: SessionView | null) => void;
}) {
  const t = useT();
  const [scope, setScope] = useState<Scope>("both");
  const [plan, setPlan] = useState<RestoreView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  const code = scope !== "chat";
  const chat = scope !== "code";
  useEffect(() => {
    setPlan(null);
    setError(null);
    if (!code) return;
    ipc.restoreCheckpoint({ toTurn: ask.checkpoint, paths: [], dryRun: true, force: false }).then(setPlan, (e: unknown) => setError(ipc.describeError(e)));
  }, [ask, code]);
  const run = async () => {
    setWorking(true);
    setError(null);
    try {
      const changes = plan !== null && (plan.restored.length > 0 || plan.deleted.length > 0);
      if (code && changes) await ipc.restoreCheckpoint({ toTurn: ask.checkpoint, paths: [], dryRun: false, force: false });
      const view = chat ? await ipc.rewindConversation(ask.sessionTurn) : null;
      onDone(view?.session ?? null);
    } catch (e) {
      setWorking(false);
      setError(ipc.describeError(e));
    }
  };
  const choice = (value: Scope, label: string) => (
    <label className="rewind-choice">
      <input type="radio" name="rewind-scope" data-testid={`rewind-scope-${value}`} checked={scope === value} onChange={() => setScope(value)} /> {label}
    </label>
  );
  return (
    <Overlay title={`${t("rewind.title")} ${ask.checkpoint}`} onClose={onClose} testId="rewind-dialog">
      <p>{t("rewind.lead")}</p>
      <div className="rewind-choices" role="radiogroup">
        {choice("both", t("rewind.both"))}
        {choice("code", t("rewind.code"))}
        {choice("chat", t("rewind.chat"))}
      </div>
      {chat && <p className="sidebar-empty" data-testid="rewind-chat-note">{t("rewind.chatNote")}</p>}
      {error !== null && (
        <div className="notice notice-error" role="alert" data-testid="rewind-error">
          {error}
        </div>
      )}
      {code && plan === null && error === null && <p className="sidebar-empty">{t("timeline.planning")}</p>}
      {code && plan !== null && (
        <div data-testid="rewind-plan">
          <Paths title={t("timeline.written")} paths={plan.restored} testId="rewind-written" />
          <Paths title={t("timeline.deleted")} paths={plan.deleted} testId="rewind-deleted" />
          <Paths title={t("timeline.conflicts")} paths={plan.conflicts.map((c) => `${c.path} (${conflictText(c, t)})`)} testId="rewind-conflicts" />
          {plan.restored.length === 0 && plan.deleted.length === 0 && <p className="sidebar-empty">{t("timeline.nothing")}</p>}
        </div>
      )}
      <footer className="dialog-actions">
        <button type="button" className="btn" onClick={onClose}>
          {t("timeline.cancel")}
        </button>
        <button type="button" className="btn btn-primary" data-testid="rewind-confirm" disabled={working || (code && plan === null)} onClick={() => void run()}>
          {t("rewind.confirm")}
        </button>
      </footer>
    </Overlay>
  );
}

/** A stored RFC 3339 time in the user's locale (as stored when it does not parse). */
function when(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : formatDate(d, undefined, true);
}

/** "Rewound turns": what conversation rewinds took out of the chat (kept in the session
 * folder), each turn's input with its answer folded under it and a button that puts the
 * prompt back in the composer (`onReuse`). Text nodes only. */
export function RewoundPanel({ actions, onReuse }: { actions: TimelineActions; onReuse: (prompt: string) => void }) {
  const t = useT();
  const rewinds = actions.timeline?.rewinds ?? [];
  const count = rewinds.reduce((n, a) => n + a.turns.length, 0);
  if (count === 0) return null;
  return (
    <section className="panel-section" data-testid="rewound-panel">
      <h2 className="sidebar-title">
        {t("rewind.removedTitle")} <span className="count">{count}</span>
      </h2>
      {rewinds.map((a) => (
        <div key={a.file} className="rewound-archive" data-testid="rewound-archive" data-tip={`${t("rewind.kept")} ${a.file}`}>
          <p className="sidebar-empty">
            {t("rewind.removedTo")} {a.rewoundToTurn} · {when(a.at)}
          </p>
          <ul className="changes-list">
            {a.turns.map((turn) => (
              <li key={turn.turn} className="rewound-turn" data-testid="rewound-turn" data-turn={turn.turn}>
                <details>
                  <summary className="change-path">{turn.input}</summary>
                  <p className="rewound-reply">{turn.reply}</p>
                  <button type="button" className="btn btn-small" data-testid="rewound-reuse" onClick={() => onReuse(turn.input)}>
                    {t("rewind.reuse")}
                  </button>
                </details>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
