// In-chat answers to what the agent asks: questions (ask_user), plans (propose_plan) and
// access to folders outside the workspace (request_directory).
import { memo, useState } from "react";
import type { DirectoryGrant } from "../bindings/DirectoryGrant";
import type { ElicitationAnswer } from "../bindings/ElicitationAnswer";
import type { PlanReview } from "../bindings/PlanReview";
import type { UserAnswer } from "../bindings/UserAnswer";
import { useT } from "../i18n";
import type { Item } from "../transcript";
import { Markdown } from "./Markdown";

/** Callbacks that answer the engine. */
/** The transcript item a request is shown by: its own id and the engine's `requestId`. */
export type AskedItem = { id: string; requestId: string };

export type Answerers = {
  question: (item: AskedItem, answer: UserAnswer) => void;
  plan: (item: AskedItem, review: PlanReview) => void;
  directory: (item: AskedItem, grant: DirectoryGrant) => void;
  /** An MCP server's form or page (`openUrl`: the page to open once accepted). */
  elicitation: (item: AskedItem, answer: ElicitationAnswer, openUrl: string | null) => void;
};

function StateTag({ state }: { state: string }) {
  const t = useT();
  if (state === "pending") return null;
  const label =
    state === "expired"
      ? t("expired")
      : state === "rejected"
        ? t("plan.rejected")
        : state === "accepted"
          ? t("plan.accepted")
          : t("answered");
  return <span className={`ask-state ask-${state}`}>{label}</span>;
}

export const QuestionCard = memo(function QuestionCard({
  item,
  answer,
}: {
  item: Extract<Item, { kind: "question" }>;
  answer: Answerers["question"];
}) {
  const t = useT();
  const [selected, setSelected] = useState<string[]>([]);
  const [text, setText] = useState("");
  const pending = item.state === "pending";
  const toggle = (o: string) => {
    if (!item.multi) {
      answer(item, { kind: "answered", selected: [o], text: "" });
      return;
    }
    setSelected((s) => (s.includes(o) ? s.filter((x) => x !== o) : [...s, o]));
  };
  const canSend = selected.length > 0 || text.trim() !== "";
  return (
    <article className="ask-card" data-testid="question" data-state={item.state}>
      <header className="ask-head">
        {t("question.title")} <StateTag state={item.state} />
      </header>
      <div className="ask-text">{item.question}</div>
      {item.options.length > 0 && (
        <div className="ask-options">
          {item.options.map((o) => (
            <button
              key={o}
              type="button"
              className={`btn ${selected.includes(o) ? "btn-selected" : ""}`}
              disabled={!pending}
              data-testid="question-option"
              onClick={() => toggle(o)}
            >
              {o}
            </button>
          ))}
        </div>
      )}
      {pending && (item.allowText || item.multi || item.options.length === 0) && (
        <div className="ask-row">
          {(item.allowText || item.options.length === 0) && (
            <input
              className="input"
              data-testid="question-text"
              placeholder={t("question.placeholder")}
              value={text}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && canSend) answer(item, { kind: "answered", selected, text: text.trim() });
              }}
            />
          )}
          <button
            type="button"
            className="btn btn-primary"
            disabled={!canSend}
            data-testid="question-send"
            onClick={() => answer(item, { kind: "answered", selected, text: text.trim() })}
          >
            {t("question.send")}
          </button>
          <button
            type="button"
            className="btn"
            onClick={() => answer(item, { kind: "declined", reason: "the user declined to answer" })}
          >
            {t("question.decline")}
          </button>
        </div>
      )}
    </article>
  );
});

/** A proposed plan with accept / reject (and feedback). */
export const PlanCard = memo(function PlanCard({
  item,
  answer,
  compact,
}: {
  item: Extract<Item, { kind: "plan" }>;
  answer: Answerers["plan"];
  compact?: boolean;
}) {
  const t = useT();
  const [feedback, setFeedback] = useState("");
  const [rejecting, setRejecting] = useState(false);
  const pending = item.state === "pending";
  return (
    <article className={`ask-card plan-card ${compact ? "plan-compact" : ""}`} data-testid={compact ? "plan-panel-card" : "plan"} data-state={item.state}>
      <header className="ask-head">
        {t("plan.title")} <StateTag state={item.state === "answered" ? "accepted" : item.state} />
      </header>
      <Markdown text={item.plan} />
      {pending && !rejecting && (
        <div className="ask-row">
          <button type="button" className="btn btn-primary" data-testid="plan-accept" onClick={() => answer(item, { kind: "accepted" })}>
            {t("plan.accept")}
          </button>
          <button type="button" className="btn" data-testid="plan-reject" onClick={() => setRejecting(true)}>
            {t("plan.reject")}
          </button>
        </div>
      )}
      {pending && rejecting && (
        <div className="ask-row">
          <input
            className="input"
            autoFocus
            placeholder={t("plan.feedback")}
            value={feedback}
            onChange={(e) => setFeedback(e.target.value)}
          />
          <button
            type="button"
            className="btn btn-danger"
            data-testid="plan-reject-send"
            onClick={() => answer(item, { kind: "rejected", feedback: feedback.trim() })}
          >
            {t("plan.reject")}
          </button>
        </div>
      )}
    </article>
  );
});

/** A request for a folder outside the workspace. */
export const DirectoryCard = memo(function DirectoryCard({
  item,
  answer,
}: {
  item: Extract<Item, { kind: "directory" }>;
  answer: Answerers["directory"];
}) {
  const t = useT();
  const pending = item.state === "pending";
  return (
    <article className="ask-card" data-testid="directory-request" data-state={item.state}>
      <header className="ask-head">
        {t("dir.title")} <StateTag state={item.state} />
      </header>
      <div className="ask-text">
        <code>{item.path}</code> {item.writable && <span className="tag tag-warn">{t("dir.writable")}</span>}
      </div>
      <div className="ask-reason">{item.reason}</div>
      {pending && (
        <div className="ask-row">
          <button type="button" className="btn btn-primary" data-testid="dir-grant" onClick={() => answer(item, { kind: "granted", writable: false })}>
            {t("dir.grantRead")}
          </button>
          {item.writable && (
            <button type="button" className="btn" onClick={() => answer(item, { kind: "granted", writable: true })}>
              {t("dir.grantWrite")}
            </button>
          )}
          <button
            type="button"
            className="btn btn-danger"
            data-testid="dir-deny"
            onClick={() => answer(item, { kind: "denied", reason: "the user denied access" })}
          >
            {t("dir.deny")}
          </button>
        </div>
      )}
    </article>
  );
});
