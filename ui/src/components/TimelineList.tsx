import { plural, useT } from "../i18n";
import type { TimelineActions } from "./Timeline";

/**
 * The session's checkpoints in the side panel, oldest first, each with its checkpoint number
 * and chat turn: a click shows that turn in the transcript (its page loaded when it is far
 * back in a long session). The markers under each turn keep the diff and restore actions.
 */
export function TimelineList({ actions, onJump }: { actions: TimelineActions; onJump: (turn: number) => void }) {
  const t = useT();
  const checkpoints = actions.timeline?.checkpoints ?? [];
  if (checkpoints.length === 0) return null;
  return (
    <section className="panel-section" data-testid="timeline-list">
      <h2 className="sidebar-title">
        {t("timeline.title")} <span className="count">{checkpoints.length}</span>
      </h2>
      <ol className="timeline-list">
        {checkpoints.map((c) => (
          <li key={c.turn}>
            <button
              type="button"
              className="timeline-entry"
              data-testid="timeline-entry"
              data-turn={c.turn}
              data-session-turn={c.sessionTurn}
              data-tip={t("timeline.jump")}
              onClick={() => onJump(c.sessionTurn)}
            >
              <span className="checkpoint-number">{c.turn} · </span>
              <span className="timeline-entry-turn">
                {t("timeline.turn")} {c.sessionTurn}
              </span>
              <span className="timeline-entry-summary">{c.summary}</span>
              <span className="timeline-entry-files">{plural(t, c.files.length, "count.file")}</span>
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
