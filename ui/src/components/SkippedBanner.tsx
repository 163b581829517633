import { useState } from "react";
import type { SkippedView } from "../bindings/app/SkippedView";
import { plural, useT } from "../i18n";

/**
 * Names, once per opened session, what the repository defines but Cairn left out for lack of
 * trust (project hooks, project MCP servers), with the way to Settings where they are trusted.
 * Paths are untrusted text: rendered as text nodes only.
 */
export function SkippedBanner({ skipped, onReview }: { skipped: SkippedView[]; onReview: () => void }) {
  const t = useT();
  const [dismissed, setDismissed] = useState(false);
  if (skipped.length === 0 || dismissed) return null;
  const line = (s: SkippedView) =>
    s.kind === "hooks"
      ? // A hooks entry's `name` is how many hooks the file defines.
        plural(t, Number(s.name) || 0, "skipped.hooks").replace("{file}", s.file)
      : t("skipped.mcp").replace("{name}", s.name).replace("{file}", s.file);
  return (
    <div className="blocked skipped-banner" role="status" data-testid="skipped-banner">
      <span>
        {t("skipped.title")}{" "}
        {skipped.map((s, i) => (
          <span key={`${s.kind}:${s.name}`} className="skipped-item" data-testid="skipped-item" data-kind={s.kind}>
            {i > 0 ? "; " : ""}
            {line(s)}
          </span>
        ))}
      </span>
      <span className="resume-actions">
        <button type="button" className="btn btn-small" data-testid="skipped-review" onClick={onReview}>
          {t("skipped.review")}
        </button>
        <button type="button" className="btn btn-small" data-testid="skipped-dismiss" onClick={() => setDismissed(true)}>
          {t("resume.dismiss")}
        </button>
      </span>
    </div>
  );
}
