import { memo, useEffect, useRef, useState, type RefObject } from "react";
import type { ApprovalDecision } from "../bindings/ApprovalDecision";
import type { ToolKind } from "../bindings/ToolKind";
import { plural, useT, type MessageKey } from "../i18n";
import { approvalCardAt, describeError, editPreview, toolResult } from "../ipc";
import type { Item } from "../transcript";
import { previewIsWhole } from "../toolOutput";
import { contentDiff, replacementDiff } from "../editDiff";
import { DiffView, looksLikeDiff } from "./DiffView";

type Tool = Extract<Item, { kind: "tool" }>;

/** Lines of streamed output shown while a tool runs (the rest behind "show full output"). */
const PREVIEW_LINES = 12;

function str(args: unknown, key: string): string | null {
  if (typeof args !== "object" || args === null) return null;
  const v = (args as Record<string, unknown>)[key];
  return typeof v === "string" ? v : null;
}

/** One line saying what the call is about, as the tool said it (`tool_proposed.subject`). */
export function toolSummary(item: Tool): string {
  return item.subject ?? "";
}

/** The card's icon for what the tool does. */
function icon(kind: ToolKind): string {
  switch (kind) {
    case "todo":
      return "☑";
    case "question":
      return "?";
    case "command":
      return "›_";
    case "edit":
      return "✎";
    case "read":
      return "▤";
    case "search":
      return "⌕";
    case "git":
      return "±";
    case "web":
      return "◍";
    case "agent":
      return "⚇";
    case "mcp":
      return "⧉";
    case "other":
      return "◆";
  }
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  return `${Math.floor(s / 60)} m ${Math.round(s % 60)} s`;
}

/** A live duration while running, the reported one after. */
function Duration({ item }: { item: Tool }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (item.state !== "running") return;
    const timer = window.setInterval(() => setNow(Date.now()), 250);
    return () => window.clearInterval(timer);
  }, [item.state]);
  if (item.durationMs !== null) return <span className="tool-duration">{formatDuration(item.durationMs)}</span>;
  if (item.state === "running" && item.startedAt !== null) {
    return <span className="tool-duration">{formatDuration(Math.max(0, now - item.startedAt))}</span>;
  }
  return null;
}

/** What a file edit changes: from its arguments, or the backend's preview while it waits. */
function EditDiff({ item }: { item: Tool }) {
  const t = useT();
  const [preview, setPreview] = useState<string | null>(null);
  const waiting = item.approval !== null && item.approval.state === "pending";
  useEffect(() => {
    if (!waiting) return;
    let live = true;
    editPreview(item.id).then(
      (d) => live && setPreview(d),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [item.id, waiting]);
  const path = str(item.args, "path") ?? "";
  if (item.unchanged === true) return <div className="tool-empty" data-testid="edit-diff">{t("tool.noChange")}</div>;
  if (preview === "") return <div className="tool-empty" data-testid="edit-diff">{t("tool.noChange")}</div>;
  if (preview !== null) return <DiffView diff={preview} testId="edit-diff" />;
  const oldText = str(item.args, "old_string");
  const newText = str(item.args, "new_string");
  if (oldText !== null && newText !== null) {
    return <DiffView diff={replacementDiff(path, oldText, newText)} testId="edit-diff" />;
  }
  const patch = str(item.args, "patch") ?? str(item.args, "diff");
  if (patch !== null) return <DiffView diff={patch} testId="edit-diff" />;
  const content = str(item.args, "content");
  if (content !== null) return <DiffView diff={contentDiff(path, content)} testId="edit-diff" />;
  return null;
}

function Arguments({ item }: { item: Tool }) {
  const t = useT();
  const command = str(item.args, "command");
  if (command !== null) {
    return (
      <pre className="tool-command" data-testid="tool-command">
        <span className="prompt">$ </span>
        {command}
      </pre>
    );
  }
  const isEdit = item.toolKind === "edit";
  // Once applied, the result's own diff (shown as the output) is the real change: one diff.
  if (isEdit && item.state === "ok" && item.preview !== null && looksLikeDiff(item.preview)) return null;
  if (isEdit) return <EditDiff item={item} />;
  return (
    <details className="tool-args">
      <summary>{t("tool.arguments")}</summary>
      <pre>{JSON.stringify(item.args, null, 2)}</pre>
    </details>
  );
}

/**
 * Tells the app where the awaiting approval's whole tool card is while a native dialog asks
 * the same (once laid out, and again after the transcript has followed it to the bottom), so
 * the dialog opens clear of it; `null` once it no longer waits.
 */
function useCardPlace(ref: RefObject<HTMLDivElement | null>, active: boolean) {
  useEffect(() => {
    if (!active) return;
    const report = () => {
      const card = ref.current?.closest("[data-testid=tool-card]") ?? ref.current;
      if (card === null || card === undefined) return;
      const r = card.getBoundingClientRect();
      approvalCardAt({ left: r.left, top: r.top, width: r.width, height: r.height, viewportHeight: window.innerHeight }).catch(
        () => undefined,
      );
    };
    const frame = requestAnimationFrame(report);
    const settled = window.setTimeout(report, 250);
    return () => {
      cancelAnimationFrame(frame);
      window.clearTimeout(settled);
      approvalCardAt(null).catch(() => undefined);
    };
  }, [ref, active]);
}

function Approval({
  item,
  onAnswer,
  onAllowInProject,
  native,
}: {
  item: Tool;
  onAnswer: (reqId: string, decision: ApprovalDecision) => void;
  onAllowInProject?: (reqId: string) => void;
  native: boolean;
}) {
  const t = useT();
  const ref = useRef<HTMLDivElement>(null);
  const pending = item.approval !== null && item.approval.state === "pending";
  useCardPlace(ref, pending && native);
  if (item.approval === null || !pending) return null;
  const always = item.approval.always;
  return (
    <div className="approval" data-testid="approval" role="alert" ref={ref}>
      <div className="approval-title">{t("approval.title")}</div>
      <div className="approval-reason">
        <span className="approval-why">{t("approval.why")}: </span>
        {item.approval.reason}
      </div>
      <div className="approval-buttons">
        <button type="button" className="btn btn-primary" data-testid="approve-once" onClick={() => onAnswer(item.id, "once")}>
          {t("approval.once")}
        </button>
        {always !== null && (
          <button
            type="button"
            className="btn"
            data-testid="approve-always"
            onClick={() => onAnswer(item.id, always.kind === "command" ? "always_command" : "always_tool")}
          >
            {always.kind === "command" ? t("approval.alwaysCommand").replace("{program}", always.program) : t("approval.alwaysTool")}
          </button>
        )}
        {always !== null && onAllowInProject !== undefined && (
          <button
            type="button"
            className="btn"
            data-testid="approve-project"
            data-tip={t("approval.projectHint")}
            onClick={() => onAllowInProject(item.id)}
          >
            {always.kind === "command" ? t("approval.projectCommand").replace("{program}", always.program) : t("approval.projectTool")}
          </button>
        )}
        <button type="button" className="btn btn-danger" data-testid="approve-deny" onClick={() => onAnswer(item.id, "deny")}>
          {t("approval.deny")}
        </button>
      </div>
      {native && <div className="approval-note">{t("approval.native")}</div>}
    </div>
  );
}

function Output({ item }: { item: Tool }) {
  const t = useT();
  const [full, setFull] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const done = item.state !== "running" && item.state !== "proposed" && item.state !== "awaiting";
  const streamed = item.output;
  // A refused, interrupted or failed call's result is the model's error payload (`{"error":
  // …}` JSON): the card shows its reason, in words, instead.
  const stopped = item.state === "denied" || item.state === "interrupted" || item.state === "error";
  if (stopped && streamed === "" && item.reason !== null) return null;
  const base = streamed !== "" ? streamed : (item.preview ?? "");
  if (base === "" && !done) return null;
  const lines = base.replace(/\n$/, "").split("\n");
  const preview = lines.slice(-PREVIEW_LINES).join("\n");
  const toggle = () => {
    if (open) {
      setOpen(false);
      return;
    }
    setOpen(true);
    if (full !== null || !done) return;
    setLoading(true);
    toolResult(item.id).then(
      (text) => {
        setFull(text ?? base);
        setLoading(false);
      },
      (e: unknown) => {
        setError(describeError(e));
        setLoading(false);
      },
    );
  };
  const shown = open ? (full ?? base) : preview;
  return (
    <div className="tool-output">
      {shown === "" ? (
        <div className="tool-empty">{t("tool.noOutput")}</div>
      ) : looksLikeDiff(shown) ? (
        <DiffView diff={shown} />
      ) : (
        <pre data-testid="tool-output">{shown}</pre>
      )}
      {((done && !previewIsWhole(streamed, item.preview, item.truncated)) || lines.length > PREVIEW_LINES) && (
        <button type="button" className="link-button" data-testid="tool-expand" onClick={toggle}>
          {loading ? t("tool.loading") : t(open ? "tool.hideOutput" : "tool.fullOutput")}
        </button>
      )}
      {error !== null && <div className="tool-error">{error}</div>}
    </div>
  );
}

/** What the result carried besides text (images handed to the model). */
function Attachments({ item }: { item: Tool }) {
  const t = useT();
  if (item.attachments.length === 0) return null;
  return (
    <div className="tool-attachments" data-testid="tool-attachments">
      {t("tool.attachments").replace("{count}", String(item.attachments.length))}
      {item.attachments.map((a, i) => (
        <span key={i} className="tool-attachment" data-mime={a.mimeType}>
          {a.mimeType}
        </span>
      ))}
    </div>
  );
}

/** One tool call: arguments, live status, duration, output preview, approval. */
export const ToolCard = memo(function ToolCard({
  item,
  onAnswer,
  onAllowInProject,
  native,
}: {
  item: Tool;
  onAnswer: (reqId: string, decision: ApprovalDecision) => void;
  /** "Always allow in this project" (offered when given). */
  onAllowInProject?: (reqId: string) => void;
  native: boolean;
}) {
  const t = useT();
  const summary = toolSummary(item);
  const stateKey = `tool.${item.state}` as MessageKey;
  return (
    <article className={`tool-card tool-${item.state}`} data-testid="tool-card" data-tool={item.name} data-kind={item.toolKind} data-state={item.state} data-call-id={item.id}>
      <header className="tool-head">
        <span className="tool-icon" aria-hidden="true">
          {icon(item.toolKind)}
        </span>
        <span className="tool-name">{item.name}</span>
        <span className="tool-summary" data-tip={summary}>
          {summary}
        </span>
        <span className={`tool-status status-${item.state}`} data-testid="tool-status">
          {item.state === "running" && <span className="spinner" aria-hidden="true" />}
          {t(stateKey)}
        </span>
        {item.stale !== undefined && item.stale.length > 0 && (
          <span className="tag tag-warn tool-stale" data-testid="tool-stale" data-tip={`${t("tool.staleHint")}\n${item.stale.join("\n")}`}>
            {plural(t, item.stale.length, "tool.stale")}
          </span>
        )}
        <Duration item={item} />
      </header>
      <div className="tool-body">
        <Arguments item={item} />
        <Approval item={item} onAnswer={onAnswer} onAllowInProject={onAllowInProject} native={native} />
        {item.reason !== null && item.state !== "ok" && <div className="tool-reason">{item.reason}</div>}
        <Output item={item} />
        <Attachments item={item} />
      </div>
    </article>
  );
});
