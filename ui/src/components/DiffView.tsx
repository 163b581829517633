import { memo } from "react";

/** Whether text looks like a unified diff. */
export function looksLikeDiff(text: string): boolean {
  return /^(--- |\+\+\+ |@@ )/m.test(text) && /^[+-]/m.test(text);
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-ctx";
}

/** A unified diff, one coloured line per row (text only: the diff is untrusted). */
export const DiffView = memo(function DiffView({ diff, testId }: { diff: string; testId?: string }) {
  const lines = diff.replace(/\n$/, "").split("\n");
  return (
    <pre className="diff" data-testid={testId}>
      {lines.map((line, i) => (
        <span key={i} className={`diff-line ${lineClass(line)}`}>
          {line === "" ? " " : line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
});

/** A diff made from a replacement (old lines removed, new lines added). */
export function replacementDiff(path: string, oldText: string, newText: string): string {
  const minus = oldText.split("\n").map((l) => `-${l}`);
  const plus = newText.split("\n").map((l) => `+${l}`);
  return [`--- a/${path}`, `+++ b/${path}`, "@@", ...minus, ...plus].join("\n");
}
