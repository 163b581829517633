import { useCallback, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { useT } from "../i18n";
import * as ipc from "../ipc";
import { mentionAt, pickMention, rankFiles, type MentionQuery } from "../mentions";

type Open = { at: MentionQuery; caret: number; active: number };

/**
 * `@path` completion for the composer: typing `@` opens a list of the workspace's files
 * (fetched each time it opens, so new files show), ranked as the query grows. Arrows move,
 * Enter or Tab picks, Esc closes (and nothing else: the turn is not stopped).
 */
export function useMentions(setText: (text: string, caret: number) => void) {
  const [open, setOpen] = useState<Open | null>(null);
  const [files, setFiles] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The `@` the user dismissed with Esc stays closed until the caret leaves it.
  const dismissed = useRef<number | null>(null);
  const loading = useRef(false);

  const query = open?.at.query;
  const matches = useMemo(
    () => (query !== undefined && files !== null ? rankFiles(files, query) : []),
    [files, query],
  );

  /** Follows the text and caret after each edit or caret move. */
  const track = useCallback((text: string, caret: number) => {
    const at = mentionAt(text, caret);
    if (at === null || at.start === dismissed.current) {
      if (at === null) dismissed.current = null;
      setOpen(null);
      return;
    }
    setOpen((o) => ({ at, caret, active: o !== null && o.at.start === at.start && o.at.query === at.query ? o.active : 0 }));
    if (!loading.current && (files === null || open === null)) {
      loading.current = true;
      ipc.workspaceFiles().then(
        (idx) => {
          loading.current = false;
          setFiles(idx.files);
          setError(null);
        },
        (e: unknown) => {
          loading.current = false;
          setError(ipc.describeError(e));
        },
      );
    }
  }, [files, open]);

  const pick = useCallback(
    (text: string, path: string) => {
      if (open === null) return;
      const next = pickMention(text, open.at, open.caret, path);
      dismissed.current = null;
      setOpen(null);
      setText(next.text, next.caret);
    },
    [open, setText],
  );

  /** Handles the list's keys; true when the key was used (the composer must not act on it). */
  const onKeyDown = useCallback(
    (event: KeyboardEvent<HTMLTextAreaElement>, text: string): boolean => {
      if (open === null) return false;
      const n = matches.length;
      const move = (d: number) => setOpen({ ...open, active: n === 0 ? 0 : (open.active + d + n) % n });
      if (event.key === "Escape") {
        dismissed.current = open.at.start;
        setOpen(null);
      } else if (event.key === "ArrowDown") move(1);
      else if (event.key === "ArrowUp") move(-1);
      else if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && !event.nativeEvent.isComposing && n > 0) {
        pick(text, matches[Math.min(open.active, n - 1)] ?? "");
      } else return false;
      event.preventDefault();
      event.stopPropagation();
      return true;
    },
    [open, matches, pick],
  );

  const close = useCallback(() => setOpen(null), []);
  return { open: open !== null, active: open?.active ?? 0, matches, loading: open !== null && files === null, error, track, pick, onKeyDown, close };
}

/** The completion list shown above the prompt while an `@` mention is typed. */
export function MentionList({
  matches,
  active,
  loading,
  error,
  onPick,
}: {
  matches: string[];
  active: number;
  loading: boolean;
  error: string | null;
  onPick: (path: string) => void;
}) {
  const t = useT();
  return (
    <div className="mention-list" role="listbox" aria-label={t("mentions.title")} data-testid="mention-list">
      {error !== null && <div className="mention-empty" role="alert">{error}</div>}
      {error === null && matches.length === 0 && <div className="mention-empty">{t(loading ? "mentions.loading" : "mentions.none")}</div>}
      {matches.map((path, i) => {
        const slash = path.lastIndexOf("/");
        return (
          <button
            type="button"
            key={path}
            role="option"
            aria-selected={i === active}
            className={`mention-option ${i === active ? "mention-active" : ""}`}
            data-testid="mention-option"
            data-path={path}
            // Keep the focus in the prompt.
            onMouseDown={(e) => e.preventDefault()}
            onClick={() => onPick(path)}
          >
            <span className="mention-name">{path.slice(slash + 1)}</span>
            {slash > 0 && <span className="mention-dir">{path.slice(0, slash)}</span>}
          </button>
        );
      })}
    </div>
  );
}
