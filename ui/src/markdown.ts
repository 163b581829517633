// Model output is untrusted. It is rendered as markdown with raw HTML disabled (markdown-it
// escapes any tag), images disabled, links limited to http(s)/mailto and relative paths (a
// workspace file, opened inside Cairn: never handed to the desktop's opener), code
// highlighted by highlight.js, and the resulting HTML passed through DOMPurify with an
// allow-list before it reaches the DOM (no style attributes: the model cannot style the
// page; table alignment is a class, task-list boxes are disabled inputs made by the
// renderer, never by the model's text). The page's CSP forbids inline scripts as a last
// line of defence.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages = {
  bash,
  c,
  cpp,
  css,
  diff,
  go,
  ini,
  java,
  javascript,
  json,
  markdown,
  python,
  rust,
  sql,
  typescript,
  xml,
  yaml,
};
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang);
hljs.registerAliases(["sh", "shell", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["rs"], { languageName: "rust" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["patch"], { languageName: "diff" });

/** Longest code block highlighted (bigger ones are shown plain: highlighting is O(n)). */
const MAX_HIGHLIGHT = 60_000;

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Highlighted HTML of a code block (escaped plain text when the language is unknown). */
export function highlight(code: string, lang: string): string {
  const name = lang.trim().toLowerCase();
  if (code.length <= MAX_HIGHLIGHT && name !== "" && hljs.getLanguage(name) !== undefined) {
    try {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    } catch {
      // fall through to plain text
    }
  }
  return escapeHtml(code);
}

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  typographer: false,
  highlight: (code, lang) => highlight(code, lang),
});
// Images would load remote content (and are blocked by the CSP anyway): show their text.
md.disable("image");
/** http(s), mailto, or a relative path (no scheme; not absolute, home-relative or an anchor). */
const SAFE_LINK = /^(?:https?:|mailto:|(?![a-z][a-z0-9+.-]*:)[^/\\~#?\s])/i;
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());

/** A link's target inside Cairn: a workspace file, a web page, a mail address. */
export type LinkTarget = { kind: "file"; path: string; line: number | null } | { kind: "web"; url: string } | { kind: "mail"; address: string };

/**
 * What a rendered link points at. A relative path becomes a workspace path (`./` and `..`
 * folded; one that climbs out of the workspace is refused: null), with an optional line
 * from `#L12` or `:12`.
 */
export function linkTarget(href: string): LinkTarget | null {
  const h = href.trim();
  if (/^https?:/i.test(h)) return { kind: "web", url: h };
  if (/^mailto:/i.test(h)) return { kind: "mail", address: h.slice("mailto:".length) };
  if (!SAFE_LINK.test(h)) return null;
  let rest = h;
  let line: number | null = null;
  const anchor = /#L(\d+)(?:-L?\d+)?$/.exec(rest);
  if (anchor !== null) {
    line = Number(anchor[1]);
    rest = rest.slice(0, anchor.index);
  }
  rest = rest.replace(/[?#].*$/, "");
  const suffix = /:(\d+)(?::\d+)?$/.exec(rest);
  if (suffix !== null) {
    line ??= Number(suffix[1]);
    rest = rest.slice(0, suffix.index);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return null;
  }
  const parts: string[] = [];
  for (const part of decoded.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  if (parts.length === 0 || decoded.includes("\0")) return null;
  return { kind: "file", path: parts.join("/"), line };
}

// Task lists ("- [ ] step", "- [x] done"): the marker becomes a disabled checkbox made here,
// and the item gets a class; the model's text can never make an input.
md.core.ruler.after("inline", "task-lists", (state) => {
  const tokens = state.tokens;
  for (let i = 2; i < tokens.length; i++) {
    const [item, para, inline] = [tokens[i - 2], tokens[i - 1], tokens[i]];
    if (item?.type !== "list_item_open" || para?.type !== "paragraph_open" || inline?.type !== "inline") continue;
    const first = inline.children?.[0];
    const m = first !== undefined && first.type === "text" ? /^\[([ xX])\]\s+/.exec(first.content) : null;
    if (first === undefined || m === null) continue;
    first.content = first.content.slice(m[0].length);
    const box = new state.Token("html_inline", "", 0);
    box.content = m[1] === " " ? '<input type="checkbox" disabled> ' : '<input type="checkbox" checked disabled> ';
    inline.children?.unshift(box);
    item.attrJoin("class", "md-task");
  }
});

// Table alignment as classes (DOMPurify drops style attributes).
md.core.ruler.push("table-align", (state) => {
  for (const token of state.tokens) {
    if (token.type !== "th_open" && token.type !== "td_open") continue;
    const style = token.attrGet("style");
    const align = style === null ? null : /text-align:\s*(left|center|right)/.exec(String(style));
    if (style !== null) token.attrs = (token.attrs ?? []).filter(([name]) => name !== "style");
    if (align !== null) token.attrJoin("class", `md-align-${align[1]}`);
  }
});

const PURIFY_CONFIG = {
  ALLOWED_TAGS: [
    "a", "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "span", "input",
  ],
  ALLOWED_ATTR: ["href", "class", "start", "type", "checked", "disabled"],
  ALLOWED_URI_REGEXP: SAFE_LINK,
  ALLOW_DATA_ATTR: false,
};

// Links never navigate the page: they show their target as a hint (the page's own, see
// Tips.tsx; set here after sanitising, so the model cannot set one) and say what they are
// (`data-link`: file, web, mail), which the page acts on (Markdown.tsx). An input can only
// be a disabled checkbox.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") ?? "";
    const target = linkTarget(href);
    node.setAttribute("data-tip", target?.kind === "file" ? target.path : href);
    node.setAttribute("class", "md-link");
    if (target === null) node.removeAttribute("href");
    else node.setAttribute("data-link", target.kind);
  } else if (node.tagName === "INPUT") {
    const checked = node.hasAttribute("checked");
    for (const a of [...node.attributes]) node.removeAttribute(a.name);
    node.setAttribute("type", "checkbox");
    node.setAttribute("disabled", "");
    if (checked) node.setAttribute("checked", "");
    node.setAttribute("class", "md-task-box");
  }
});

/** Rendered messages kept for rows scrolled back into view (virtualised rows remount). */
const CACHE_SIZE = 1500;
const cache = new Map<string, string>();

/** Safe HTML for untrusted markdown. */
export function renderMarkdown(text: string): string {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const html = DOMPurify.sanitize(md.render(text), PURIFY_CONFIG);
  if (cache.size >= CACHE_SIZE) {
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.set(text, html);
  return html;
}
