import { useState, type KeyboardEvent } from "react";

/** The prompt box: Enter sends, Shift+Enter inserts a newline. */
export function Composer({ busy, onSend }: { busy: boolean; onSend: (text: string) => void }) {
  const [text, setText] = useState("");
  const canSend = !busy && text.trim() !== "";

  const send = () => {
    if (!canSend) return;
    onSend(text.trim());
    setText("");
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // Leave Enter alone while an input method is composing (CJK input).
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        className="composer-input"
        data-testid="composer"
        aria-label="Message Cairn"
        placeholder="Message Cairn…  (Enter to send, Shift+Enter for a new line)"
        rows={3}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        autoFocus
      />
      <div className="composer-bar">
        <span className="composer-hint">{busy ? "Cairn is replying…" : "Demo mode: replies come from the backend's event stream"}</span>
        <button type="submit" className="send-button" data-testid="send" disabled={!canSend}>
          Send
        </button>
      </div>
    </form>
  );
}
