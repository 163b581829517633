import { useEffect, useRef } from "react";
import { turnStatusLabel, type TranscriptItem } from "../transcript";
import { StoneMark } from "./StoneMark";

// Model output is untrusted: everything below renders text nodes only (no raw HTML).

function Item({ item }: { item: TranscriptItem }) {
  switch (item.kind) {
    case "user":
      return (
        <article className="msg msg-user" data-testid="user-message">
          <div className="msg-role">You</div>
          <div className="msg-text">{item.text}</div>
        </article>
      );
    case "assistant":
      return (
        <article
          className="msg msg-assistant"
          data-testid="assistant-message"
          data-streaming={item.streaming ? "true" : "false"}
        >
          <div className="msg-role">Cairn</div>
          {item.reasoning !== "" && (
            <details className="msg-reasoning">
              <summary>Reasoning</summary>
              <div className="msg-text">{item.reasoning}</div>
            </details>
          )}
          <div className="msg-text" data-testid="assistant-text">
            {item.text}
            {item.streaming && <span className="caret" aria-hidden="true" />}
          </div>
          {item.usage !== null && (
            <div className="msg-meta">
              {item.usage.input_tokens} in · {item.usage.output_tokens} out tokens
            </div>
          )}
        </article>
      );
    case "notice":
      return (
        <div className={`notice notice-${item.tone}`} role={item.tone === "error" ? "alert" : "status"}>
          {item.text}
        </div>
      );
    case "turn_end":
      return (
        <div className={`turn-end turn-end-${item.status}`} data-testid="turn-end" data-status={item.status}>
          <span className="turn-end-rule" />
          <span>
            {turnStatusLabel[item.status]} · {item.iterations} iteration{item.iterations === 1 ? "" : "s"}
          </span>
          <span className="turn-end-rule" />
        </div>
      );
  }
}

/** The scrolling chat transcript; follows the bottom while new content streams in. */
export function Transcript({ items }: { items: TranscriptItem[] }) {
  const end = useRef<HTMLDivElement>(null);
  useEffect(() => {
    end.current?.scrollIntoView({ block: "end" });
  }, [items]);

  if (items.length === 0) {
    return (
      <section className="transcript transcript-empty" data-testid="transcript" aria-live="polite">
        <div className="empty-state">
          <StoneMark size={56} />
          <h1>What shall we build?</h1>
          <p>
            Ask Cairn about your project. Each turn leaves a cairn: a snapshot you can return to.
          </p>
        </div>
      </section>
    );
  }
  return (
    <section className="transcript" data-testid="transcript" aria-live="polite">
      <div className="transcript-inner">
        {items.map((item) => (
          <Item key={item.id} item={item} />
        ))}
        <div ref={end} />
      </div>
    </section>
  );
}
