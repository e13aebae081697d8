// What a proof must prove, taken from the request's Theorem (the dataset's record,
// never the proof): the header it needs, the statement with its trailing `:= ...`
// removed, the context placed before it, and the declared name `#print axioms` will
// ask about. The header, the context and the statement pass the one theorem screen of
// @lean-grpo/lean here, before any worker sees them (on the fallback token table; the
// proof's screen runs them again on the header's own table).
import type { ProofFormat as ProofFormatField } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { proofFormatName } from "@lean-grpo/kit";
import {
  blankComments,
  crlfToLf,
  declaredTheoremName,
  keywordOf,
  screenHeader,
  screenTheoremSource,
  statementWithoutProof,
  tokenize,
  type ProofFormat,
} from "@lean-grpo/lean";

export interface TheoremFields {
  name: string;
  statement: string;
  context: string;
  imports: readonly string[];
  header: string;
  /** Theorem.proof_format; unset reads as a body. */
  proofFormat?: ProofFormatField;
}

export interface TheoremTarget {
  /** The import header, elaborated once per worker and cached. */
  header: string;
  /** The declared name, as written in the statement (e.g. `foo`, `Nat.foo`, `«my thm»`). */
  name: string;
  /** The statement without comments and without a trailing `:=`, `:= by`, `:= sorry` or `:= by sorry`. */
  statement: string;
  /** The context without comments, or "" when there is none. */
  context: string;
  /**
   * The constant the statement declares: `name` inside the namespaces the context
   * leaves open (`namespace Foo` → `Foo.name`), without a leading `_root_.`.
   */
  fullName: string;
  /** What a proof of it is: a body (when unset), a whole file, or either (`auto`). */
  proofFormat?: ProofFormat;
}

/** A request field that cannot be used; becomes INVALID_ARGUMENT naming `field`. */
export class InvalidField extends Error {
  override name = "InvalidField";
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }

  /** The same problem, for a field nested under `prefix` (e.g. "items[3]."). */
  under(prefix: string): InvalidField {
    return new InvalidField(prefix + this.field, this.detail);
  }
}

/** A module name is one Lean identifier, the whole string (`Mathlib`, `Mathlib.Tactic`, `«My Module»`). */
function isModuleName(module: string): boolean {
  const { tokens, error } = tokenize(module);
  return error === undefined && tokens.length === 1 && tokens[0]!.kind === "identifier" && tokens[0]!.text === module;
}

/**
 * The request's theorem as a target. `defaultHeader` serves theorems without a header;
 * `allowedHeaders` (the operator's `repl.allowed_headers`), when not empty, are the
 * only headers accepted. Every header passes `screenHeader` first.
 */
export function theoremTarget(
  theorem: TheoremFields | undefined,
  defaultHeader: string,
  allowedHeaders: readonly string[] = [],
): TheoremTarget {
  if (!theorem) throw new InvalidField("theorem", "is required (the statement to prove comes from it, never from the proof)");
  const header = admittedHeader(theorem, defaultHeader, allowedHeaders);
  const statement = statementWithoutProof(blankComments(crlfToLf(theorem.statement)).trim());
  if (statement === "") {
    throw new InvalidField("theorem.statement", 'is empty; expected a Lean statement such as "theorem add_zero (n : Nat) : n + 0 = n"');
  }
  const declared = declaredTheoremName(statement);
  if (declared === undefined) {
    throw new InvalidField(
      "theorem.statement",
      `must declare a named theorem ("theorem NAME ..." or "lemma NAME ..."), so that #print axioms can check it; got: ${excerpt(statement)}`,
    );
  }
  if (theorem.name !== "" && theorem.name !== declared) {
    throw new InvalidField("theorem.name", `is "${theorem.name}" but theorem.statement declares "${declared}"; they must agree`);
  }
  const screen = screenTheoremSource(theorem);
  if (!screen.ok) throw new InvalidField(`theorem.${screen.field}`, screen.reason);
  const context = blankComments(crlfToLf(theorem.context)).trimEnd();
  return {
    header,
    name: declared,
    statement,
    context,
    fullName: qualifiedName(context, declared),
    proofFormat: proofFormatName(theorem.proofFormat),
  };
}

/**
 * `name` as declared after `context`: prefixed with the namespaces still open at its
 * end (`namespace A.B` … `end B`, `section` … `end`), unless it starts at `_root_`.
 */
export function qualifiedName(context: string, name: string): string {
  if (name.startsWith("_root_.")) return name.slice("_root_.".length);
  const scopes: string[][] = [];
  const tokens = tokenize(context).tokens;
  tokens.forEach((token, i) => {
    const next = tokens[i + 1];
    const named = next?.kind === "identifier" ? next.text.split(".") : undefined;
    const word = keywordOf(token);
    if (word === "namespace" && named) scopes.push(named);
    else if (word === "section") scopes.push([]);
    else if (word === "end") scopes.pop();
  });
  return [...scopes.flat(), name].join(".");
}

/** The header as Lean will see it, after the one header check and the operator's list. */
function admittedHeader(theorem: TheoremFields, defaultHeader: string, allowedHeaders: readonly string[]): string {
  const header = headerOf(theorem, defaultHeader);
  const field = theorem.header.trim() !== "" ? "theorem.header" : theorem.imports.length > 0 ? "theorem.imports" : "repl.default_header";
  const screen = screenHeader(header);
  if (!screen.ok) throw new InvalidField(field, screen.reason);
  if (allowedHeaders.length > 0 && !allowedHeaders.some((allowed) => normalHeader(allowed) === header)) {
    throw new InvalidField(field, `is not one of the ${allowedHeaders.length} headers this verifier accepts (repl.allowed_headers)`);
  }
  return header;
}

/** A header as it is compared and cached: LF line ends, no surrounding blank space. */
export function normalHeader(header: string): string {
  return crlfToLf(header).trim();
}

/** `header` verbatim when set, else one `import` line per module of `imports`, else the configured default. */
function headerOf(theorem: TheoremFields, defaultHeader: string): string {
  if (theorem.header.trim() !== "") return normalHeader(theorem.header);
  if (theorem.imports.length === 0) return normalHeader(defaultHeader);
  theorem.imports.forEach((module, i) => {
    if (!isModuleName(module)) {
      throw new InvalidField(`theorem.imports[${i}]`, `"${module}" is not a Lean module name (e.g. "Mathlib" or "Mathlib.Tactic")`);
    }
  });
  return theorem.imports.map((module) => `import ${module}`).join("\n");
}

function excerpt(text: string): string {
  const line = text.split("\n", 1)[0]!;
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}
