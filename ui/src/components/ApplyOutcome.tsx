// What an apply of a worktree did, in its review: the files applied, the folder chat whose
// timeline holds it (with a way there), and each conflicting file with the way to settle it:
// "Keep folder's version" or "Take worktree's version" (a typed fact from Rust says which
// conflicts these settle; the others are for the user's hands). Paths and reasons are
// untrusted text: rendered as text nodes only.
import type { ApplyView } from "../bindings/app/ApplyView";
import { plural, useT } from "../i18n";

export function ApplyOutcome({
  view,
  settled,
  working,
  onKeep,
  onTake,
  onOpenChat,
}: {
  view: ApplyView;
  /** A conflict was settled by this apply and none is left. */
  settled: boolean;
  working: boolean;
  onKeep: (path: string) => void;
  onTake: (path: string) => void;
  onOpenChat: (id: string) => void;
}) {
  const t = useT();
  const nothing = view.applied.length === 0 && view.conflicts.length === 0;
  return (
    <div className="notice" role="status" data-testid="apply-result">
      {nothing && !settled ? (
        <p>{t("wt.nothingApplied")}</p>
      ) : (
        <p>
          {t("wt.applied")}: {plural(t, view.applied.length, "count.file")}
          {view.checkpoint !== null && ` · ${t("wt.undoHint")}`}
        </p>
      )}
      {view.session !== null && view.checkpoint !== null && (
        <p data-testid="apply-recorded" data-session={view.session}>
          {t("wt.recordedIn")} <strong>{view.sessionName === null || view.sessionName === "" ? t("sidebar.untitled") : view.sessionName}</strong>{" "}
          <button type="button" className="link-button" data-testid="apply-open-chat" onClick={() => onOpenChat(view.session ?? "")}>
            {t("wt.openChat")}
          </button>
        </p>
      )}
      {settled && view.conflicts.length === 0 && <p data-testid="apply-settled">{t("wt.settled")}</p>}
      {view.conflicts.length > 0 && (
        <section data-testid="apply-conflicts">
          <h3>{t("wt.conflicts")}</h3>
          <ul className="apply-conflicts">
            {view.conflicts.map((c) => (
              <li key={c.path} data-testid="apply-conflict" data-path={c.path} data-resolvable={c.resolvable}>
                <span className="apply-conflict-path">
                  {c.path}: {c.reason}
                </span>
                {c.resolvable ? (
                  <span className="apply-conflict-actions">
                    <button type="button" className="btn btn-small" data-testid="conflict-keep" disabled={working} onClick={() => onKeep(c.path)}>
                      {t("wt.keepFolder")}
                    </button>
                    <button type="button" className="btn btn-small" data-testid="conflict-take" disabled={working} onClick={() => onTake(c.path)}>
                      {t("wt.takeWorktree")}
                    </button>
                  </span>
                ) : (
                  <span className="apply-conflict-hand">{t("wt.byHand")}</span>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
