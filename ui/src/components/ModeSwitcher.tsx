import { useState } from "react";
import type { Mode } from "../bindings/Mode";
import { useT, type MessageKey } from "../i18n";

const MODES: Mode[] = ["discuss", "plan", "interactive", "auto"];

/** Segmented control for the permission mode; Auto is marked risky and asks to confirm. */
export function ModeSwitcher({ mode, onChange, disabled }: { mode: Mode; onChange: (m: Mode) => void; disabled: boolean }) {
  const t = useT();
  const [confirming, setConfirming] = useState(false);
  const pick = (m: Mode) => {
    if (m === mode) return;
    if (m === "auto") setConfirming(true);
    else onChange(m);
  };
  return (
    <div className="mode-switcher" role="radiogroup" aria-label={t("mode.label")} data-testid="mode-switcher" data-mode={mode}>
      {MODES.map((m) => (
        <button
          key={m}
          type="button"
          role="radio"
          aria-checked={m === mode}
          disabled={disabled}
          className={`mode-option mode-${m} ${m === mode ? "mode-active" : ""}`}
          data-tip={t(`mode.${m}.hint` as MessageKey)}
          data-testid={`mode-${m}`}
          onClick={() => pick(m)}
        >
          {m === "auto" && <span className="risk-mark" aria-hidden="true">⚠</span>}
          {t(`mode.${m}` as MessageKey)}
        </button>
      ))}
      {confirming && (
        <div className="popover" role="dialog" data-testid="auto-confirm">
          <p>{t("mode.auto.confirm")}</p>
          <div className="popover-buttons">
            <button
              type="button"
              className="btn btn-danger"
              data-testid="auto-confirm-yes"
              onClick={() => {
                setConfirming(false);
                onChange("auto");
              }}
            >
              {t("mode.auto")}
            </button>
            <button type="button" className="btn" onClick={() => setConfirming(false)}>
              {t("settings.close")}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
