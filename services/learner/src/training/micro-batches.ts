// Cuts a step's rows into micro-batches whose padded size (rows × longest prompt +
// completion) stays within a token budget; gradients are accumulated over them. Groups are
// never split, because DGPO's pair term needs a group's best and worst completion in one
// pass. A group larger than the budget becomes a micro-batch of its own.
import type { PreparedRow } from "./prepared-batch.js";

function paddedTokens(rows: readonly PreparedRow[]): number {
  const longest = Math.max(0, ...rows.map((r) => r.example.promptIds.length + r.example.completionIds.length));
  return rows.length * longest;
}

export function microBatches(rows: readonly PreparedRow[], tokenBudget: number): PreparedRow[][] {
  const groups = new Map<string, PreparedRow[]>();
  for (const row of rows) {
    const list = groups.get(row.example.groupId);
    if (list) list.push(row);
    else groups.set(row.example.groupId, [row]);
  }
  const batches: PreparedRow[][] = [];
  let current: PreparedRow[] = [];
  for (const group of groups.values()) {
    if (current.length > 0 && paddedTokens([...current, ...group]) > tokenBudget) {
      batches.push(current);
      current = [];
    }
    current = [...current, ...group];
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
