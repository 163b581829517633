// `@path` mentions in the composer: where the token being typed is, ranking the workspace's
// files against it, and the text after picking one. Pure functions (the list is in
// components/Mentions.tsx); the backend reads the mentioned files when the prompt is sent.

/** The `@` token the caret is in: where it starts (the `@`) and what follows it. */
export type MentionQuery = { start: number; query: string };

/** The mention being typed at `caret`, or null (an `@` must start the text or follow a space or `(`). */
export function mentionAt(text: string, caret: number): MentionQuery | null {
  let i = caret - 1;
  while (i >= 0 && text[i] !== "@" && !/\s/.test(text[i] ?? "")) i--;
  if (i < 0 || text[i] !== "@") return null;
  if (i > 0 && !/[\s(]/.test(text[i - 1] ?? "")) return null;
  return { start: i, query: text.slice(i + 1, caret) };
}

function score(path: string, q: string): number {
  const base = path.slice(path.lastIndexOf("/") + 1);
  if (base.startsWith(q)) return 1000 - base.length;
  if (path.startsWith(q)) return 900 - path.length / 10;
  const inBase = base.indexOf(q);
  if (inBase >= 0) return 800 - inBase;
  const inPath = path.indexOf(q);
  if (inPath >= 0) return 600 - inPath / 10;
  // Fuzzy: the query's characters in order, fewer gaps first.
  let j = 0;
  let gaps = 0;
  let last = -1;
  for (let i = 0; i < path.length && j < q.length; i++) {
    if (path[i] !== q[j]) continue;
    if (last >= 0) gaps += i - last - 1;
    last = i;
    j++;
  }
  return j === q.length ? Math.max(1, 400 - gaps) : 0;
}

/** The best `limit` files for `query`: name prefix, path prefix, substring, then fuzzy. */
export function rankFiles(files: string[], query: string, limit = 8): string[] {
  const q = query.toLowerCase();
  if (q === "") return [...files].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b)).slice(0, limit);
  const scored: { path: string; s: number }[] = [];
  for (const path of files) {
    const s = score(path.toLowerCase(), q);
    if (s > 0) scored.push({ path, s });
  }
  scored.sort((a, b) => b.s - a.s || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((x) => x.path);
}

/** How a path is written as a mention (quoted when it holds spaces). */
export function mentionText(path: string): string {
  return /\s/.test(path) ? `@"${path}"` : `@${path}`;
}

/** `text` with the mention at `at` (up to `caret`) replaced by `path`; the new caret. */
export function pickMention(text: string, at: MentionQuery, caret: number, path: string): { text: string; caret: number } {
  const inserted = `${mentionText(path)} `;
  const next = text.slice(0, at.start) + inserted + text.slice(caret).replace(/^\S*/, "").replace(/^ /, "");
  return { text: next, caret: at.start + inserted.length };
}
