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
import { baseId, hitItemId, indexOfTurn } from "../historyWindow";
import { useFind } from "../hooks/useFind";
import { useLongTranscript } from "../hooks/useLongTranscript";
import { markMatches, splitMatches, unmark } from "../sessionFind";
import { FindBar } from "./FindBar";

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
  /** Loads the page of turns before the first one the live chat holds; undefined when none is older. */
  earlier?: () => Promise<void>;
  /** Shows a failure (a page or a search that could not be read). */
  fail: (e: unknown) => void;
};

/** Distance (px) from either end of the transcript within which the next page loads. */
const EDGE_PX = 600;

/** Whether a key press happened in a text field or a dialog (its own keys). */
function inField(target: EventTarget | null): boolean {
  const el = target instanceof HTMLElement ? target : null;
  return el !== null && (el.isContentEditable || el.closest("input, textarea, select, [role=dialog]") !== null);
}

/** Text with the matches of `query` marked. */
function Marked({ text, query }: { text: string; query: string }) {
  return (
    <>
      {splitMatches(text, query).map((p, i) =>
        p.match ? (
          <mark key={i} className="find-mark" data-testid="find-mark">
            {p.text}
          </mark>
        ) : (
          p.text
        ),
      )}
    </>
  );
}

/** An answer's rendered markdown with the matches of `query` marked in it. */
function MarkedAnswer({ text, query }: { text: string; query: string | null }) {
  const body = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = body.current;
    if (el === null || query === null) return;
    markMatches(el, query);
    return () => unmark(el);
  }, [text, query]);
  return (
    <div ref={body}>
      <Markdown text={text} testId="assistant-text" />
    </div>
  );
}

const Row = memo(function Row({ item, actions, last, mark }: { item: Item; actions: TranscriptActions; last: boolean; mark: string | null }) {
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
          <div className="msg-text">{mark === null ? item.text : <Marked text={item.text} query={mark} />}</div>
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
              {mark === null ? <Markdown text={item.text} testId="assistant-text" /> : <MarkedAnswer text={item.text} query={mark} />}
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
 * new content arrives unless the user scrolled up (see ../follow.ts). A long session's older
 * turns page in as the view nears the top (a window of them once the live chat holds enough,
 * see ../hooks/useLongTranscript.ts); Home goes to the first turn, End back to the newest,
 * Ctrl+F searches the whole session, and `jump` (a timeline entry) shows a turn.
 */
export function Transcript({
  items: live,
  actions,
  sent = 0,
  historyBefore = null,
  jump = null,
}: {
  items: Item[];
  actions: TranscriptActions;
  sent?: number;
  historyBefore?: number | null;
  jump?: { turn: number; at: number } | null;
}) {
  const t = useT();
  const scroller = useRef<HTMLDivElement>(null);
  const [follow] = useState(() => new Follow());
  const long = useLongTranscript(live, historyBefore, actions.earlier, actions.fail);
  const items = long.items;
  const isLive = long.window === null;
  const liveRef = useRef(isLive);
  liveRef.current = isLive;
  const find = useFind(long.showHit, actions.fail);
  const markId = find.hit === null ? null : hitItemId(find.hit);
  const markQuery = find.state.query.trim();
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 96,
    overscan: 6,
    getItemKey: (i) => items[i]?.id ?? i,
  });
  // The rows in view at the last scroll (untagged ids and their offset from the top): where
  // the view is put back after a page came in above or below it, so it does not jump.
  const view = useRef<{ id: string; offset: number }[]>([]);
  const keep = useRef(false);
  const remember = useCallback(() => {
    const el = scroller.current;
    if (el === null) return;
    const top = el.scrollTop;
    // From every row's measured (or estimated) place, not the rendered range: that may still
    // be where the view was before a long jump.
    virtualizer.getVirtualItems();
    const all = virtualizer.measurementsCache;
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((all[mid]?.end ?? 0) <= top) lo = mid + 1;
      else hi = mid;
    }
    const out: { id: string; offset: number }[] = [];
    for (let i = lo; i < all.length && out.length < 12; i++) {
      const r = all[i];
      if (r === undefined || r.start >= top + el.clientHeight) break;
      out.push({ id: baseId(String(r.key)), offset: r.start - top });
    }
    view.current = out;
  }, [virtualizer]);
  const page = useCallback(
    (load: () => Promise<boolean>) => {
      // The page under way keeps the view when it comes; this request would be refused.
      if (long.busy()) return;
      remember();
      keep.current = true;
      follow.pinned = false;
      load().then(
        (ok) => {
          if (!ok) keep.current = false;
        },
        () => {
          keep.current = false;
        },
      );
    },
    [remember, follow, long],
  );
  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (el === null) return;
    const distance = el.scrollHeight - el.scrollTop - el.clientHeight;
    if (liveRef.current) follow.scrolled(distance, performance.now());
    // Remembered while a page loads too: the view is kept where the user is when it comes.
    remember();
    if (keep.current) return;
    if (el.scrollTop < EDGE_PX && long.hasOlder) page(long.older);
    else if (!liveRef.current && distance < EDGE_PX) page(long.newer);
  }, [follow, remember, page, long]);
  // Put the view back on the rows it showed when a page came in (same ids, new offsets).
  // Through the virtualiser, not `scrollTop`: it corrects the offset as rows are measured
  // from the offset it knows, and a stale one (the old page's) would undo the move and jump
  // a page ahead when the window dropped its far end.
  const kept = useRef(false);
  useLayoutEffect(() => {
    const el = scroller.current;
    kept.current = false;
    if (!keep.current || el === null) return;
    keep.current = false;
    // Measured again for the new items (sizes kept by id), then read.
    virtualizer.getVirtualItems();
    const measured = virtualizer.measurementsCache;
    for (const v of view.current) {
      const i = items.findIndex((it) => baseId(it.id) === v.id);
      const at = measured[i];
      if (i === -1 || at === undefined) continue;
      virtualizer.scrollToOffset(Math.max(0, at.start - v.offset));
      kept.current = true;
      return;
    }
  }, [items, virtualizer]);
  // A jump (Home, End, a search hit, a timeline entry) once the rows it goes to are there.
  const target = long.target;
  const reached = long.reached;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (target === null || el === null) return;
    if (target.kind === "bottom") {
      follow.pinned = true;
      if (items.length > 0) virtualizer.scrollToIndex(items.length - 1, { align: "end" });
      reached();
      return;
    }
    follow.pinned = false;
    keep.current = false;
    // A hand-back's place is only where to go if the rows in view were not kept.
    if (target.kind === "id" && target.unlessKept === true && kept.current) {
      reached();
      return;
    }
    if (target.kind === "top") {
      el.scrollTop = 0;
      virtualizer.scrollToOffset(0);
    } else {
      const i = target.kind === "id" ? items.findIndex((it) => baseId(it.id) === target.id) : indexOfTurn(items, target.turn);
      if (i === -1) return;
      virtualizer.scrollToIndex(i, { align: target.kind === "id" ? target.align : "start" });
    }
    reached();
  }, [target, reached, items, virtualizer, follow]);
  // A timeline entry asks for its turn.
  const showTurn = long.showTurn;
  // One asked before this session was shown is not this session's.
  const jumpAtMount = useRef(jump);
  useEffect(() => {
    if (jump !== null && jump !== jumpAtMount.current) showTurn(jump.turn);
  }, [jump, showTurn]);
  // Home, End, PageUp and PageDown outside a text field move through the whole session.
  const home = long.home;
  const end = long.end;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || inField(e.target)) return;
      const el = scroller.current;
      if (el === null || document.querySelector("[role=dialog]") !== null) return;
      const by = Math.max(40, el.clientHeight * 0.85);
      if (e.key === "Home") home();
      else if (e.key === "End") end();
      else if (e.key === "PageUp") el.scrollBy({ top: -by });
      else if (e.key === "PageDown") el.scrollBy({ top: by });
      else return;
      e.preventDefault();
      follow.intent(performance.now());
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [home, end, follow]);
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
    if (sent > 0) {
      follow.pinned = true;
      end();
    }
  }, [sent, follow, end]);
  useLayoutEffect(() => {
    if (isLive && follow.pinned && items.length > 0) virtualizer.scrollToIndex(items.length - 1, { align: "end" });
  }, [items, virtualizer, follow, sent, isLive]);
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
      if (follow.pinned && liveRef.current) el.scrollTop = el.scrollHeight;
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
    <>
      <FindBar find={find} />
      <section
        className="transcript"
        data-testid="transcript"
        data-turn-ends={ends}
        data-window={isLive ? "live" : `${long.window?.first ?? 0}-${long.window?.end ?? 0}`}
        ref={scroller}
        onScroll={onScroll}
        onWheel={intent}
        onTouchMove={intent}
        onKeyDown={intent}
        onPointerDown={() => follow.press(true)}
        aria-live="polite"
      >
        {long.hasOlder && (
          <div className="transcript-earlier">
            <button type="button" className="btn btn-small" data-testid="load-earlier" onClick={() => page(long.older)}>
              {t("chat.earlier")}
            </button>
          </div>
        )}
        <div className="transcript-sizer" style={{ height: virtualizer.getTotalSize() }}>
          <div className="transcript-inner" style={{ transform: `translateY(${rows[0]?.start ?? 0}px)` }}>
            {rows.map((row) => {
              const item = items[row.index];
              if (item === undefined) return null;
              const current = markId !== null && baseId(item.id) === markId;
              return (
                <div key={row.key} data-index={row.index} ref={virtualizer.measureElement} className={`transcript-row${current ? " find-current" : ""}`} data-find-current={current ? "true" : undefined}>
                  <Row item={item} actions={actions} last={isLive && row.index === items.length - 1} mark={current && markQuery !== "" ? markQuery : null} />
                </div>
              );
            })}
          </div>
        </div>
        {isLive && <Working items={items} running={actions.running} />}
      </section>
      {!isLive && (
        <div className="transcript-newest">
          <span>{t("chat.olderShown")}</span>
          <button type="button" className="btn btn-small" data-testid="to-newest" onClick={end}>
            {t("chat.toNewest")}
          </button>
        </div>
      )}
    </>
  );
}
