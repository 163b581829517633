import { useCallback } from "react";
import type { Progress } from "../bindings/Progress";
import * as ipc from "../ipc";

/**
 * Starts a batch of worktree sessions from the board: for each name a worktree and its
 * session (shown while it starts), counted against one shared spending cap when one is
 * given, then its first message sent. The turns run side by side; the last one started
 * stays shown. `false` when a worktree could not be made (those already started go on).
 */
export function useStartBatch(
  newWorktree: (name: string, carry: boolean, onProgress: (p: Progress) => void) => Promise<boolean>,
  send: (text: string, images: never[]) => Promise<void>,
  fail: (e: unknown) => void,
) {
  return useCallback(
    async (names: string[], carry: boolean, prompt: string, capUsd: number | null) => {
      const batch = `batch-${Date.now().toString(36)}-${names[0] ?? ""}`;
      for (const name of names) {
        if (!(await newWorktree(name, carry, () => undefined))) return false;
        if (capUsd !== null) {
          try {
            await ipc.joinSpendBatch(batch, { unit: "usd", limit: capUsd });
          } catch (e: unknown) {
            fail(e);
            return false;
          }
        }
        // Not awaited: the turn runs while the next worktree is made (its events go to its
        // own session's chat).
        void send(prompt, []);
      }
      return true;
    },
    [newWorktree, send, fail],
  );
}
