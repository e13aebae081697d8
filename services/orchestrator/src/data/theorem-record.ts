// One dataset record to a Theorem. Accepted shapes (after the layout, dataset-layout.ts, has
// mapped a corpus's columns onto these names):
//   Lean (seed):     name, statement [, context, imports]
//   Lean (miniF2F):  name | id, formal_statement [, header, informal_stmt]
//   math:            problem + answer, or question + ground_truth
//   conversational:  prompt: [{role: "user", content}] (TRL) + answer | solution | ground_truth | reward_model.ground_truth (verl)
// plus optional id, informal_statement, domain, difficulty, and for Lean proof_format (body, whole_file
// or auto: what a proof is; unset leaves it to the run's dataset.proof_format); other string/number
// fields are kept as metadata.
import { create } from "@bufbuild/protobuf";
import { PROOF_FORMAT_NAMES, proofFormatField, type ProofFormatName } from "@lean-grpo/kit";
import { screenTheorem, statementWithoutProof } from "@lean-grpo/lean";
import { TaskKind, TheoremSchema, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { DatasetIssue } from "./dataset-error.js";
import { docCommentText, type RecordField, type ResolvedLayout } from "./dataset-layout.js";
import { mathlibNamesIn } from "./mathlib-names.js";

export const ACCEPTED_SHAPES =
  "name + statement (Lean), formal_statement [+ header] (miniF2F), problem + answer or question + ground_truth (math), " +
  'prompt: [{"role": "user", "content"}] + answer (conversational); other layouts: dataset.layout or dataset.fields.*';

/** How records are read: the layout in use and the header for Lean records that carry none. */
export interface RecordReading {
  layout: ResolvedLayout;
  /** dataset.header: the Lean header of records without one ("" = none configured). */
  header: string;
}

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
 * A Lean record with no header (and none configured) whose statement names Mathlib cannot
 * elaborate: the verifier would check it under an empty header and answer ERROR for every
 * proof. Refused before the run starts, naming the key that supplies one.
 */
function needsHeader(theorem: Theorem, reading: RecordReading, issues: Issue[]): void {
  if (theorem.header.trim() !== "" || theorem.imports.length > 0) return;
  const names = mathlibNamesIn(theorem.statement);
  if (names.length === 0) return;
  const mapped = reading.layout.fields.header;
  issues.push({
    field: "header",
    message:
      `is empty and the statement uses Mathlib (${names.join(", ")}), so it cannot elaborate` +
      `${reading.layout.headerAdvice ? ` (${reading.layout.headerAdvice})` : ""}: set dataset.header (e.g. dataset.header='import Mathlib'), ` +
      `${mapped ? `or check that the column "${mapped}" (dataset.fields.header) holds the header` : "or name the column that holds each record's header with dataset.fields.header"}`,
  });
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

/** Where each record field comes from under a layout: the corpus's column name. */
const CANONICAL: Record<RecordField, string> = {
  id: "id",
  name: "name",
  statement: "statement",
  header: "header",
  informal: "informal_statement",
  context: "context",
  imports: "imports",
  problem: "problem",
  answer: "answer",
  domain: "domain",
  difficulty: "difficulty",
};

/**
 * The record with the layout's columns renamed to the fields this module reads, and for each
 * renamed field the column it came from (so that an issue names the column the user has).
 */
function mappedRecord(
  raw: Record<string, unknown>,
  layout: ResolvedLayout,
): { record: Record<string, unknown>; columnOf: Map<string, string> } {
  const columnOf = new Map<string, string>();
  const entries = Object.entries(layout.fields) as [RecordField, string][];
  if (entries.length === 0) return { record: raw, columnOf };
  const record: Record<string, unknown> = { ...raw };
  for (const [, column] of entries) delete record[column];
  for (const [field, column] of entries) {
    if (raw[column] === undefined) continue;
    let value = raw[column];
    if (field === "informal" && layout.informalIsDocComment && typeof value === "string") value = docCommentText(value);
    record[CANONICAL[field]] = value;
    columnOf.set(CANONICAL[field], column);
  }
  return { record, columnOf };
}

const ROLES = "system, user, assistant";

/** A TRL-style conversational record ({"prompt": [{role, content}], ...}) as a math record, or the issue that stops it. */
function conversationalRecord(raw: Record<string, unknown>): { record?: Record<string, unknown>; issue?: Issue } {
  const messages = raw.prompt as unknown[];
  const turns: { role: string; content: string }[] = [];
  for (const [i, message] of messages.entries()) {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (typeof m !== "object" || m === null || typeof m.role !== "string" || typeof m.content !== "string")
      return { issue: { field: `prompt[${i}]`, message: `expected {"role", "content"} with string values, got ${kindOf(message)}` } };
    if (!ROLES.split(", ").includes(m.role)) return { issue: { field: `prompt[${i}].role`, message: `expected one of ${ROLES}` } };
    turns.push({ role: m.role, content: m.content });
  }
  const users = turns.filter((t) => t.role === "user");
  if (users.length !== 1 || turns.length !== 1)
    return {
      issue: {
        field: "prompt",
        message:
          `holds ${turns.map((t) => t.role).join(", ") || "no turns"}; a conversational record must be one user turn (the problem): ` +
          "the run writes the prompt itself (prompt.template); put a system turn in prompt.system",
      },
    };
  const { prompt: _prompt, ...rest } = raw;
  const rewardModel = raw.reward_model as { ground_truth?: unknown } | undefined;
  const answer =
    raw.answer ??
    raw.solution ??
    raw.ground_truth ??
    (typeof rewardModel === "object" && rewardModel ? rewardModel.ground_truth : undefined);
  return { record: { ...rest, problem: users[0]!.content, answer } };
}

export function theoremFromRecord(
  raw: unknown,
  fallbackId: string,
  reading: RecordReading = { layout: { name: "plain", how: "", fields: {}, informalIsDocComment: false }, header: "" },
): { theorem?: Theorem; issues: Issue[] } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { issues: [{ field: "", message: `expected a JSON object, got ${kindOf(raw)}` }] };
  }
  let { record, columnOf } = mappedRecord(raw as Record<string, unknown>, reading.layout);
  if (Array.isArray(record.prompt) && !("problem" in record) && !("statement" in record) && !("formal_statement" in record)) {
    const conversational = conversationalRecord(record);
    if (conversational.issue) return { issues: [conversational.issue] };
    record = conversational.record!;
    columnOf = new Map([["problem", "prompt"], ...columnOf]);
  }
  const named = (issues: Issue[]) => issues.map((issue) => ({ ...issue, field: columnOf.get(issue.field) ?? issue.field }));
  const result = theoremFromFields(record, fallbackId, reading);
  return { ...result, issues: named(result.issues) };
}

function theoremFromFields(
  record: Record<string, unknown>,
  fallbackId: string,
  reading: RecordReading,
): { theorem?: Theorem; issues: Issue[] } {
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
      header: r.string("header") || reading.header,
      informalStatement: informal,
      kind: TaskKind.LEAN_PROOF,
    });
    const format = r.string("proof_format");
    if (format !== "") {
      if ((PROOF_FORMAT_NAMES as readonly string[]).includes(format)) theorem.proofFormat = proofFormatField(format as ProofFormatName);
      else r.issues.push({ field: "proof_format", message: `expected one of ${PROOF_FORMAT_NAMES.join(", ")}` });
    }
    needsHeader(theorem, reading, r.issues);
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
