import { useState } from "react";
import type { Progress } from "../bindings/Progress";
import { useT } from "../i18n";

/** "New worktree session": a name, "carry my uncommitted changes", progress while it is made. */
export function NewWorktree({
  unavailable,
  onCreate,
  onMove,
}: {
  unavailable: string | null;
  onCreate: (name: string, carry: boolean, onProgress: (p: Progress) => void) => Promise<boolean>;
  onMove: ((name: string) => Promise<boolean>) | null;
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
