// Unified diffs as rows: the unified view's lines with their numbers, and the side-by-side
// view's pairs (a run of removed lines next to the run of added lines that replaced it).
// Pure functions over untrusted text: nothing here builds HTML.

/** One line of a unified diff. */
export type DiffRow = {
  kind: "add" | "del" | "ctx" | "hunk" | "file" | "meta";
  /** The line without its `+`/`-`/space prefix (the whole line for headers). */
  text: string;
  /** The line as it appears in the diff (prefix included). */
  raw: string;
  /** The prefix removed from `text` (`+`, `-`, a space, or nothing for a line without one). */
  prefix: string;
  /** Line number in the old file (removed and context lines). */
  oldNo: number | null;
  /** Line number in the new file (added and context lines). */
  newNo: number | null;
};

/** One side of a side-by-side row. */
export type Side = { text: string; no: number; kind: "add" | "del" | "ctx" } | null;

/** A row of the side-by-side view: a header across both columns, or old next to new. */
export type SplitRow = { header: DiffRow } | { left: Side; right: Side };

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** Parses a (per-file) unified diff into rows with old/new line numbers. */
export function parseDiff(diff: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const raw of diff.replace(/\n$/, "").split("\n")) {
    const hunk = HUNK.exec(raw);
    if (hunk !== null || raw.startsWith("@@")) {
      oldNo = Number(hunk?.[1] ?? 1);
      newNo = Number(hunk?.[2] ?? 1);
      inHunk = true;
      rows.push({ kind: "hunk", text: raw, raw, prefix: "", oldNo: null, newNo: null });
    } else if (!inHunk && (raw.startsWith("+++") || raw.startsWith("---"))) {
      rows.push({ kind: "file", text: raw, raw, prefix: "", oldNo: null, newNo: null });
    } else if (raw.startsWith("+")) {
      rows.push({ kind: "add", text: raw.slice(1), raw, prefix: "+", oldNo: null, newNo: newNo++ });
    } else if (raw.startsWith("-")) {
      rows.push({ kind: "del", text: raw.slice(1), raw, prefix: "-", oldNo: oldNo++, newNo: null });
    } else if (raw.startsWith("\\")) {
      rows.push({ kind: "meta", text: raw, raw, prefix: "", oldNo: null, newNo: null });
    } else {
      const spaced = raw.startsWith(" ");
      rows.push({ kind: "ctx", text: spaced ? raw.slice(1) : raw, raw, prefix: spaced ? " " : "", oldNo: oldNo++, newNo: newNo++ });
    }
  }
  return rows;
}

/** Pairs rows for the side-by-side view. */
export function splitRows(rows: DiffRow[]): SplitRow[] {
  const out: SplitRow[] = [];
  let dels: DiffRow[] = [];
  let adds: DiffRow[] = [];
  const flush = () => {
    const n = Math.max(dels.length, adds.length);
    for (let i = 0; i < n; i++) {
      const d = dels[i];
      const a = adds[i];
      out.push({
        left: d === undefined ? null : { text: d.text, no: d.oldNo ?? 0, kind: "del" },
        right: a === undefined ? null : { text: a.text, no: a.newNo ?? 0, kind: "add" },
      });
    }
    dels = [];
    adds = [];
  };
  for (const r of rows) {
    if (r.kind === "del") {
      // A removal after additions starts a new change block.
      if (adds.length > 0) flush();
      dels.push(r);
    } else if (r.kind === "add") {
      adds.push(r);
    } else {
      flush();
      if (r.kind === "ctx") {
        out.push({ left: { text: r.text, no: r.oldNo ?? 0, kind: "ctx" }, right: { text: r.text, no: r.newNo ?? 0, kind: "ctx" } });
      } else {
        out.push({ header: r });
      }
    }
  }
  flush();
  return out;
}

/** The highlight.js language name for a path (its extension; `""` when none). */
export function languageOf(path: string): string {
  const name = path.split("/").pop() ?? "";
  if (name === "Makefile" || name === "Dockerfile") return "";
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot + 1).toLowerCase();
}
