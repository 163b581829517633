import { useState } from "react";
import type { BoardRow } from "../bindings/app/BoardRow";
import type { Progress } from "../bindings/Progress";
import { batchEstimate, batchNames, MAX_BATCH, type BatchEstimate } from "../batch";
import { useT, type Translate } from "../i18n";

/** Dollars as the dialog shows them. */
const usd = (v: number) => `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`;

/** What starting several sessions may cost, in words. */
function estimateWords(t: Translate, count: number, e: BatchEstimate): string {
  const first =
    e.eachUsd === null || e.totalUsd === null
      ? t("wt.batchNoEstimate")
      : t("wt.batchEstimate")
          .replace("{each}", usd(e.eachUsd))
          .replace("{basis}", String(e.basis))
          .replace("{total}", usd(e.totalUsd))
          .replace("{count}", String(count));
  const cap = e.capUsd === null ? t("wt.batchNoCap") : t("wt.batchCapped").replace("{cap}", usd(e.capUsd));
  return `${first} ${cap}`;
}

/**
 * "New worktree session": a name, "carry my uncommitted changes", progress while it is made.
 * With a count above one it starts a batch: one worktree and session per count, each given
 * the same first message, under one shared spending cap, with the estimate shown first.
 */
export function NewWorktree({
  unavailable,
  onCreate,
  onMove,
  onBatch,
  rows,
}: {
  unavailable: string | null;
  onCreate: (name: string, carry: boolean, onProgress: (p: Progress) => void) => Promise<boolean>;
  onMove: ((name: string) => Promise<boolean>) | null;
  /** Starts sessions in worktrees `names`, each with `prompt`, under one cap (dollars). */
  onBatch?: (names: string[], carry: boolean, prompt: string, capUsd: number | null) => Promise<boolean>;
  /** This folder's board rows: the estimate's basis. */
  rows?: readonly BoardRow[];
}) {
  const t = useT();
  const [count, setCount] = useState(1);
  const [prompt, setPrompt] = useState("");
  const [cap, setCap] = useState("");
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [carry, setCarry] = useState(false);
  const [move, setMove] = useState(false);
  const [working, setWorking] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const batch = count > 1 && !move && onBatch !== undefined;
  const capUsd = cap.trim() === "" ? null : Number(cap);
  const capBad = capUsd !== null && (!Number.isFinite(capUsd) || capUsd <= 0);
  const ready = name.trim() !== "" && !(batch && (prompt.trim() === "" || capBad));
  const create = () => {
    if (!ready || working) return;
    setWorking(true);
    setProgress(null);
    const made =
      batch && onBatch !== undefined
        ? onBatch(batchNames(name.trim(), count), carry, prompt.trim(), capUsd)
        : move && onMove !== null
          ? onMove(name.trim())
          : onCreate(name.trim(), carry, setProgress);
    made.then((ok) => {
      setWorking(false);
      setProgress(null);
      if (ok) {
        setOpen(false);
        setName("");
        setCarry(false);
        setMove(false);
        setCount(1);
        setPrompt("");
        setCap("");
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
      {onBatch !== undefined && !move && (
        <label className="worktree-carry">
          {t("wt.batchCount")}{" "}
          <input
            className="input worktree-count"
            type="number"
            min={1}
            max={MAX_BATCH}
            data-testid="worktree-count"
            value={count}
            disabled={working}
            onChange={(e) => setCount(Math.min(MAX_BATCH, Math.max(1, Math.round(Number(e.target.value) || 1))))}
          />
        </label>
      )}
      {batch && (
        <>
          <textarea
            className="input"
            data-testid="worktree-prompt"
            aria-label={t("wt.batchPrompt")}
            placeholder={t("wt.batchPrompt")}
            rows={3}
            value={prompt}
            disabled={working}
            onChange={(e) => setPrompt(e.target.value)}
          />
          <input
            className="input"
            data-testid="worktree-cap"
            aria-label={t("wt.batchCap")}
            placeholder={t("wt.batchCap")}
            inputMode="decimal"
            value={cap}
            disabled={working}
            onChange={(e) => setCap(e.target.value)}
          />
          {capBad && <p className="form-error">{t("budget.higher")}</p>}
          <p className="hint" data-testid="worktree-estimate">
            {estimateWords(t, count, batchEstimate(count, rows ?? [], capBad ? null : capUsd))}
          </p>
        </>
      )}
      {working && (
        <p className="worktree-progress" role="status" data-testid="worktree-progress">
          {progress === null ? t("wt.creating") : `${t("wt.progress")} ${progress.done}${progress.total !== null ? ` / ${progress.total}` : ""}`}
          {progress !== null && progress.total !== null && progress.total > 0 && <progress max={progress.total} value={progress.done} />}
        </p>
      )}
      <span className="worktree-form-actions">
        <button type="submit" className="btn btn-small btn-primary" data-testid="worktree-create" disabled={working || !ready}>
          {batch ? t("wt.batchStart").replace("{n}", String(count)) : t("wt.create")}
        </button>
        <button type="button" className="btn btn-small" disabled={working} onClick={() => setOpen(false)}>
          {t("wt.cancel")}
        </button>
      </span>
    </form>
  );
}
