// The cut of a step's rows into micro-batches: every row once, within the token budget
// (a unit larger than it alone), groups whole when asked, and less padding than the
// arrival-order cut on rows of mixed lengths. That the cut leaves the gradient unchanged is
// algorithm-parity.spec.ts's "micro-batches of 24 tokens accumulate the full-batch gradient".
import { describe, expect, it } from "vitest";
import { cutByLength, microBatches, PASS_COST_TOKENS } from "../src/training/micro-batches.js";
import type { PreparedRow } from "../src/training/prepared-batch.js";

/** Row i of group ⌊i / size⌋ with a 4-token prompt and the given completion length. */
function rows(completionLengths: readonly number[], groupSize: number): PreparedRow[] {
  return completionLengths.map((length, index) => ({
    example: {
      sampleId: `s${index}`,
      groupId: `g${Math.floor(index / groupSize)}`,
      promptIds: [1, 2, 3, 4],
      completionIds: Array(length).fill(5),
      samplerLogprobs: null,
      reward: 0,
      truncated: false,
    },
    index,
    advantage: 0,
    live: true,
  }));
}

const lengthOf = (row: PreparedRow) => row.example.promptIds.length + row.example.completionIds.length;
const padded = (batches: PreparedRow[][]) => batches.reduce((sum, batch) => sum + batch.length * Math.max(...batch.map(lengthOf)), 0);
const indices = (batches: PreparedRow[][]) => batches.flat().map((row) => row.index);

// Groups of 8 whose completions run from 2 to 30 tokens, as a step's rollouts do.
const MIXED = rows(
  Array.from({ length: 64 }, (_, i) => 2 + ((i * 7) % 29)),
  8,
);

describe("micro-batches", () => {
  it("by length: every row once, within the budget, with a fifth less padding than in arrival order here", () => {
    const byLength = microBatches(MIXED, 4096, { keepGroups: false });
    const inOrder = microBatches(MIXED, 4096, { keepGroups: false, inArrivalOrder: true });
    expect(indices(byLength).sort((a, b) => a - b)).toEqual(MIXED.map((r) => r.index));
    for (const batch of byLength) expect(batch.length * Math.max(...batch.map(lengthOf))).toBeLessThanOrEqual(4096);
    expect(inOrder).toHaveLength(1);
    const [cut, before] = [padded(byLength), padded(inOrder)];
    expect(cut + PASS_COST_TOKENS * byLength.length).toBeLessThan(before + PASS_COST_TOKENS);
    expect(cut).toBeLessThan(0.8 * before);
  });

  it("keeps groups whole when the pair term needs them, and still orders them by length", () => {
    const grouped = rows([200, 2, 2, 2, 3, 3, 3, 3, 200, 200, 200, 200], 4);
    const batches = microBatches(grouped, 4096, { keepGroups: true });
    for (const batch of batches) expect(new Set(batch.map((r) => r.example.groupId)).size * 4).toBe(batch.length);
    expect(indices(batches).sort((a, b) => a - b)).toEqual(grouped.map((r) => r.index));
    // Group 1 (short) goes first; groups 0 and 2 (200 tokens each) share the longest pass.
    expect(batches[0]!.map((r) => r.example.groupId)).toEqual(["g1", "g1", "g1", "g1"]);
  });

  it("a unit over the budget is a micro-batch of its own; a budget of one row cuts every row apart", () => {
    const long = rows([100, 1, 1], 1);
    const batches = microBatches(long, 50, { keepGroups: false });
    expect(batches.map((b) => b.map((r) => r.index))).toEqual([[1, 2], [0]]);
    expect(microBatches(rows([3, 3, 3], 1), 7, { keepGroups: false })).toHaveLength(3);
  });

  it("cuts only where the padding saved pays for another pass", () => {
    // Two lengths 1 token apart: one pass is cheaper than two.
    const close = cutByLength([10, 11, 10, 11], (n) => ({ rows: 1, longest: n }), 1 << 20);
    expect(close).toEqual([[10, 10, 11, 11]]);
    // 64 rows of 8 and one of 400: apart, the 64 save 64 × 392 padded tokens.
    const far = cutByLength([...Array(64).fill(8), 400], (n) => ({ rows: 1, longest: n }), 1 << 20);
    expect(far.map((pass) => pass.length)).toEqual([64, 1]);
  });
});
