import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { ApprovalDecision } from "../bindings/ApprovalDecision";
import type { TurnStatus } from "../bindings/TurnStatus";
import { Follow } from "../follow";
import { elapsedText, phaseKey, workingPhase } from "../working";
import { plural, useT, type MessageKey } from "../i18n";
import type { Item } from "../transcript";
import { MessageAttachments } from "./Attachments";
import { ElicitationCard } from "./ElicitationCard";
import { compact } from "./Meter";
import { RaiseBudget } from "./RaiseBudget";
import { DirectoryCard, PlanCard, QuestionCard, type Answerers } from "./Interactions";
import { CopyButton, Markdown } from "./Markdown";
import { StoneMark } from "./StoneMark";
import { CheckpointMarkers, type TimelineActions } from "./Timeline";
import { ToolCard } from "./ToolCard";
import { formatCount } from "../format";

// Model output is untrusted: text renders as text nodes, markdown through ../markdown.ts.

const statusKey: Record<TurnStatus, MessageKey> = {
  completed: "chat.turnCompleted",
  max_iterations_exceeded: "chat.turnMax",
  interrupted: "chat.turnInterrupted",
  error: "chat.turnError",
};

/** What the transcript needs from the chat view. */
export type TranscriptActions = Answerers & {
  approve: (reqId: string, decision: ApprovalDecision) => void;
  /** "Always allow in this project": keeps the request's allowance as a project rule. */
  allowInProject?: (reqId: string) => void;
  retry: () => void;
  nativeApprovals: boolean;
  running: boolean;
  timeline: TimelineActions;
  /** Opens Settings (offered by a rejected-key notice). */
  openSettings?: () => void;
  /** Goes on after the spending cap was raised (offered by a `budget_exceeded` notice). */
  goOn?: () => void;
  /** Loads the page of turns before the first one shown; undefined when none is older. */
  earlier?: () => void;
};

const Row = memo(function Row({ item, actions, last }: { item: Item; actions: TranscriptActions; last: boolean }) {
  const t = useT();
  switch (item.kind) {
    case "user":
      return (
        <article
          className={`msg msg-user ${item.steering ? "msg-steering" : ""} ${item.waiting === true ? "msg-waiting" : ""}`}
          data-testid="user-message"
          data-steering={item.steering}
          data-waiting={item.waiting === true}
        >
          <div className="msg-role">
            {item.steering ? t("chat.steered") : t("chat.you")}
            {item.waiting === true && <span className="msg-waiting-note"> · {t("chat.waitingSlot")}</span>}
          </div>
          <div className="msg-text">{item.text}</div>
          <MessageAttachments images={item.images ?? []} files={item.files ?? []} />
        </article>
      );
    case "assistant":
      if (item.text === "" && item.reasoning === "" && !item.streaming) return <div className="row-empty" />;
      return (
        <article className="msg msg-assistant" data-testid="assistant-message" data-streaming={item.streaming ? "true" : "false"}>
          <div className="msg-role">{t("chat.cairn")}</div>
          {item.reasoning !== "" && (
            <details className="msg-reasoning" data-testid="reasoning">
              <summary>{t("chat.reasoning")}</summary>
              <div className="msg-text">{item.reasoning}</div>
            </details>
          )}
          {(item.text !== "" || item.streaming) && (
            <div className="msg-body">
              <Markdown text={item.text} testId="assistant-text" />
              {item.streaming && <span className="caret" aria-hidden="true" />}
            </div>
          )}
          {(item.usage !== null || (!item.streaming && item.text !== "")) && (
            <div className="msg-meta">
              {item.usage !== null && (
                <span>
                  {formatCount(item.usage.input_tokens)} in · {formatCount(item.usage.output_tokens)} out
                  {item.usage.cached_input_tokens > 0 && ` · ${formatCount(item.usage.cached_input_tokens)} cached`}
                </span>
              )}
              {!item.streaming && item.text !== "" && <CopyButton text={() => item.text} label={t("chat.copyAnswer")} testId="copy-answer" className="copy-answer" />}
            </div>
          )}
        </article>
      );
    case "tool":
      return <ToolCard item={item} onAnswer={actions.approve} onAllowInProject={actions.allowInProject} native={actions.nativeApprovals} />;
    case "notice":
      return (
        <div className={`notice notice-${item.tone}`} data-testid="notice" role={item.tone === "error" ? "alert" : "status"}>
          {item.retry === true && <strong>{t("chat.retrying")} </strong>}
          {item.words !== undefined ? t(item.words) : item.text}
          {item.action === "budget" && actions.goOn !== undefined && !actions.running && <RaiseBudget onRaised={actions.goOn} />}
          {item.action === "settings" && actions.openSettings !== undefined && (
            <button type="button" className="btn btn-small notice-action" data-testid="notice-open-settings" onClick={actions.openSettings}>
              {t("chat.openSettings")}
            </button>
          )}
        </div>
      );
    case "compaction":
      return (
        <div className="compaction" data-testid="compaction" data-done={item.done}>
          <span className="turn-end-rule" />
          {item.done ? (
            <details>
              <summary>
                {t("chat.compacted")} · {item.before} → {plural(t, item.after, "chat.messages")}
                {item.state !== null && (
                  <span className="compaction-tokens" data-testid="compaction-tokens">
                    {" "}· ~{compact(item.state.tokensBefore)} → ~{compact(item.state.tokensAfter)} {t("meter.tokens")}
                  </span>
                )}
              </summary>
              {item.state !== null && item.method !== "trimmed" && item.method !== "elide" && item.method !== "none" && (
                <div className="compaction-by" data-testid="compaction-by">
                  {t("chat.compactedBy")} {item.state.summaryModel}
                  {item.state.summaryEffort !== undefined && ` (${item.state.summaryEffort})`}
                </div>
              )}
              {item.summary !== null && <div className="msg-text compaction-summary">{item.summary}</div>}
            </details>
          ) : (
            <span>{t("chat.compacting")}</span>
          )}
          <span className="turn-end-rule" />
        </div>
      );
    case "question":
      return <QuestionCard item={item} answer={actions.question} />;
    case "plan":
      return <PlanCard item={item} answer={actions.plan} />;
    case "directory":
      return <DirectoryCard item={item} answer={actions.directory} />;
    case "elicitation":
      return <ElicitationCard item={item} answer={actions.elicitation} />;
    case "turn_end":
      return (
        <div className={`turn-end turn-end-${item.status}`} data-testid="turn-end" data-status={item.status}>
          <span className="turn-end-rule" />
          <span>
            {t(statusKey[item.status])} · {plural(t, item.iterations, "count.iteration")}
          </span>
          {item.retriable && last && !actions.running && (
            <button type="button" className="btn btn-small" data-testid="retry" onClick={actions.retry}>
              {t("chat.retry")}
            </button>
          )}
          <span className="turn-end-rule" />
          <CheckpointMarkers turn={item.turn} actions={actions.timeline} busy={actions.running} />
        </div>
      );
  }
});

/**
 * What the agent is doing while a turn runs, with the time spent in that phase (so a slow or
 * stalled model never leaves the transcript silent). Ticks once a second.
 */
function Working({ items, running }: { items: Item[]; running: boolean }) {
  const t = useT();
  const phase = workingPhase(items, running);
  const key = phase === null ? null : phaseKey(phase);
  const [since, setSince] = useState(() => ({ key, at: Date.now() }));
  const [now, setNow] = useState(() => Date.now());
  if (since.key !== key) setSince({ key, at: Date.now() });
  useEffect(() => {
    if (key === null) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [key]);
  if (phase === null) return null;
  const label =
    phase.kind === "tool"
      ? `${t("working.tool")} ${phase.name}`
      : phase.kind === "approval"
        ? `${t("working.approval")} ${phase.name}`
        : t(phase.kind === "writing" ? "working.writing" : "working.model");
  return (
    <div className="working" data-testid="working" data-phase={phase.kind} role="status">
      <span className="working-dot" aria-hidden="true" />
      <span>{label}</span>
      <span className="working-elapsed">{elapsedText(Math.max(0, now - since.at))}</span>
    </div>
  );
}

/**
 * The chat transcript, virtualised: only the rows in view (plus a margin) are in the DOM, so
 * a session of thousands of messages scrolls and streams smoothly. Follows the bottom while
 * new content arrives unless the user scrolled up (see ../follow.ts).
 */
export function Transcript({ items, actions, sent = 0 }: { items: Item[]; actions: TranscriptActions; sent?: number }) {
  const t = useT();
  const scroller = useRef<HTMLDivElement>(null);
  const [follow] = useState(() => new Follow());
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 96,
    overscan: 6,
    getItemKey: (i) => items[i]?.id ?? i,
  });
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (el === null) return;
    follow.scrolled(el.scrollHeight - el.scrollTop - el.clientHeight, performance.now());
  }, [follow]);
  const intent = useCallback(() => follow.intent(performance.now()), [follow]);
  // A press ends wherever the pointer is let go.
  useEffect(() => {
    const up = () => follow.press(false);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
    return () => {
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
    };
  }, [follow]);
  // The user's own prompt always brings the view down to it, even when they had scrolled up.
  useLayoutEffect(() => {
    if (sent > 0) follow.pinned = true;
  }, [sent, follow]);
  useLayoutEffect(() => {
    if (follow.pinned && items.length > 0) virtualizer.scrollToIndex(items.length - 1, { align: "end" });
  }, [items, virtualizer, follow, sent]);
  // How every turn shown ended, in order: rows out of view are not in the DOM, so this is
  // where scripts (and the E2E tests) count turns. Built when the items change, not on each
  // scroll frame (a long session has thousands of turns).
  const ends = useMemo(() => items.flatMap((i) => (i.kind === "turn_end" ? [i.status] : [])).join(" "), [items]);
  // Keep following while rows grow after measuring (streamed text, expanded output).
  const empty = items.length === 0;
  useEffect(() => {
    const el = scroller.current;
    if (el === null || typeof ResizeObserver === "undefined") return;
    const inner = el.firstElementChild;
    if (inner === null) return;
    const observer = new ResizeObserver(() => {
      if (follow.pinned) el.scrollTop = el.scrollHeight;
    });
    observer.observe(inner);
    return () => observer.disconnect();
  }, [empty, follow]);

  if (items.length === 0) {
    return (
      <section className="transcript transcript-empty" data-testid="transcript" aria-live="polite">
        <div className="empty-state">
          <StoneMark size={56} />
          <h1>{t("chat.empty.title")}</h1>
          <p>{t("chat.empty.lead")}</p>
        </div>
        {/* Change-turns of a chat that ran no turn (a worktree's applies) stay undoable here. */}
        <CheckpointMarkers turn={0} actions={actions.timeline} busy={actions.running} />
        <Working items={items} running={actions.running} />
      </section>
    );
  }
  const rows = virtualizer.getVirtualItems();
  return (
    <section
      className="transcript"
      data-testid="transcript"
      data-turn-ends={ends}
      ref={scroller}
      onScroll={onScroll}
      onWheel={intent}
      onTouchMove={intent}
      onKeyDown={intent}
      onPointerDown={() => follow.press(true)}
      aria-live="polite"
    >
      {actions.earlier !== undefined && (
        <div className="transcript-earlier">
          <button type="button" className="btn btn-small" data-testid="load-earlier" onClick={actions.earlier}>
            {t("chat.earlier")}
          </button>
        </div>
      )}
      <div className="transcript-sizer" style={{ height: virtualizer.getTotalSize() }}>
        <div className="transcript-inner" style={{ transform: `translateY(${rows[0]?.start ?? 0}px)` }}>
          {rows.map((row) => {
            const item = items[row.index];
            if (item === undefined) return null;
            return (
              <div key={row.key} data-index={row.index} ref={virtualizer.measureElement} className="transcript-row">
                <Row item={item} actions={actions} last={row.index === items.length - 1} />
              </div>
            );
          })}
        </div>
      </div>
      <Working items={items} running={actions.running} />
    </section>
  );
}
