// Reads a Lean or math JSONL file whole and validates every record before anything is
// used: a run starts with all of it or not at all.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { screenTheorem } from "@lean-grpo/lean";
import { parseJsonLines } from "@lean-grpo/jsonl";
import type { PathRoot } from "@lean-grpo/kit";
import { DatasetError, type DatasetIssue } from "./dataset-error.js";
import { theoremFromRecord } from "./theorem-record.js";

/** Where a dataset file may be read from and how much of it: the orchestrator's data_root. */
export interface DatasetFiles {
  root: PathRoot;
  maxBytes: number;
}

/**
 * Reads `given` (relative to the data root) and validates it; `field` is the request field
 * or config key it came from. Refused paths throw PathError (kit/paths), named by field.
 */
export async function loadDataset(files: DatasetFiles, given: string, field: string): Promise<Theorem[]> {
  return parseDataset(await files.root.readText(given, field, files.maxBytes), given);
}

export function parseDataset(text: string, source: string): Theorem[] {
  const issues: DatasetIssue[] = [];
  const theorems: Theorem[] = [];
  const firstLineOfId = new Map<string, number>();
  for (const { line, value: record, error } of parseJsonLines(text)) {
    if (error !== undefined) {
      issues.push({ line, field: "", message: error });
      continue;
    }
    const result = theoremFromRecord(record, `line-${line}`);
    issues.push(...result.issues.map((issue) => ({ line, ...issue })));
    if (!result.theorem) continue;
    const seen = firstLineOfId.get(result.theorem.id);
    if (seen !== undefined) {
      issues.push({ line, field: "id", message: `is the id of line ${seen} too; ids must be unique` });
      continue;
    }
    firstLineOfId.set(result.theorem.id, line);
    theorems.push(result.theorem);
  }
  if (issues.length === 0 && theorems.length === 0) issues.push({ line: 0, field: "", message: "has no records" });
  if (issues.length > 0) throw new DatasetError(source, issues);
  return theorems;
}

/** Checks an inline dataset (StartRunRequest.theorems) the same way: ids unique, a task in each. */
export function validateInlineTheorems(theorems: readonly Theorem[]): void {
  const issues: DatasetIssue[] = [];
  const seen = new Map<string, number>();
  theorems.forEach((theorem, index) => {
    const line = index + 1;
    if (!theorem.id) issues.push({ line, field: "id", message: "is empty" });
    if (!theorem.statement && !(theorem.informalStatement && theorem.answer)) {
      issues.push({
        line,
        field: "statement",
        message: "a theorem needs a Lean statement, or informal_statement + answer for a math task",
      });
    }
    const screen = screenTheorem(theorem);
    if (!screen.ok) issues.push({ line, field: screen.field, message: screen.reason });
    const first = seen.get(theorem.id);
    if (first !== undefined) issues.push({ line, field: "id", message: `"${theorem.id}" is already used by theorem ${first}` });
    seen.set(theorem.id, line);
  });
  if (theorems.length === 0) issues.push({ line: 0, field: "", message: "has no theorems" });
  if (issues.length > 0) throw new DatasetError("inline theorems", issues);
}
