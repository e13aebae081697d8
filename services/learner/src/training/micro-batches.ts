// Cuts a step's rows into micro-batches whose padded size (rows × longest prompt +
// completion) stays within a token budget; gradients are accumulated over them, and the
// loss's denominators are the whole batch's, so any cut gives the same gradient.
//
// The cut is chosen for speed: a pass costs about its padded tokens (the products are
// arithmetic-bound) plus a fixed cost per pass. Rows are ordered by length and cut where
// that total is least (an exact dynamic programme over the sorted rows), so short
// completions no longer pay for the batch's longest: one step of the README's main command
// pads about a quarter fewer tokens.
//
// Groups are kept whole only when `keepGroups` (DGPO's pair term needs a group's best and
// worst completion in one pass); then groups are ordered and cut instead of rows. A unit
// larger than the budget becomes a micro-batch of its own.
import type { PreparedRow } from "./prepared-batch.js";

/**
 * A pass's fixed cost (ops, kernel calls, tape) in padded tokens: an estimate, not a
 * measurement (the shared machine was too loaded to fit it): a pass's few hundred ops
 * cost tens of ms on wasm, the arithmetic of about 64 tokens; 256 cuts only where it
 * clearly pays.
 */
export const PASS_COST_TOKENS = 256;

const lengthOf = (row: PreparedRow) => row.example.promptIds.length + row.example.completionIds.length;

export interface MicroBatchOptions {
  /** Keep each group in one micro-batch (DGPO's pair term). */
  keepGroups: boolean;
  /** The cut before issue 26 (whole groups in arrival order, a new micro-batch when the next would pass the budget): the bench's baseline. */
  inArrivalOrder?: boolean;
}

export function microBatches(rows: readonly PreparedRow[], tokenBudget: number, options: MicroBatchOptions): PreparedRow[][] {
  const groups = new Map<string, PreparedRow[]>();
  for (const row of rows) {
    const list = groups.get(row.example.groupId);
    if (list) list.push(row);
    else groups.set(row.example.groupId, [row]);
  }
  if (options.inArrivalOrder) return cutInArrivalOrder([...groups.values()], tokenBudget);
  if (!options.keepGroups) return cutByLength(rows, (row) => ({ rows: 1, longest: lengthOf(row) }), tokenBudget);
  const cut = cutByLength(
    [...groups.values()],
    (group) => ({ rows: group.length, longest: Math.max(...group.map(lengthOf)) }),
    tokenBudget,
  );
  return cut.map((batch) => batch.flat());
}

function cutInArrivalOrder(groups: readonly PreparedRow[][], tokenBudget: number): PreparedRow[][] {
  const padded = (rows: readonly PreparedRow[]) => rows.length * Math.max(0, ...rows.map(lengthOf));
  const batches: PreparedRow[][] = [];
  let current: PreparedRow[] = [];
  for (const group of groups) {
    if (current.length > 0 && padded([...current, ...group]) > tokenBudget) {
      batches.push(current);
      current = [];
    }
    current = [...current, ...group];
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * `units` (rows, or groups of rows) in passes of units ordered by their longest row, cut
 * where padded tokens plus PASS_COST_TOKENS per pass are least (an exact dynamic programme
 * over the sorted units). Units of equal length keep their order.
 */
export function cutByLength<T>(units: readonly T[], sizeOf: (unit: T) => { rows: number; longest: number }, tokenBudget: number): T[][] {
  const sorted = units.map((unit, index) => ({ unit, index, ...sizeOf(unit) })).sort((a, b) => a.longest - b.longest || a.index - b.index);
  // best[i]: least cost of units 0..i−1; from[i]: where its last pass starts.
  const best = new Float64Array(sorted.length + 1).fill(Number.POSITIVE_INFINITY);
  const from = new Int32Array(sorted.length + 1);
  best[0] = 0;
  for (let end = 1; end <= sorted.length; end++) {
    const width = sorted[end - 1]!.longest; // the longest row of any pass that ends here
    let rows = 0;
    for (let start = end - 1; start >= 0; start--) {
      rows += sorted[start]!.rows;
      const padded = rows * width;
      if (padded > tokenBudget && start < end - 1) break; // over the budget only as a unit of its own
      const cost = best[start]! + padded + PASS_COST_TOKENS;
      if (cost < best[end]!) {
        best[end] = cost;
        from[end] = start;
      }
    }
  }
  const passes: T[][] = [];
  for (let end = sorted.length; end > 0; end = from[end]!) passes.unshift(sorted.slice(from[end]!, end).map((s) => s.unit));
  return passes;
}
