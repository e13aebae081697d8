// One JSONL record to a Theorem. Accepted shapes:
//   Lean (seed):     name, statement [, context, imports]
//   Lean (miniF2F):  name | id, formal_statement [, header, informal_stmt]
//   math:            problem + answer, or question + ground_truth
// plus optional id, informal_statement, domain, difficulty; other string/number fields are kept as metadata.
import { create } from "@bufbuild/protobuf";
import { screenTheoremHeader, statementWithoutProof } from "@lean-grpo/lean";
import { TaskKind, TheoremSchema, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { DatasetIssue } from "./dataset-error.js";

export const ACCEPTED_SHAPES =
  "name + statement (Lean), formal_statement [+ header] (miniF2F), problem + answer or question + ground_truth (math)";

const KNOWN = new Set([
  "id",
  "name",
  "statement",
  "context",
  "imports",
  "formal_statement",
  "header",
  "informal_stmt",
  "informal_statement",
  "problem",
  "answer",
  "question",
  "ground_truth",
  "domain",
  "difficulty",
]);

type Issue = Omit<DatasetIssue, "line">;

class RecordReader {
  readonly issues: Issue[] = [];
  constructor(private readonly record: Record<string, unknown>) {}

  has(field: string): boolean {
    return this.record[field] !== undefined && this.record[field] !== null;
  }

  string(field: string, options: { required?: boolean; numberOk?: boolean } = {}): string {
    const value = this.record[field];
    if (value === undefined || value === null) {
      if (options.required) this.issues.push({ field, message: "is missing" });
      return "";
    }
    if (typeof value === "number" && options.numberOk && Number.isFinite(value)) return String(value);
    if (typeof value !== "string") {
      this.issues.push({ field, message: `expected a string${options.numberOk ? " or a number" : ""}, got ${JSON.stringify(value)}` });
      return "";
    }
    if (options.required && value.trim() === "") this.issues.push({ field, message: "is empty" });
    return value;
  }

  stringList(field: string): string[] {
    const value = this.record[field];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      this.issues.push({ field, message: `expected a list of strings, got ${JSON.stringify(value)}` });
      return [];
    }
    return value as string[];
  }

  difficulty(): number | undefined {
    const value = this.record.difficulty;
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
      this.issues.push({ field: "difficulty", message: `expected a number in [0, 1], got ${JSON.stringify(value)}` });
      return undefined;
    }
    return value;
  }
}

/** Loaders strip a trailing `:= by sorry` / `:= sorry` (packages/lean reads it): the statement is the theorem without its proof. */
const withoutSorryProof = statementWithoutProof;

export function theoremFromRecord(record: unknown, fallbackId: string): { theorem?: Theorem; issues: Issue[] } {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    return { issues: [{ field: "", message: `expected a JSON object, got ${JSON.stringify(record)?.slice(0, 60)}` }] };
  }
  const r = new RecordReader(record as Record<string, unknown>);
  const id = r.string("id", { numberOk: true });
  const name = r.string("name");
  const informal = r.has("informal_statement") ? r.string("informal_statement") : r.string("informal_stmt");
  const common = {
    domain: r.string("domain"),
    difficulty: r.difficulty(),
    metadata: Object.fromEntries(
      Object.entries(record as Record<string, unknown>)
        .filter(([key, value]) => !KNOWN.has(key) && (typeof value === "string" || typeof value === "number" || typeof value === "boolean"))
        .map(([key, value]) => [key, String(value)]),
    ),
  };

  let theorem: Theorem;
  if (r.has("statement") || r.has("formal_statement")) {
    const miniF2F = !r.has("statement");
    const statement = withoutSorryProof(r.string(miniF2F ? "formal_statement" : "statement", { required: true }));
    if (!miniF2F && !name && !id) r.issues.push({ field: "name", message: "is missing (a Lean record needs name or id)" });
    theorem = create(TheoremSchema, {
      ...common,
      id: id || name || fallbackId,
      name,
      statement,
      context: r.string("context"),
      imports: r.stringList("imports"),
      header: r.string("header"),
      informalStatement: informal,
      kind: TaskKind.LEAN_PROOF,
    });
    // The verifier's header check, here so that a dataset with a bad header fails StartRun and Evaluate before any work.
    const header = screenTheoremHeader(theorem);
    if (!header.ok) r.issues.push({ field: header.field, message: header.reason });
  } else if (r.has("problem") || r.has("question")) {
    const [textField, answerField] = r.has("problem") ? ["problem", "answer"] : ["question", "ground_truth"];
    theorem = create(TheoremSchema, {
      ...common,
      id: id || name || fallbackId,
      name,
      informalStatement: r.string(textField!, { required: true }),
      answer: r.string(answerField!, { required: true, numberOk: true }),
      kind: TaskKind.MATH_ANSWER,
    });
  } else {
    return { issues: [{ field: "", message: `no task fields; accepted records: ${ACCEPTED_SHAPES}` }] };
  }
  return r.issues.length > 0 ? { issues: r.issues } : { theorem, issues: [] };
}
