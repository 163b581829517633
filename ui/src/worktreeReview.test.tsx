// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { ApplyView } from "./bindings/app/ApplyView";
import type { ReviewView } from "./bindings/app/ReviewView";

const review: ReviewView = {
  name: "w",
  branch: "cairn/w",
  base: "0123456789abcdef",
  files: [{ path: "notes.txt", status: "modified", added: 1, removed: 1, binary: false, diff: "@@ -1 +1 @@\n-one\n+ONE\n" }],
};
const conflicted: ApplyView = {
  dryRun: false,
  applied: ["other.txt"],
  conflicts: [
    { path: "notes.txt", reason: "changed in both and the changes overlap", resolvable: true },
    { path: "dir", reason: "a folder is in the way in the folder", resolvable: false },
  ],
  session: "s1",
  sessionName: "Applied from worktree w",
  checkpoint: 1,
};
const settled: ApplyView = { ...conflicted, applied: ["notes.txt"], conflicts: conflicted.conflicts.slice(1), checkpoint: 2 };
const applyWorktree = vi.fn((_name: string, _dry: boolean, keep: string[] = [], take: string[] = []) =>
  Promise.resolve(keep.length + take.length === 0 ? conflicted : settled),
);
vi.mock("./ipc", async (original) => ({
  ...(await original<typeof import("./ipc")>()),
  worktreeReview: () => Promise.resolve(review),
  applyWorktree: (name: string, dry: boolean, keep?: string[], take?: string[]) => applyWorktree(name, dry, keep, take),
}));

const { WorktreeReview } = await import("./components/WorktreeReview");

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root;
let host: HTMLDivElement;

beforeEach(() => {
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  applyWorktree.mockClear();
});

const settle = () => act(async () => await new Promise((r) => setTimeout(r, 0)));
const buttons = () => [...host.querySelectorAll<HTMLButtonElement>("[data-testid=review-actions] button")].map((b) => b.dataset.testid);
const click = (css: string) => act(() => host.querySelector<HTMLButtonElement>(css)?.click());

it("keeps every footer button in place outside the scrolling body and settles a conflict with a click", async () => {
  const opened: string[] = [];
  act(() =>
    root.render(
      <WorktreeReview
        name="w"
        onClose={() => undefined}
        onSend={() => Promise.resolve()}
        onApplied={() => undefined}
        onTerminal={() => undefined}
        onRemoved={() => undefined}
        onHandoff={null}
        onOpenChat={(id) => opened.push(id)}
      />,
    ),
  );
  await settle();
  const all = ["worktree-terminal", "worktree-update", "worktree-commit", "worktree-remove", "worktree-handoff", "worktree-apply", "review-send"];
  expect(buttons()).toEqual(all);
  // Without a chat to continue, "Continue in folder" is disabled, not gone.
  expect(host.querySelector<HTMLButtonElement>("[data-testid=worktree-handoff]")?.disabled).toBe(true);
  // The footer is not part of the body that scrolls and grows with the outcome.
  expect(host.querySelector(".overlay-body [data-testid=review-actions]")).toBeNull();
  expect(host.querySelector(".overlay-foot [data-testid=review-actions]")).not.toBeNull();

  click("[data-testid=worktree-apply]");
  await settle();
  expect(applyWorktree).toHaveBeenLastCalledWith("w", false, [], []);
  const rows = [...host.querySelectorAll<HTMLElement>("[data-testid=apply-conflict]")];
  expect(rows.map((r) => [r.dataset.path, r.querySelectorAll("button").length])).toEqual([
    ["notes.txt", 2],
    ["dir", 0],
  ]);
  expect(host.querySelector("[data-testid=apply-recorded]")?.textContent).toContain("Applied from worktree w");
  expect(buttons()).toEqual(all);

  click("[data-testid=apply-conflict][data-path='notes.txt'] [data-testid=conflict-take]");
  await settle();
  expect(applyWorktree).toHaveBeenLastCalledWith("w", false, [], ["notes.txt"]);
  expect([...host.querySelectorAll<HTMLElement>("[data-testid=apply-conflict]")].map((r) => r.dataset.path)).toEqual(["dir"]);
  expect(buttons()).toEqual(all);

  click("[data-testid=apply-open-chat]");
  expect(opened).toEqual(["s1"]);
});
