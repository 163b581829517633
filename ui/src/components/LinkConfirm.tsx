import { useT } from "../i18n";
import { Overlay } from "./Overlay";

/**
 * Asks before a web address from the model's answer opens in the browser, showing the whole
 * address (the user sees where it goes before anything opens).
 */
export function LinkConfirm({ url, onOpen, onCancel }: { url: string; onOpen: () => void; onCancel: () => void }) {
  const t = useT();
  return (
    <Overlay title={t("link.confirmTitle")} onClose={onCancel} testId="link-confirm">
      <p>{t("link.confirmLead")}</p>
      <p className="link-confirm-url" data-testid="link-confirm-url">
        {url}
      </p>
      <div className="dialog-actions">
        <button type="button" className="btn btn-primary" data-testid="link-confirm-open" onClick={onOpen}>
          {t("link.open")}
        </button>
        <button type="button" className="btn" data-testid="link-confirm-cancel" onClick={onCancel}>
          {t("link.cancel")}
        </button>
      </div>
    </Overlay>
  );
}
