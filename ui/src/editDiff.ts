// Diffs a tool card shows for a file edit, built from the call's arguments.

/** Lines of a new file's content shown before the rest is summarised. */
export const CONTENT_LINES = 40;

/** The lines of `text` as an editor shows them: a final newline ends the last line. */
function lines(text: string): string[] {
  return text === "" ? [] : text.replace(/\n$/, "").split("\n");
}

/** `old_string` → `new_string` of a replacement as a one-hunk diff. */
export function replacementDiff(path: string, oldText: string, newText: string): string {
  const minus = lines(oldText).map((l) => `-${l}`);
  const plus = lines(newText).map((l) => `+${l}`);
  return [`--- a/${path}`, `+++ b/${path}`, "@@", ...minus, ...plus].join("\n");
}

/** A whole file's `content` as added lines (the first [`CONTENT_LINES`], then how many more). */
export function contentDiff(path: string, content: string): string {
  const all = lines(content);
  const shown = all.slice(0, CONTENT_LINES).map((l) => `+${l}`);
  const more = all.length - CONTENT_LINES;
  const tail = more > 0 ? [` … ${more} more line${more === 1 ? "" : "s"}`] : [];
  return [`+++ b/${path}`, ...shown, ...tail].join("\n");
}
