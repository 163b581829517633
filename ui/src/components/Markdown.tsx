import { memo, useEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import { useT } from "../i18n";
import { clipboardWrite } from "../ipc";
import { renderMarkdown } from "../markdown";

/**
 * Untrusted markdown rendered safely (see ../markdown.ts). Links never navigate the app:
 * clicking one copies its address. Every code block gets a Copy button (built with DOM calls
 * next to the sanitised HTML, never from the model's text).
 */
export const Markdown = memo(function Markdown({ text, testId }: { text: string; testId?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  const t = useT();
  const [copied, setCopied] = useState<string | null>(null);
  const body = useRef<HTMLDivElement>(null);
  const copy = (value: string, what: string) => {
    clipboardWrite(value).then(
      () => {
        setCopied(what);
        window.setTimeout(() => setCopied(null), 1500);
      },
      () => undefined,
    );
  };
  useEffect(() => {
    const root = body.current;
    if (root === null) return;
    for (const pre of root.querySelectorAll("pre")) {
      if (pre.parentElement?.classList.contains("code-block") === true) continue;
      const wrap = document.createElement("div");
      wrap.className = "code-block";
      pre.replaceWith(wrap);
      wrap.appendChild(pre);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "code-copy";
      button.dataset.testid = "code-copy";
      button.textContent = t("chat.copyCode");
      wrap.appendChild(button);
    }
  }, [html, t]);
  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    const button = target.closest(".code-copy");
    if (button !== null) {
      event.preventDefault();
      const code = button.parentElement?.querySelector("pre")?.textContent ?? "";
      copy(code, t("chat.codeCopied"));
      return;
    }
    const link = target.closest("a");
    if (link === null) return;
    event.preventDefault();
    const href = link.getAttribute("href");
    if (href !== null) copy(href, t("chat.linkCopied"));
  };
  return (
    <div className="md" data-testid={testId} onClick={onClick}>
      {/* Sanitised by DOMPurify with an allow-list; raw HTML from the model is escaped. */}
      <div ref={body} dangerouslySetInnerHTML={{ __html: html }} />
      {copied !== null && <span className="md-toast">{copied}</span>}
    </div>
  );
});
