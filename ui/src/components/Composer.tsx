import { forwardRef, useState, type KeyboardEvent } from "react";
import { useT } from "../i18n";
import type { Steering } from "../transcript";

type Props = {
  running: boolean;
  disabled: boolean;
  steering: Steering[];
  onSend: (text: string) => void;
  onSteer: (text: string) => void;
  onRemoveSteering: (text: string) => void;
  onStop: () => void;
};

/**
 * The prompt box. Enter sends (or, while a turn runs, queues steering), Shift+Enter inserts a
 * newline, Esc stops the running turn. Queued steering shows as removable chips until the
 * engine injects it.
 */
export const Composer = forwardRef<HTMLTextAreaElement, Props>(function Composer(
  { running, disabled, steering, onSend, onSteer, onRemoveSteering, onStop },
  ref,
) {
  const t = useT();
  const [text, setText] = useState("");
  const canSend = !disabled && text.trim() !== "";

  const submit = () => {
    if (!canSend) return;
    if (running) onSteer(text.trim());
    else onSend(text.trim());
    setText("");
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // Leave Enter alone while an input method is composing (CJK input).
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    } else if (event.key === "Escape" && running) {
      event.preventDefault();
      onStop();
    }
  };

  const visible = steering.filter((s) => s.state === "queued" || running);
  return (
    <form
      className={`composer ${running ? "composer-running" : ""}`}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      {visible.length > 0 && (
        <ul className="steering-list" aria-label="Steering">
          {visible.map((s, i) => (
            <li key={`${i}:${s.text}`} className={`steering-chip steering-${s.state}`} data-testid="steering-chip" data-state={s.state}>
              <span className="steering-tag">{t(s.state === "queued" ? "composer.queued" : "composer.injected")}</span>
              <span className="steering-text">{s.text}</span>
              {s.state === "queued" && (
                <button
                  type="button"
                  className="chip-remove"
                  aria-label={t("composer.removeSteering")}
                  title={t("composer.removeSteering")}
                  data-testid="steering-remove"
                  onClick={() => onRemoveSteering(s.text)}
                >
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={ref}
        className="composer-input"
        data-testid="composer"
        aria-label="Message Cairn"
        placeholder={t(running ? "composer.steerPlaceholder" : "composer.placeholder")}
        rows={3}
        value={text}
        disabled={disabled}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        autoFocus
      />
      <div className="composer-bar">
        <span className="composer-hint">{t(running ? "composer.running" : "composer.idle")}</span>
        <div className="composer-actions">
          {running && (
            <button type="button" className="btn btn-stop" data-testid="stop" onClick={onStop} title="Esc">
              <span className="stop-square" aria-hidden="true" />
              {t("composer.stop")}
            </button>
          )}
          <button type="submit" className="send-button" data-testid="send" disabled={!canSend}>
            {t(running ? "composer.queue" : "composer.send")}
          </button>
        </div>
      </div>
    </form>
  );
});
