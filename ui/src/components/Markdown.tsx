import { memo, useMemo, useState, type MouseEvent } from "react";
import { useT } from "../i18n";
import { renderMarkdown } from "../markdown";

/**
 * Untrusted markdown rendered safely (see ../markdown.ts). Links never navigate the app:
 * clicking one copies its address.
 */
export const Markdown = memo(function Markdown({ text, testId }: { text: string; testId?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  const t = useT();
  const [copied, setCopied] = useState(false);
  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    const link = target.closest("a");
    if (link === null) return;
    event.preventDefault();
    const href = link.getAttribute("href");
    if (href !== null && navigator.clipboard !== undefined) {
      navigator.clipboard.writeText(href).then(
        () => {
          setCopied(true);
          window.setTimeout(() => setCopied(false), 1500);
        },
        () => undefined,
      );
    }
  };
  return (
    <div className="md" data-testid={testId} onClick={onClick}>
      {/* Sanitised by DOMPurify with an allow-list; raw HTML from the model is escaped. */}
      <div dangerouslySetInnerHTML={{ __html: html }} />
      {copied && <span className="md-toast">{t("chat.linkCopied")}</span>}
    </div>
  );
});
