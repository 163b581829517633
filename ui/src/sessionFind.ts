// Search within the shown session (Ctrl+F): the runtime searches the whole log and names
// each hit's turn group; this is the field's state (the query, what came back, which hit is
// current) and the steps Enter and Shift+Enter take. Outside React, so it is tested alone.
import type { SearchHit } from "./bindings/app/SearchHit";
import type { SessionSearch } from "./bindings/app/SessionSearch";

/** The search field's state. */
export type FindState = {
  open: boolean;
  query: string;
  /** What the runtime found for `result.query`; null before the first answer. */
  result: SessionSearch | null;
  /** The hit shown (index into `result.hits`); -1: none yet. */
  current: number;
  /** A search for `query` is under way. */
  searching: boolean;
};

/** Closed, empty. */
export const closedFind: FindState = { open: false, query: "", result: null, current: -1, searching: false };

/** Opened (Ctrl+F): keeps the last query and its hits. */
export function opened(s: FindState): FindState {
  return { ...s, open: true };
}

/** Closed (Escape): the highlight goes, the query stays for the next Ctrl+F. */
export function closed(s: FindState): FindState {
  return { ...s, open: false, current: -1 };
}

/** The query typed; the old hits stay until the new answer comes. */
export function typed(s: FindState, query: string): FindState {
  return { ...s, query, searching: query.trim() !== "" };
}

/**
 * The runtime's answer: taken only while it answers the query still typed (an answer to an
 * older query that comes late is dropped). The first hit becomes current.
 */
export function answered(s: FindState, result: SessionSearch): FindState {
  if (result.query !== s.query.trim()) return s;
  return { ...s, result, searching: false, current: result.hits.length > 0 ? 0 : -1 };
}

/** The next hit (Enter), or the previous one (Shift+Enter); wraps around. */
export function step(s: FindState, back: boolean): FindState {
  const n = s.result?.hits.length ?? 0;
  if (n === 0) return s;
  const cur = s.current < 0 ? (back ? 0 : -1) : s.current;
  return { ...s, current: (cur + (back ? -1 : 1) + n) % n };
}

/** The hit shown, if any. */
export function currentHit(s: FindState): SearchHit | null {
  // Hits of a query no longer typed are not shown.
  if (!s.open || s.result === null || s.current < 0 || s.result.query !== s.query.trim()) return null;
  return s.result.hits[s.current] ?? null;
}

/** Matches of `query` in `text`, case-insensitive: the text cut into plain and matched parts. */
export function splitMatches(text: string, query: string): { text: string; match: boolean }[] {
  const q = query.trim().toLowerCase();
  if (q === "") return [{ text, match: false }];
  const lower = text.toLowerCase();
  // Lower-casing may change lengths (rare letters): then the text is left as it is.
  if (lower.length !== text.length) return [{ text, match: false }];
  const out: { text: string; match: boolean }[] = [];
  let at = 0;
  for (let i = lower.indexOf(q); i !== -1; i = lower.indexOf(q, i + q.length)) {
    if (i > at) out.push({ text: text.slice(at, i), match: false });
    out.push({ text: text.slice(i, i + q.length), match: true });
    at = i + q.length;
  }
  if (at < text.length) out.push({ text: text.slice(at), match: false });
  return out;
}

/**
 * Wraps each match of `query` in the text under `root` (rendered markdown) in a
 * `<mark class="find-mark">`; returns how many. Code-block buttons are left alone.
 */
export function markMatches(root: HTMLElement, query: string): number {
  const q = query.trim();
  if (q === "") return 0;
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
    if (n.parentElement?.closest("button, mark.find-mark") == null) nodes.push(n as Text);
  }
  let count = 0;
  for (const node of nodes) {
    const parts = splitMatches(node.data, q);
    if (!parts.some((p) => p.match)) continue;
    const frag = root.ownerDocument.createDocumentFragment();
    for (const p of parts) {
      if (!p.match) {
        frag.append(p.text);
        continue;
      }
      const mark = root.ownerDocument.createElement("mark");
      mark.className = "find-mark";
      mark.dataset.testid = "find-mark";
      mark.textContent = p.text;
      frag.append(mark);
      count++;
    }
    node.replaceWith(frag);
  }
  return count;
}

/** Takes the marks of [`markMatches`] away again. */
export function unmark(root: HTMLElement): void {
  for (const m of [...root.querySelectorAll("mark.find-mark")]) m.replaceWith(m.textContent ?? "");
  root.normalize();
}
