// What the agent is doing while a turn runs, for the transcript's working indicator: waiting
// for the model, writing, running a tool or waiting for the user. Derived from the typed
// items the reducer keeps (no text parsing).
import type { Item } from "./transcript";

/** The phase of a running turn. */
export type WorkingPhase =
  | { kind: "model" }
  | { kind: "writing" }
  | { kind: "tool"; name: string }
  | { kind: "approval"; name: string };

/** The phase shown for `items` of a running turn (`null` when no turn runs). */
export function workingPhase(items: readonly Item[], running: boolean): WorkingPhase | null {
  if (!running) return null;
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it === undefined) continue;
    if (it.kind === "tool") {
      if (it.state === "awaiting") return { kind: "approval", name: it.name };
      if (it.state === "running" || it.state === "proposed") return { kind: "tool", name: it.name };
      // The last call finished: the model is working on its answer.
      return { kind: "model" };
    }
    if (it.kind === "assistant") return it.streaming && it.text !== "" ? { kind: "writing" } : { kind: "model" };
    if (it.kind === "user") return { kind: "model" };
  }
  return { kind: "model" };
}

/** A stable key of a phase: the elapsed time restarts when it changes. */
export function phaseKey(p: WorkingPhase): string {
  return p.kind === "tool" || p.kind === "approval" ? `${p.kind}:${p.name}` : p.kind;
}

/** Elapsed time as the indicator shows it: `7s`, `1m 05s`. */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, "0")}s`;
}
