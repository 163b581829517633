import { useEffect, useRef } from "react";
import { plural, useT } from "../i18n";
import type { Find } from "../hooks/useFind";

/**
 * The search field of the shown session (Ctrl+F): Enter and Shift+Enter go to the next and
 * previous match (its page loaded, the match highlighted), Escape closes it.
 */
export function FindBar({ find }: { find: Find }) {
  const t = useT();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (find.focusAt > 0) {
      input.current?.focus();
      input.current?.select();
    }
  }, [find.focusAt]);
  const { state } = find;
  if (!state.open) return null;
  const result = state.result !== null && state.result.query === state.query.trim() ? state.result : null;
  const hits = result?.hits.length ?? 0;
  return (
    <div className="find-bar" role="search" data-testid="find-bar">
      <input
        ref={input}
        className="find-input"
        data-testid="find-input"
        type="search"
        value={state.query}
        placeholder={t("find.placeholder")}
        aria-label={t("find.label")}
        onChange={(e) => find.type(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            find.step(e.shiftKey);
          } else if (e.key === "Escape") {
            e.preventDefault();
            // Not the app's Esc (stop the turn): this one only closes the field.
            e.stopPropagation();
            find.close();
          }
        }}
      />
      <span className="find-count" data-testid="find-count" data-hits={hits} data-current={state.current} aria-live="polite">
        {state.searching && result === null
          ? t("find.searching")
          : result === null
            ? ""
            : hits === 0
              ? t("find.none")
              : `${state.current + 1} ${t("find.of")} ${hits} · ${plural(t, result.matches, "find.matches")}`}
        {result !== null && result.truncated && <span data-tip={t("find.more")}> +</span>}
      </span>
      {result !== null && result.skippedLines > 0 && (
        <span className="find-skipped" data-testid="find-skipped">
          {plural(t, result.skippedLines, "find.skipped")}
        </span>
      )}
      <button type="button" className="icon-button" aria-label={t("find.prev")} data-tip={t("find.prev")} data-testid="find-prev" disabled={hits === 0} onClick={() => find.step(true)}>
        ↑
      </button>
      <button type="button" className="icon-button" aria-label={t("find.next")} data-tip={t("find.next")} data-testid="find-next" disabled={hits === 0} onClick={() => find.step(false)}>
        ↓
      </button>
      <button type="button" className="icon-button" aria-label={t("find.close")} data-tip={t("find.close")} data-testid="find-close" onClick={find.close}>
        ×
      </button>
    </div>
  );
}
