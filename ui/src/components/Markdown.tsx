import { createContext, memo, useContext, useEffect, useMemo, useRef, useState, type MouseEvent } from "react";
import { useT, type Translate } from "../i18n";
import { clipboardWrite } from "../ipc";
import { linkTarget, renderMarkdown, type LinkTarget } from "../markdown";

/** What a click on a link of model output does (the chat view's: open inside Cairn, or ask first). */
export type LinkOpener = (target: LinkTarget) => void;

/** The link opener of the markdown below; without one a click copies the link's address. */
export const LinkContext = createContext<LinkOpener | null>(null);

/** How long a Copy button says "Copied". */
export const COPIED_MS = 1500;

/**
 * A Copy button that says "Copied" for a moment after it copied (its own label changes: no
 * toast over the text).
 */
export function CopyButton({ text, label, testId, className }: { text: () => string; label: string; testId: string; className?: string }) {
  const t = useT();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = window.setTimeout(() => setCopied(false), COPIED_MS);
    return () => window.clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      className={`btn btn-small copy-button ${className ?? ""}`}
      data-testid={testId}
      data-copied={copied ? "true" : "false"}
      aria-live="polite"
      onClick={() => clipboardWrite(text()).then(() => setCopied(true), () => undefined)}
    >
      {copied ? t("chat.copied") : label}
    </button>
  );
}

/** Puts every code block of `root` in a frame with a bar above it holding its Copy button. */
function frameCodeBlocks(root: HTMLElement, t: Translate) {
  for (const pre of root.querySelectorAll("pre")) {
    if (pre.parentElement?.classList.contains("code-block") === true) continue;
    const wrap = document.createElement("div");
    wrap.className = "code-block";
    pre.replaceWith(wrap);
    // Built with DOM calls next to the sanitised HTML, never from the model's text.
    const bar = document.createElement("div");
    bar.className = "code-bar";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "code-copy";
    button.dataset.testid = "code-copy";
    button.textContent = t("chat.copyCode");
    bar.appendChild(button);
    wrap.append(bar, pre);
  }
}

/**
 * Untrusted markdown rendered safely (see ../markdown.ts). Links never navigate the page: a
 * workspace path opens inside Cairn and a web address asks before the browser opens it (the
 * chat's [`LinkContext`]); elsewhere a click copies the address. Every code block gets a Copy
 * button in a bar above the code (it covers no line) that says "Copied" once it copied.
 */
export const Markdown = memo(function Markdown({ text, testId }: { text: string; testId?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  const t = useT();
  const openLink = useContext(LinkContext);
  const [copied, setCopied] = useState<string | null>(null);
  const body = useRef<HTMLDivElement>(null);
  const copy = (value: string, what: string) => {
    clipboardWrite(value).then(
      () => {
        setCopied(what);
        window.setTimeout(() => setCopied(null), COPIED_MS);
      },
      () => undefined,
    );
  };
  useEffect(() => {
    if (body.current !== null) frameCodeBlocks(body.current, t);
  }, [html, t]);
  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    const button = target.closest<HTMLButtonElement>(".code-copy");
    if (button !== null) {
      event.preventDefault();
      const code = button.closest(".code-block")?.querySelector("pre")?.textContent ?? "";
      clipboardWrite(code).then(
        () => {
          button.textContent = t("chat.copied");
          button.dataset.copied = "true";
          window.setTimeout(() => {
            button.textContent = t("chat.copyCode");
            button.dataset.copied = "false";
          }, COPIED_MS);
        },
        () => undefined,
      );
      return;
    }
    const link = target.closest("a");
    if (link === null) return;
    event.preventDefault();
    const href = link.getAttribute("href");
    if (href === null) return;
    const to = linkTarget(href);
    if (to !== null && to.kind !== "mail" && openLink !== null) openLink(to);
    else copy(href, t("chat.linkCopied"));
  };
  return (
    <div className="md" data-testid={testId} onClick={onClick}>
      {/* Sanitised by DOMPurify with an allow-list; raw HTML from the model is escaped. */}
      <div ref={body} dangerouslySetInnerHTML={{ __html: html }} />
      {copied !== null && <span className="md-toast">{copied}</span>}
    </div>
  );
});
