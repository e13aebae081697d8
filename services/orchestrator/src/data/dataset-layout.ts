// The column layouts of the corpora provers train and evaluate on, as presets that map a
// corpus's columns onto the record fields theorem-record.ts reads. Column names are those of
// the corpora's own releases:
//   minif2f       DeepSeek-Prover / Goedel-Prover miniF2F (and the Lean 4 ProofNet copy in the
//                 same layout): name, split, informal_prefix, formal_statement, goal, header
//   proofnet      ProofNet's Hugging Face release: id, nl_statement, formal_statement, src_header, nl_proof
//   lean-workbook Lean Workbook: id, natural_language_statement, formal_statement, answer, ... (no header)
//   goedel-pset   Goedel-Pset: problem_id, informal_statement, formal_statement
//   putnambench   PutnamBench: name, lean4_statement, informal_statement, informal_solution, tags
// `dataset.fields.*` overrides any of them; "auto" picks a preset where the columns say
// unambiguously which corpus it is (see detectLayout), else reads the record keys as they are.

/** The record fields a column can be mapped to. */
export const RECORD_FIELDS = [
  "id",
  "name",
  "statement",
  "header",
  "informal",
  "context",
  "imports",
  "problem",
  "answer",
  "domain",
  "difficulty",
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];
export type FieldMap = Partial<Record<RecordField, string>>;

export const LAYOUTS = ["auto", "plain", "minif2f", "proofnet", "proofnet-lean4", "lean-workbook", "goedel-pset", "putnambench"] as const;
export type LayoutName = (typeof LAYOUTS)[number];

interface Preset {
  fields: FieldMap;
  /** Text wrapped around the informal column that is not part of the problem (a doc comment). */
  informalIsDocComment?: boolean;
  /** Shown when a record of this layout has no header and none is configured. */
  headerAdvice?: string;
}

const MINIF2F: Preset = {
  fields: { name: "name", statement: "formal_statement", header: "header", informal: "informal_prefix" },
  informalIsDocComment: true,
};

export const PRESETS: Record<Exclude<LayoutName, "auto" | "plain">, Preset> = {
  minif2f: MINIF2F,
  "proofnet-lean4": MINIF2F,
  proofnet: { fields: { id: "id", statement: "formal_statement", header: "src_header", informal: "nl_statement" } },
  "lean-workbook": {
    fields: { id: "id", statement: "formal_statement", informal: "natural_language_statement" },
    headerAdvice: "Lean Workbook records carry no header",
  },
  "goedel-pset": { fields: { id: "problem_id", statement: "formal_statement", informal: "informal_statement" } },
  putnambench: { fields: { name: "name", statement: "lean4_statement", informal: "informal_statement" } },
};

/**
 * The preset a record's columns name unambiguously, or undefined (read the keys as they are).
 * Only column sets no other layout shares: informal_prefix (DeepSeek/Goedel miniF2F),
 * src_header or nl_statement (ProofNet), natural_language_statement (Lean Workbook),
 * lean4_statement (PutnamBench). Goedel-Pset's columns are the plain ones but for problem_id,
 * so it is detected by problem_id + formal_statement.
 */
export function detectLayout(columns: ReadonlySet<string>): Exclude<LayoutName, "auto" | "plain"> | undefined {
  const has = (name: string) => columns.has(name);
  if (has("statement") || has("problem") || has("question")) return undefined;
  if (has("formal_statement") && has("informal_prefix")) return "minif2f";
  if (has("formal_statement") && (has("src_header") || has("nl_statement"))) return "proofnet";
  if (has("formal_statement") && has("natural_language_statement")) return "lean-workbook";
  if (has("lean4_statement")) return "putnambench";
  if (has("formal_statement") && has("problem_id")) return "goedel-pset";
  return undefined;
}

export interface ResolvedLayout {
  /** The preset in use ("plain": the record's own keys). */
  name: Exclude<LayoutName, "auto">;
  /** How it was chosen, for messages: "set by dataset.layout", "detected from the columns". */
  how: string;
  fields: FieldMap;
  informalIsDocComment: boolean;
  headerAdvice?: string;
}

/** The layout to read with: the configured preset (or the one detected from the first record's columns), then dataset.fields on top. */
export function resolveLayout(layout: LayoutName, fields: FieldMap, firstColumns: ReadonlySet<string>): ResolvedLayout {
  const detected = layout === "auto" ? detectLayout(firstColumns) : undefined;
  const name = layout === "auto" ? (detected ?? "plain") : layout;
  const preset = name === "plain" ? undefined : PRESETS[name];
  return {
    name,
    how: layout === "auto" ? (detected ? "detected from the columns" : "the record keys as they are") : "set by dataset.layout",
    fields: { ...preset?.fields, ...fields },
    informalIsDocComment: preset?.informalIsDocComment === true,
    ...(preset?.headerAdvice ? { headerAdvice: preset.headerAdvice } : {}),
  };
}

/** `/-- text -/` (miniF2F's informal_prefix) as the text itself. */
export function docCommentText(text: string): string {
  const match = /^\s*\/-[-!]?([\s\S]*?)-\/\s*$/.exec(text);
  return (match ? match[1]! : text).trim();
}
