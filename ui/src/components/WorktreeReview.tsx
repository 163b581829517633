// The review of a git worktree: its whole diff against its base, file by file (DiffView),
// inline comments on lines ("Send to agent" makes them the next message of the worktree's
// session), "Apply to folder" (an undoable change-turn of the folder session), "Commit on
// branch" with a proposed message, "Open terminal here" and "Remove". Paths, diffs, reasons
// and proposed messages are untrusted text: rendered as text nodes only. The footer's buttons
// keep their places: it sits outside the scrolling body, and a button that cannot act now is
// disabled, never removed.
import { useCallback, useEffect, useMemo, useState } from "react";
import type { ApplyView } from "../bindings/app/ApplyView";
import type { ReviewComment } from "../bindings/app/ReviewComment";
import type { ReviewFile } from "../bindings/app/ReviewFile";
import type { ReviewView } from "../bindings/app/ReviewView";
import type { UpdateView } from "../bindings/app/UpdateView";
import type { DiffRow } from "../diff";
import { useT, type MessageKey } from "../i18n";
import * as ipc from "../ipc";
import { ApplyOutcome } from "./ApplyOutcome";
import { DiffView, type LineActions } from "./DiffView";
import { Overlay } from "./Overlay";

/** A comment being written or written, on row `index` of file `path`'s diff. */
type Draft = ReviewComment & { index: number };

const statusKey: Record<ReviewFile["status"], MessageKey> = {
  added: "wt.added",
  modified: "wt.modified",
  deleted: "wt.deleted",
};

/** The diff a file shows: its unified diff without git's header lines. */
function body(diff: string): string {
  return diff
    .split("\n")
    .filter((l) => !/^(diff --git |index |new file mode|deleted file mode|similarity index|rename (from|to) |old mode|new mode)/.test(l))
    .join("\n");
}

function FileReview({
  file,
  comments,
  onComment,
  onRemove,
}: {
  file: ReviewFile;
  comments: Draft[];
  onComment: (c: Draft) => void;
  onRemove: (c: Draft) => void;
}) {
  const t = useT();
  const [editing, setEditing] = useState<{ row: DiffRow; index: number; text: string } | null>(null);
  const diff = useMemo(() => body(file.diff), [file.diff]);
  const save = () => {
    if (editing === null || editing.text.trim() === "") return;
    const line = editing.row.kind === "del" ? (editing.row.oldNo ?? 0) : (editing.row.newNo ?? 0);
    onComment({ path: file.path, line, quote: editing.row.text, text: editing.text.trim(), index: editing.index });
    setEditing(null);
  };
  const lines: LineActions = {
    onLine: (row, index) => {
      const had = comments.find((c) => c.index === index);
      setEditing({ row, index, text: had?.text ?? "" });
    },
    below: (index) => {
      if (editing !== null && editing.index === index) {
        return (
          <span className="review-comment-box" data-testid="comment-box" onClick={(e) => e.stopPropagation()}>
            <textarea
              className="input"
              data-testid="comment-text"
              autoFocus
              rows={2}
              placeholder={t("wt.commentPlaceholder")}
              value={editing.text}
              onChange={(e) => setEditing({ ...editing, text: e.target.value })}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) save();
                if (e.key === "Escape") {
                  e.stopPropagation();
                  setEditing(null);
                }
              }}
            />
            <span className="review-comment-actions">
              <button type="button" className="btn btn-small btn-primary" data-testid="comment-save" disabled={editing.text.trim() === ""} onClick={save}>
                {t("wt.commentSave")}
              </button>
              <button type="button" className="btn btn-small" onClick={() => setEditing(null)}>
                {t("wt.cancel")}
              </button>
            </span>
          </span>
        );
      }
      const c = comments.find((x) => x.index === index);
      if (c === undefined) return null;
      return (
        <span className="review-comment" data-testid="review-comment" data-line={c.line}>
          <span className="review-comment-text">{c.text}</span>
          <button type="button" className="link-button" data-testid="comment-remove" onClick={() => onRemove(c)}>
            {t("wt.commentRemove")}
          </button>
        </span>
      );
    },
  };
  return (
    <section className="diff-file-section" data-testid="review-file" data-path={file.path}>
      <div className="diff-file-head">
        <span className="diff-file-path">{file.path}</span>
        <span className="review-status">{t(statusKey[file.status])}</span>
        <span className="plus-minus">
          <span className="pm-add">+{file.added}</span> <span className="pm-del">−{file.removed}</span>
        </span>
      </div>
      {file.binary ? <p className="sidebar-empty">{t("wt.binary")}</p> : <DiffView diff={diff} path={file.path} lines={lines} testId="review-diff" />}
    </section>
  );
}

/** What the review's actions reported last. */
type Outcome =
  | { kind: "applied"; view: ApplyView; settled: boolean }
  | { kind: "committed"; commit: string; branch: string }
  | { kind: "updated"; view: UpdateView }
  | { kind: "error"; text: string }
  | { kind: "refused"; text: string }
  | null;

export function WorktreeReview({
  name,
  onClose,
  onSend,
  onApplied,
  onTerminal,
  onRemoved,
  onHandoff,
  onOpenChat,
}: {
  name: string;
  /** Closes the review and shows chat `id`. */
  onOpenChat: (id: string) => void;
  /** Hands the worktree's newest session back to the folder with its history (null: it has none). */
  onHandoff: (() => Promise<ApplyView | null>) | null;
  onClose: () => void;
  /** Sends the comments' message as the next turn of the worktree's session. */
  onSend: (message: string) => Promise<void>;
  onApplied: (view: ApplyView) => void;
  onTerminal: () => void;
  onRemoved: () => void;
}) {
  const t = useT();
  const [review, setReview] = useState<ReviewView | null>(null);
  const [comments, setComments] = useState<Draft[]>([]);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [working, setWorking] = useState(false);
  const [commitMessage, setCommitMessage] = useState<string | null>(null);
  const [proposing, setProposing] = useState(false);
  const load = useCallback(() => {
    ipc.worktreeReview(name).then(setReview, (e: unknown) => setOutcome({ kind: "error", text: ipc.describeError(e) }));
  }, [name]);
  useEffect(load, [load]);
  const failed = (e: unknown) => {
    setWorking(false);
    setOutcome(ipc.errorCode(e) === "refused" ? { kind: "refused", text: ipc.describeError(e) } : { kind: "error", text: ipc.describeError(e) });
  };
  const send = () => {
    setWorking(true);
    ipc
      .reviewMessage(comments.map(({ path, line, quote, text }) => ({ path, line, quote, text })))
      .then(async (message) => {
        if (message === null) {
          setWorking(false);
          return;
        }
        await onSend(message);
        setComments([]);
        setWorking(false);
        onClose();
      })
      .catch(failed);
  };
  // `keep` / `take`: a conflicting path settled with the folder's or the worktree's version.
  const apply = (keep: string[] = [], take: string[] = []) => {
    setWorking(true);
    if (keep.length + take.length === 0) setOutcome(null);
    ipc.applyWorktree(name, false, keep, take).then((view) => {
      setWorking(false);
      setOutcome({ kind: "applied", view, settled: keep.length + take.length > 0 });
      onApplied(view);
      load();
    }, failed);
  };
  const startCommit = () => {
    setCommitMessage("");
    setProposing(true);
    ipc.proposeCommit(name).then(
      (m) => {
        setProposing(false);
        // The user may have started typing meanwhile: keep what they wrote.
        setCommitMessage((cur) => (cur === null || cur.trim() === "" ? (m ?? "") : cur));
      },
      () => setProposing(false),
    );
  };
  const commit = () => {
    if (commitMessage === null || commitMessage.trim() === "") return;
    setWorking(true);
    ipc.commitWorktree(name, commitMessage).then((c) => {
      setWorking(false);
      setCommitMessage(null);
      setOutcome({ kind: "committed", commit: c.commit, branch: c.branch });
      load();
    }, failed);
  };
  const update = () => {
    setWorking(true);
    setOutcome(null);
    ipc.updateWorktree(name, false).then((view) => {
      setWorking(false);
      setOutcome({ kind: "updated", view });
      load();
    }, failed);
  };
  const handoff = () => {
    if (onHandoff === null) return;
    setWorking(true);
    setOutcome(null);
    onHandoff().then((view) => {
      setWorking(false);
      if (view !== null && view.conflicts.length > 0) setOutcome({ kind: "applied", view, settled: false });
      else onClose();
    }, failed);
  };
  const remove = (force: boolean) => {
    setWorking(true);
    ipc.removeWorktree(name, force).then(() => {
      setWorking(false);
      onRemoved();
    }, failed);
  };
  const said = comments.filter((c) => c.text.trim() !== "").length;
  // Two fixed rows: the worktree's own actions, then what goes to the folder or the agent.
  const footer = (
    <footer className="review-actions" data-testid="review-actions">
      <div className="review-actions-row">
        <button type="button" className="btn" data-testid="worktree-terminal" onClick={onTerminal}>
          {t("wt.terminal")}
        </button>
        <button type="button" className="btn" data-testid="worktree-update" disabled={working} data-tip={t("wt.updateHint")} onClick={update}>
          {t("wt.update")}
        </button>
        <button type="button" className="btn" data-testid="worktree-commit" disabled={working || commitMessage !== null || (review?.files.length ?? 0) === 0} onClick={startCommit}>
          {t("wt.commit")}
        </button>
        <span className="review-actions-gap" />
        <button type="button" className="btn" data-testid="worktree-remove" disabled={working} onClick={() => remove(false)}>
          {t("wt.remove")}
        </button>
      </div>
      <div className="review-actions-row">
        <button
          type="button"
          className="btn"
          data-testid="worktree-handoff"
          disabled={working || onHandoff === null}
          data-tip={onHandoff === null ? t("wt.noSession") : t("wt.handoffHint")}
          onClick={handoff}
        >
          {t("wt.handoff")}
        </button>
        <button type="button" className="btn" data-testid="worktree-apply" disabled={working || (review?.files.length ?? 0) === 0} onClick={() => apply()}>
          {t("wt.apply")}
        </button>
        <span className="review-actions-gap" />
        <button type="button" className="btn btn-primary review-send" data-testid="review-send" disabled={working || said === 0} onClick={send}>
          {t("wt.send")} <span className="review-send-count">({said})</span>
        </button>
      </div>
    </footer>
  );
  return (
    <Overlay title={`${t("wt.reviewTitle")} ${name}`} onClose={onClose} testId="worktree-review" wide tall footer={footer}>
      {review !== null && (
        <p className="sidebar-empty">
          {review.branch} · {review.base.slice(0, 12)} · {t("wt.commentHint")}
        </p>
      )}
      {review !== null && review.files.length === 0 && <p className="sidebar-empty">{t("wt.noChanges")}</p>}
      <div className="diff-files">
        {review?.files.map((f) => (
          <FileReview
            key={f.path}
            file={f}
            comments={comments.filter((c) => c.path === f.path)}
            onComment={(c) => setComments((cur) => [...cur.filter((x) => !(x.path === c.path && x.index === c.index)), c])}
            onRemove={(c) => setComments((cur) => cur.filter((x) => !(x.path === c.path && x.index === c.index)))}
          />
        ))}
      </div>
      {outcome?.kind === "applied" && (
        <ApplyOutcome
          view={outcome.view}
          settled={outcome.settled}
          working={working}
          onKeep={(path) => apply([path], [])}
          onTake={(path) => apply([], [path])}
          onOpenChat={onOpenChat}
        />
      )}
      {outcome?.kind === "updated" && (
        <div className={`notice ${outcome.view.conflicts.length > 0 ? "notice-error" : ""}`} role="status" data-testid="update-result">
          <p>
            {outcome.view.upToDate ? t("wt.upToDate") : outcome.view.conflicts.length === 0 ? t("wt.updated") : t("wt.updateConflicts")}{" "}
            <code>{outcome.view.head.slice(0, 12)}</code>
          </p>
          {outcome.view.conflicts.length > 0 && (
            <ul>
              {outcome.view.conflicts.map((c) => (
                <li key={c} data-testid="update-conflict" data-path={c}>
                  {c}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {outcome?.kind === "committed" && (
        <div className="notice" role="status" data-testid="commit-result">
          {t("wt.committed")} {outcome.commit.slice(0, 12)} · {outcome.branch}
        </div>
      )}
      {(outcome?.kind === "error" || outcome?.kind === "refused") && (
        <div className="notice notice-error" role="alert" data-testid="review-error">
          <p>{outcome.text}</p>
          {outcome.kind === "refused" && (
            <button type="button" className="btn btn-small btn-danger" data-testid="worktree-remove-force" disabled={working} onClick={() => remove(true)}>
              {t("wt.removeAnyway")}
            </button>
          )}
        </div>
      )}
      {commitMessage !== null && (
        <div className="review-commit" data-testid="commit-form">
          {proposing && <p className="sidebar-empty">{t("wt.commitProposing")}</p>}
          <textarea className="input" data-testid="commit-message" rows={4} value={commitMessage} onChange={(e) => setCommitMessage(e.target.value)} />
          <span className="review-comment-actions">
            <button type="button" className="btn btn-small btn-primary" data-testid="commit-confirm" disabled={working || commitMessage.trim() === ""} onClick={commit}>
              {t("wt.commitDo")}
            </button>
            <button type="button" className="btn btn-small" onClick={() => setCommitMessage(null)}>
              {t("wt.cancel")}
            </button>
          </span>
        </div>
      )}
    </Overlay>
  );
}
