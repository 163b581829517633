import { useCallback, useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { CommandView } from "../bindings/app/CommandView";
import { useT } from "../i18n";
import * as ipc from "../ipc";
import { pickCommand, rankCommands, slashAt, SOURCE_KEY } from "../slash";

type Open = { query: string; active: number };

/**
 * `/command` completion for the composer: a `/` at the very start opens the workspace's
 * commands (built-ins, the user's and the project's; fetched each time it opens, so new
 * command files show), narrowed as the name grows. Arrows move, Tab or Enter completes (Enter
 * on a name already complete sends), Esc closes.
 */
export function useSlashCommands(setText: (text: string, caret: number) => void) {
  const [open, setOpen] = useState<Open | null>(null);
  const [commands, setCommands] = useState<CommandView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const dismissed = useRef(false);
  const loading = useRef(false);

  const query = open?.query;
  const matches = useMemo(() => (query !== undefined && commands !== null ? rankCommands(commands, query) : []), [commands, query]);

  /** Follows the text and caret after each edit or caret move. */
  const track = useCallback(
    (text: string, caret: number) => {
      const q = slashAt(text, caret);
      if (q === null || dismissed.current) {
        if (q === null) dismissed.current = false;
        setOpen(null);
        return;
      }
      setOpen((o) => ({ query: q, active: o !== null && o.query === q ? o.active : 0 }));
      if (!loading.current && (commands === null || open === null)) {
        loading.current = true;
        ipc.listCommands().then(
          (list) => {
            loading.current = false;
            setCommands(list);
            setError(null);
          },
          (e: unknown) => {
            loading.current = false;
            setError(ipc.describeError(e));
          },
        );
      }
    },
    [commands, open],
  );

  const pick = useCallback(
    (text: string, name: string) => {
      const next = pickCommand(text, name);
      setOpen(null);
      setText(next.text, next.caret);
    },
    [setText],
  );

  /** Handles the list's keys; true when the key was used (the composer must not act on it). */
  const onKeyDown = useCallback(
    (event: KeyboardEvent<HTMLTextAreaElement>, text: string): boolean => {
      if (open === null) return false;
      const n = matches.length;
      const move = (d: number) => setOpen({ ...open, active: n === 0 ? 0 : (open.active + d + n) % n });
      const chosen = matches[Math.min(open.active, n - 1)];
      if (event.key === "Escape") {
        dismissed.current = true;
        setOpen(null);
      } else if (event.key === "ArrowDown") move(1);
      else if (event.key === "ArrowUp") move(-1);
      else if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && !event.nativeEvent.isComposing && chosen !== undefined) {
        // A name typed out in full sends on Enter, as if the list were not there.
        if (event.key === "Enter" && chosen.name === open.query) {
          setOpen(null);
          return false;
        }
        pick(text, chosen.name);
      } else return false;
      event.preventDefault();
      event.stopPropagation();
      return true;
    },
    [open, matches, pick],
  );

  const close = useCallback(() => setOpen(null), []);
  return { open: open !== null, active: open?.active ?? 0, matches, loading: open !== null && commands === null, error, track, pick, onKeyDown, close };
}

/** The completion list shown above the prompt while a `/command` is typed. */
export function SlashList({
  matches,
  active,
  loading,
  error,
  onPick,
}: {
  matches: CommandView[];
  active: number;
  loading: boolean;
  error: string | null;
  onPick: (name: string) => void;
}) {
  const t = useT();
  return (
    <div className="mention-list" role="listbox" aria-label={t("commands.title")} data-testid="command-list">
      {error !== null && <div className="mention-empty" role="alert">{error}</div>}
      {error === null && matches.length === 0 && <div className="mention-empty">{t(loading ? "commands.loading" : "commands.none")}</div>}
      {matches.map((c, i) => (
        <button
          type="button"
          key={`${c.source}:${c.name}`}
          role="option"
          aria-selected={i === active}
          className={`mention-option ${i === active ? "mention-active" : ""}`}
          data-testid="command-option"
          data-name={c.name}
          // Keep the focus in the prompt.
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => onPick(c.name)}
        >
          <span className="mention-name">/{c.name}</span>
          {c.argumentHint !== undefined && (
            <span className="mention-hint" data-testid="command-hint">
              {c.argumentHint}
            </span>
          )}
          <span className="command-source">{t(SOURCE_KEY[c.source])}</span>
          <span className="mention-dir">{c.description}</span>
        </button>
      ))}
    </div>
  );
}
