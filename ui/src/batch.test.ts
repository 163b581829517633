import { describe, expect, it } from "vitest";
import type { BoardRow } from "./bindings/app/BoardRow";
import { batchEstimate, batchNames } from "./batch";

const row = (costUsd: number | null): BoardRow => ({ costUsd }) as BoardRow;

describe("a batch's estimate", () => {
  it("is the average known cost of this folder's sessions times the count, bounded by the cap", () => {
    const e = batchEstimate(3, [row(0.02), row(null), row(0.04), row(0)], 0.5);
    expect(e.basis).toBe(2);
    expect(e.eachUsd).toBeCloseTo(0.03);
    expect(e.totalUsd).toBeCloseTo(0.09);
    expect(e.capUsd).toBe(0.5);
  });
  it("has no figure without a session of known cost", () => {
    expect(batchEstimate(4, [row(null)], null)).toEqual({ basis: 0, eachUsd: null, totalUsd: null, capUsd: null });
  });
  it("names one worktree per session", () => {
    expect(batchNames("fix", 1)).toEqual(["fix"]);
    expect(batchNames("fix", 3)).toEqual(["fix-1", "fix-2", "fix-3"]);
  });
});
