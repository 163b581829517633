import { useEffect, useState } from "react";
import type { WorktreeDiskView } from "../bindings/app/WorktreeDiskView";
import { plural, useT } from "../i18n";
import { describeError, setWorktreeBudget, worktreeDisk } from "../ipc";

/** Bytes as gigabytes with one decimal. */
export function gigabytes(bytes: number): string {
  return (bytes / (1024 * 1024 * 1024)).toFixed(1);
}

/**
 * Settings' worktree section: what this repository's worktrees take on disk (build output
 * included), per worktree, against the disk budget, which is set here for every face (`cairn`
 * reads it from the state dir). Loaded on its own when Settings open, so the rest of Settings
 * never waits for the disk walk.
 */
export function WorktreeDisk() {
  const t = useT();
  const [view, setView] = useState<WorktreeDiskView | null>(null);
  const [budget, setBudget] = useState(20);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const shown = (v: WorktreeDiskView) => {
    setView(v);
    setBudget(Math.round(v.budgetBytes / (1024 * 1024 * 1024)));
    setError(null);
  };
  useEffect(() => {
    worktreeDisk().then(shown, (e: unknown) => setError(describeError(e)));
  }, []);
  if (view === null) return error === null ? null : <p className="form-error">{error}</p>;
  const save = () =>
    setWorktreeBudget(budget).then(
      (v) => {
        shown(v);
        setSaved(true);
        window.setTimeout(() => setSaved(false), 1500);
      },
      (e: unknown) => setError(describeError(e)),
    );
  const usage = view.usage;
  return (
    <div data-testid="worktree-disk">
      <p className="hint" data-testid="worktree-usage" data-over={usage?.overBudget ?? false}>
        {usage === null
          ? t("settings.worktreeNoRepo")
          : plural(t, usage.count, "settings.worktreeUsage")
              .replace("{size}", gigabytes(usage.bytes))
              .replace("{budget}", gigabytes(usage.budgetBytes))}
        {usage?.overBudget === true && <strong> {t("settings.worktreeOver")}</strong>}
      </p>
      {usage !== null && usage.worktrees.length > 0 && (
        <ul className="rules">
          {usage.worktrees.map(([name, bytes]) => (
            <li key={name} className="rule" data-testid="worktree-size" data-name={name}>
              <code>{name}</code> <span className="hint">{gigabytes(bytes)} GB</span>
            </li>
          ))}
        </ul>
      )}
      <div className="form-row">
        <label htmlFor="worktree-budget">{t("settings.worktreeBudget")}</label>
        <input
          id="worktree-budget"
          className="input input-narrow"
          type="number"
          min={1}
          max={10000}
          data-testid="worktree-budget"
          value={budget}
          disabled={view.fromEnv}
          onChange={(e) => setBudget(Math.min(10000, Math.max(1, Math.round(Number(e.target.value) || 1))))}
        />
        <button type="button" className="btn" data-testid="worktree-budget-save" disabled={view.fromEnv} onClick={save}>
          {t("settings.worktreeBudgetSet")}
        </button>
        {saved && <span className="saved">{t("settings.saved")}</span>}
      </div>
      <p className="hint">{view.fromEnv ? t("settings.worktreeBudgetEnv") : t("settings.worktreeBudgetHint")}</p>
      {error !== null && <p className="form-error">{error}</p>}
    </div>
  );
}
