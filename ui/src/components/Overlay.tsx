import { useEffect, useRef, type ReactNode } from "react";
import { useT } from "../i18n";

/** A modal panel over the app; Esc or the close button closes it. */
export function Overlay({
  title,
  onClose,
  children,
  testId,
  wide,
  tall,
  footer,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  testId: string;
  wide?: boolean;
  /** As tall as the window allows, whatever the body holds (its footer never moves). */
  tall?: boolean;
  /** Shown under the scrolling body, always in view. */
  footer?: ReactNode;
}) {
  const t = useT();
  const panel = useRef<HTMLDivElement>(null);
  // Through a ref: a parent passing a new `onClose` on every render must not move the focus
  // back to the panel (it would take it from a field the user is typing in).
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        close.current();
      }
    };
    window.addEventListener("keydown", onKey);
    panel.current?.focus();
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div className="overlay" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`overlay-panel ${wide ? "overlay-wide" : ""} ${tall ? "overlay-tall" : ""}`} role="dialog" aria-modal="true" aria-label={title} data-testid={testId} ref={panel} tabIndex={-1}>
        <header className="overlay-head">
          <h2>{title}</h2>
          <button type="button" className="icon-button" aria-label={t("settings.close")} data-testid="overlay-close" onClick={onClose}>
            ×
          </button>
        </header>
        <div className="overlay-body">{children}</div>
        {footer !== undefined && <div className="overlay-foot">{footer}</div>}
      </div>
    </div>
  );
}
