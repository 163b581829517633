import { useEffect, useRef, useState } from "react";
import { useT } from "../i18n";
import { Icon } from "./Icons";

/** One action of the header. */
export type HeaderAction = {
  testId: string;
  icon: Parameters<typeof Icon>[0]["name"];
  label: string;
  shortcut?: string;
  pressed?: boolean;
  onClick: () => void;
};

/** The header's actions as icon buttons, or (compact) behind one "More" menu. */
export function HeaderActions({ actions, compact }: { actions: HeaderAction[]; compact: boolean }) {
  const t = useT();
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  // A click elsewhere or Esc closes the menu.
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (root.current !== null && !root.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        setOpen(false);
      }
    };
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey, true);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey, true);
    };
  }, [open]);
  if (!compact) {
    return (
      <>
        {actions.map((a) => (
          <button
            key={a.testId}
            type="button"
            className={`icon-button ${a.pressed ? "icon-button-on" : ""}`}
            data-tip={a.shortcut !== undefined ? `${a.label} (${a.shortcut})` : a.label}
            aria-label={a.label}
            data-testid={a.testId}
            aria-pressed={a.pressed}
            onClick={a.onClick}
          >
            <Icon name={a.icon} />
          </button>
        ))}
      </>
    );
  }
  return (
    <div className="header-more" ref={root}>
      <button
        type="button"
        className={`icon-button ${open ? "icon-button-on" : ""}`}
        data-tip={t("header.more")}
        aria-label={t("header.more")}
        aria-haspopup="menu"
        aria-expanded={open}
        data-testid="header-more"
        onClick={() => setOpen((v) => !v)}
      >
        <Icon name="more" />
      </button>
      {open && (
        <div className="header-menu" role="menu" data-testid="header-menu">
          {actions.map((a) => (
            <button
              key={a.testId}
              type="button"
              role="menuitem"
              className={`header-menu-item ${a.pressed ? "header-menu-item-on" : ""}`}
              data-testid={a.testId}
              onClick={() => {
                setOpen(false);
                a.onClick();
              }}
            >
              <Icon name={a.icon} />
              <span className="header-menu-label">{a.label}</span>
              {a.shortcut !== undefined && <span className="header-menu-shortcut">{a.shortcut}</span>}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
