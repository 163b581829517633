// Starting several worktree sessions at once from the board: what they may cost.
import type { BoardRow } from "./bindings/app/BoardRow";

/** At most this many sessions in one batch. */
export const MAX_BATCH = 8;

/** What starting `count` sessions may cost, before they start. */
export interface BatchEstimate {
  /** Sessions of this folder whose cost is known (the estimate's basis). */
  basis: number;
  /** Their average cost in dollars (`null`: no basis). */
  eachUsd: number | null;
  /** `count` times the average (`null`: no basis). */
  totalUsd: number | null;
  /** The batch stops here (`null`: no cap). */
  capUsd: number | null;
}

/**
 * The estimate the dialog shows: the average dollar cost of this folder's sessions that have
 * one (sessions that spent nothing are left out), times `count`; the cap bounds it.
 */
export function batchEstimate(count: number, rows: readonly BoardRow[], capUsd: number | null): BatchEstimate {
  const costs = rows.map((r) => r.costUsd).filter((c): c is number => c !== null && c > 0);
  const eachUsd = costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0) / costs.length;
  return {
    basis: costs.length,
    eachUsd,
    totalUsd: eachUsd === null ? null : eachUsd * count,
    capUsd,
  };
}

/** The worktree names of a batch: `name-1` … `name-count` (just `name` for one). */
export function batchNames(name: string, count: number): string[] {
  if (count <= 1) return [name];
  return Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
}
