import { forwardRef, useCallback, useEffect, useImperativeHandle, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import type { ImageUpload } from "../bindings/app/ImageUpload";
import { useT } from "../i18n";
import { mentionText } from "../mentions";
import type { Steering } from "../transcript";
import { AttachmentTray, imageFiles, useImageDrafts, type PendingImage } from "./Attachments";
import { MentionList, useMentions } from "./Mentions";
import { SlashList, useSlashCommands } from "./SlashCommands";

/** Text (and images) put back into the prompt, or a mention added to it; `at` makes each one new. */
export type ComposerDraft =
  | { kind: "restore"; text: string; images: PendingImage[]; at: number }
  | { kind: "mention"; path: string; at: number }
  /** Queued steering of a stopped turn, in typed order, put before what is typed. */
  | { kind: "reclaim"; texts: string[]; at: number };

type Props = {
  running: boolean;
  disabled: boolean;
  steering: Steering[];
  onSend: (text: string, images: PendingImage[]) => void;
  onSteer: (text: string, images: PendingImage[]) => void;
  onRemoveSteering: (text: string) => void;
  onStop: () => void;
  draft?: ComposerDraft | null;
};

/** What a pending image sends (its preview id and size stay in the page). */
export function toUpload(img: PendingImage): ImageUpload {
  return { name: img.name, mimeType: img.mimeType, dataUrl: img.dataUrl };
}

/**
 * The prompt box. Enter sends (or, while a turn runs, queues steering), Shift+Enter inserts a
 * newline, Esc stops the running turn. `@` completes workspace files (mentioned files go with
 * the prompt), a `/` at the start completes slash commands; images pasted or dropped wait as
 * thumbnails. Queued steering shows as
 * removable chips until the engine injects it.
 */
export const Composer = forwardRef<HTMLTextAreaElement, Props>(function Composer(
  { running, disabled, steering, onSend, onSteer, onRemoveSteering, onStop, draft },
  ref,
) {
  const t = useT();
  const [text, setText] = useState("");
  const [dragging, setDragging] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  useImperativeHandle(ref, () => area.current as HTMLTextAreaElement);
  const drafts = useImageDrafts();
  const caretTo = useRef<number | null>(null);

  const replace = useCallback((next: string, caret: number) => {
    caretTo.current = caret;
    setText(next);
  }, []);
  const mentions = useMentions(replace);
  const slash = useSlashCommands(replace);

  // The box grows with its text up to its CSS max-height, then scrolls.
  useLayoutEffect(() => {
    const el = area.current;
    if (el === null) return;
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight}px`;
  }, [text]);

  // Put the caret where a pick or an insertion left it.
  useEffect(() => {
    if (caretTo.current === null || area.current === null) return;
    area.current.setSelectionRange(caretTo.current, caretTo.current);
    caretTo.current = null;
  }, [text]);

  const setImages = drafts.set;
  useEffect(() => {
    if (draft === null || draft === undefined) return;
    if (draft.kind === "reclaim") {
      const back = draft.texts.join("\n");
      setText((cur) => (cur.trim() === "" ? back : `${back}\n${cur}`));
      return;
    }
    if (draft.kind === "restore") {
      setText((cur) => (cur.trim() === "" ? draft.text : cur));
      setImages((cur) => (cur.length === 0 ? draft.images : cur));
      return;
    }
    setText((cur) => {
      const sep = cur === "" || /\s$/.test(cur) ? "" : " ";
      const next = `${cur}${sep}${mentionText(draft.path)} `;
      caretTo.current = next.length;
      return next;
    });
    area.current?.focus();
  }, [draft, setImages]);

  // Steering needs words; its images go with it.
  const canSend = !disabled && (text.trim() !== "" || (!running && drafts.images.length > 0));

  const submit = () => {
    if (!canSend) return;
    mentions.close();
    slash.close();
    if (running) onSteer(text.trim(), drafts.take());
    else onSend(text.trim(), drafts.take());
    setText("");
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (slash.onKeyDown(event, text)) return;
    if (mentions.onKeyDown(event, text)) return;
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
      className={`composer ${running ? "composer-running" : ""} ${dragging ? "composer-drop" : ""}`}
      data-testid="composer-form"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      onDragOver={(event) => {
        if (disabled || !event.dataTransfer.types.includes("Files")) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        setDragging(false);
        const files = imageFiles(event.dataTransfer);
        if (disabled || files.length === 0) return;
        event.preventDefault();
        void drafts.add(files);
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
                  data-tip={t("composer.removeSteering")}
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
      <AttachmentTray images={drafts.images} error={drafts.error} onRemove={drafts.remove} />
      {slash.open && !running && (
        <SlashList
          matches={slash.matches}
          active={slash.active}
          loading={slash.loading}
          error={slash.error}
          onPick={(name) => slash.pick(text, name)}
        />
      )}
      {mentions.open && (
        <MentionList
          matches={mentions.matches}
          active={mentions.active}
          loading={mentions.loading}
          error={mentions.error}
          onPick={(path) => mentions.pick(text, path)}
        />
      )}
      <textarea
        ref={area}
        className="composer-input"
        data-testid="composer"
        aria-label="Message Cairn"
        placeholder={t(running ? "composer.steerPlaceholder" : "composer.placeholder")}
        rows={2}
        value={text}
        disabled={disabled}
        onChange={(event) => {
          setText(event.target.value);
          mentions.track(event.target.value, event.target.selectionStart);
          if (!running) slash.track(event.target.value, event.target.selectionStart);
        }}
        onSelect={(event) => {
          const el = event.currentTarget;
          if (mentions.open) mentions.track(el.value, el.selectionStart);
          if (slash.open) slash.track(el.value, el.selectionStart);
        }}
        onBlur={() => {
          mentions.close();
          slash.close();
        }}
        onPaste={(event) => {
          const files = imageFiles(event.clipboardData);
          if (files.length === 0) return;
          event.preventDefault();
          void drafts.add(files);
        }}
        onKeyDown={onKeyDown}
        autoFocus
      />
      <div className="composer-bar">
        <span className="composer-hint">{t(running ? "composer.running" : "composer.idle")}</span>
        <div className="composer-actions">
          {running && (
            <button type="button" className="btn btn-stop" data-testid="stop" onClick={onStop} data-tip={`${t("composer.stop")} (Esc)`}>
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
