// One JSONL record to a Theorem. Accepted shapes:
//   Lean (seed):     name, statement [, context, imports]
//   Lean (miniF2F):  name | id, formal_statement [, header, informal_stmt]
//   math:            problem + answer, or question + ground_truth
// plus optional id, informal_statement, domain, difficulty, and for Lean proof_format (body, whole_file
// or auto: what a proof is; unset leaves it to the run's dataset.proof_format); other string/number
// fields are kept as metadata.
import { create } from "@bufbuild/protobuf";
import { PROOF_FORMAT_NAMES, proofFormatField, type ProofFormatName } from "@lean-grpo/kit";
import { screenTheorem, statementWithoutProof } from "@lean-grpo/lean";
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
  "proof_format",
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
      this.issues.push({ field, message: `expected a string${options.numberOk ? " or a number" : ""}, got ${kindOf(value)}` });
      return "";
    }
    if (options.required && value.trim() === "") this.issues.push({ field, message: "is empty" });
    return value;
  }

  stringList(field: string): string[] {
    const value = this.record[field];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      this.issues.push({ field, message: `expected a list of strings, got ${kindOf(value)}` });
      return [];
    }
    return value as string[];
  }

  difficulty(): number | undefined {
    const value = this.record.difficulty;
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
      this.issues.push({ field: "difficulty", message: `expected a number in [0, 1], got ${kindOf(value)}` });
      return undefined;
    }
    return value;
  }
}

/**
 * What a wrong value is, never the value itself: a dataset may be a file on the server, and
 * an error must not carry what it holds back to the client.
 */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Loaders strip a trailing `:= by sorry` / `:= sorry` (packages/lean reads it): the statement is the theorem without its proof. */
const withoutSorryProof = statementWithoutProof;

export function theoremFromRecord(record: unknown, fallbackId: string): { theorem?: Theorem; issues: Issue[] } {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    return { issues: [{ field: "", message: `expected a JSON object, got ${kindOf(record)}` }] };
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
    const format = r.string("proof_format");
    if (format !== "") {
      if ((PROOF_FORMAT_NAMES as readonly string[]).includes(format)) theorem.proofFormat = proofFormatField(format as ProofFormatName);
      else r.issues.push({ field: "proof_format", message: `expected one of ${PROOF_FORMAT_NAMES.join(", ")}` });
    }
    // The verifier's theorem screen, here so that a dataset the verifier would refuse fails StartRun and Evaluate before any work.
    const screen = screenTheorem(theorem);
    if (!screen.ok)
      r.issues.push({ field: screen.field === "statement" && miniF2F ? "formal_statement" : screen.field, message: screen.reason });
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
