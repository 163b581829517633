// A unified diff shown unified or side by side, its code highlighted by highlight.js from the
// file's extension. Diff text is untrusted: headers and plain lines are text nodes; the only
// HTML injected is highlight.js's output (it escapes the code it is given) or the escaped
// text `highlight` falls back to. Big diffs stay fast: only the first HIGHLIGHT_LINES lines
// are highlighted, and rows are rendered RENDER_STEP at a time ("Show more").
import { memo, useMemo, useState, type ReactNode } from "react";
import { languageOf, parseDiff, splitRows, type DiffRow, type Side } from "../diff";
import { useT } from "../i18n";
import { highlight } from "../markdown";

/** How a diff is laid out. */
export type DiffMode = "unified" | "split";

/** Lines highlighted per diff; later lines are plain text. */
export const HIGHLIGHT_LINES = 1500;
/** Rows rendered before "Show more". */
const RENDER_STEP = 2000;

/** Whether text looks like a unified diff. */
export function looksLikeDiff(text: string): boolean {
  return /^(--- |\+\+\+ |@@ )/m.test(text) && /^[+-]/m.test(text);
}

const kindClass: Record<DiffRow["kind"], string> = {
  add: "diff-add",
  del: "diff-del",
  ctx: "diff-ctx",
  hunk: "diff-hunk",
  file: "diff-file",
  meta: "diff-ctx",
};

/** One line's code: highlighted (escaped by highlight.js) or a plain text node. */
function Code({ text, lang, lit }: { text: string; lang: string; lit: boolean }) {
  if (!lit || lang === "" || text === "") return <span className="diff-code">{text === "" ? " " : text}</span>;
  return <span className="diff-code hljs" dangerouslySetInnerHTML={{ __html: highlight(text, lang) }} />;
}

/** What a diff's lines can do besides showing: a click on a code line, and what shows under a line. */
export type LineActions = {
  /** A code line (added, removed or context) was clicked; `index` is its row. */
  onLine: (row: DiffRow, index: number) => void;
  /** What to show under row `index` (a comment), if anything. */
  below: (index: number) => ReactNode;
};

function Unified({ rows, lang, shown, lines }: { rows: DiffRow[]; lang: string; shown: number; lines?: LineActions }) {
  let code = 0;
  return (
    <>
      {rows.slice(0, shown).map((r, i) => {
        const content = r.kind === "add" || r.kind === "del" || r.kind === "ctx";
        const lit = content && code++ < HIGHLIGHT_LINES;
        const clickable = content && lines !== undefined;
        const line = (
          <span
            key={i}
            className={`diff-line ${kindClass[r.kind]}${clickable ? " diff-line-clickable" : ""}`}
            data-testid={clickable ? "diff-line" : undefined}
            data-new-no={clickable && r.newNo !== null ? r.newNo : undefined}
            data-old-no={clickable && r.oldNo !== null ? r.oldNo : undefined}
            data-kind={clickable ? r.kind : undefined}
            onClick={clickable ? () => lines.onLine(r, i) : undefined}
          >
            {content ? (
              <>
                {r.prefix}
                <Code text={r.text} lang={lang} lit={lit} />
              </>
            ) : r.raw === "" ? (
              " "
            ) : (
              r.raw
            )}
            {"\n"}
          </span>
        );
        const note = lines?.below(i);
        if (note === undefined || note === null || note === false) return line;
        return (
          <span key={i} className="diff-line-with-note">
            {line}
            <span className="diff-note">{note}</span>
          </span>
        );
      })}
    </>
  );
}

function Cell({ side, column, lang, lit }: { side: Side; column: "old" | "new"; lang: string; lit: boolean }) {
  if (side === null) return <td className={`diff-side diff-${column} diff-empty`} colSpan={2} />;
  return (
    <>
      <td className={`diff-no diff-${side.kind}`}>{side.no}</td>
      <td className={`diff-side diff-${column} diff-${side.kind}`} data-testid={`diff-${column}`}>
        <Code text={side.text} lang={lang} lit={lit} />
      </td>
    </>
  );
}

function Split({ rows, lang, shown }: { rows: DiffRow[]; lang: string; shown: number }) {
  const pairs = useMemo(() => splitRows(rows), [rows]);
  let code = 0;
  return (
    <table className="diff-split">
      <colgroup>
        <col className="diff-col-no" />
        <col />
        <col className="diff-col-no" />
        <col />
      </colgroup>
      <tbody>
        {pairs.slice(0, shown).map((p, i) => {
          if ("header" in p) {
            return (
              <tr key={i} className={`diff-split-header ${kindClass[p.header.kind]}`}>
                <td colSpan={4}>{p.header.raw}</td>
              </tr>
            );
          }
          const lit = code++ < HIGHLIGHT_LINES;
          return (
            <tr key={i}>
              <Cell side={p.left} column="old" lang={lang} lit={lit} />
              <Cell side={p.right} column="new" lang={lang} lit={lit} />
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** A unified diff, unified or side by side, highlighted when its file's `path` is known. */
export const DiffView = memo(function DiffView({
  diff,
  testId,
  path,
  mode = "unified",
  lines,
}: {
  diff: string;
  testId?: string;
  path?: string;
  mode?: DiffMode;
  /** Clickable lines with notes under them (the unified layout only). */
  lines?: LineActions;
}) {
  const t = useT();
  const rows = useMemo(() => parseDiff(diff), [diff]);
  const [shown, setShown] = useState(RENDER_STEP);
  const lang = path === undefined ? "" : languageOf(path);
  const codeLines = rows.filter((r) => r.kind === "add" || r.kind === "del" || r.kind === "ctx").length;
  return (
    <div className={`diff-view diff-view-${mode}`} data-mode={mode}>
      <pre className={mode === "split" ? "diff diff-split-wrap" : "diff"} data-testid={testId}>
        {mode === "split" ? <Split rows={rows} lang={lang} shown={shown} /> : <Unified rows={rows} lang={lang} shown={shown} lines={lines} />}
      </pre>
      {lang !== "" && codeLines > HIGHLIGHT_LINES && <p className="sidebar-empty">{t("diff.plainRest").replace("{n}", String(HIGHLIGHT_LINES))}</p>}
      {rows.length > shown && (
        <button type="button" className="link-button" data-testid="diff-more" onClick={() => setShown((n) => n + RENDER_STEP)}>
          +{rows.length - shown} …
        </button>
      )}
    </div>
  );
});

