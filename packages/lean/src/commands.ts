// Which tokens can begin a top-level command. Lean's command loop parses a command
// at each token; after a parse error it skips token by token and resumes at the
// first one a command parser accepts (Lean/Parser/Module.lean, parseCommand). So a
// text that must stay inside one declaration may hold none of these tokens, at any
// position: not a word list to grep for, but the first tokens of the `command`
// syntax category (core Lean, Batteries and Mathlib).
import type { TokenTable } from "./token-table.js";
import type { LeanToken } from "./tokens.js";

/** Words that begin a command: declarations and their modifiers, scoping, syntax extension, meta-programs, options. */
export const COMMAND_KEYWORDS: ReadonlySet<string> = new Set([
  // declarations and modifiers (Lean.Parser.Command.declaration, declModifiers)
  "theorem",
  "lemma",
  "def",
  "abbrev",
  "instance",
  "example",
  "axiom",
  "opaque",
  "inductive",
  "coinductive",
  "structure",
  "class",
  "private",
  "protected",
  "public",
  "noncomputable",
  "unsafe",
  "partial",
  "nonrec",
  "meta",
  "deriving",
  "mutual",
  "alias",
  "irreducible_def",
  "proof_wanted",
  "binder_predicate",
  "grind_pattern",
  "simproc",
  "dsimproc",
  "simproc_decl",
  "dsimproc_decl",
  "builtin_simproc",
  "builtin_dsimproc",
  // scopes and names in scope
  "namespace",
  "section",
  "end",
  "open",
  "export",
  "universe",
  "universes",
  "variable",
  "include",
  "omit",
  "local",
  "scoped",
  "attribute",
  "set_option",
  "seal",
  "unseal",
  "import",
  "prelude",
  "module",
  // syntax and elaborators
  "syntax",
  "macro",
  "macro_rules",
  "elab",
  "elab_rules",
  "notation",
  "notation3",
  "infix",
  "infixl",
  "infixr",
  "prefix",
  "postfix",
  "declare_syntax_cat",
  "syntax_abbrev",
  "declare_simp_like_tactic",
  "register_simp_attr",
  "register_option",
  "register_builtin_option",
  "register_label_attr",
  "declare_aesop_rule_sets",
  "initialize_simps_projections",
  "add_decl_doc",
  "library_note",
  "assert_not_exists",
  "assert_not_imported",
  "suppress_compilation",
  "unsuppress_compilation",
  "compile_inductive",
  "compile_def",
  "recommended_spelling",
  // code run while elaborating
  "run_cmd",
  "run_elab",
  "run_meta",
  "initialize",
  "builtin_initialize",
  "whatsnew",
  // commands of core and of Mathlib's dependencies that the fallback table would otherwise read as names
  "unif_hint",
  "declare_config_elab",
  "register_error_explanation",
  "register_tactic_tag",
  "tactic_extension",
  "register_linter_set",
  "add_aesop_rules",
  "erase_aesop_rules",
  "variable?",
]);

/** Symbols that begin a command: attributes before a declaration. (Doc comments do too; callers blank them.) */
export const COMMAND_SYMBOLS: ReadonlySet<string> = new Set(["@["]);

/** A keyword: a plain (unescaped) one-part identifier. `«theorem»` and `Foo.theorem` are names, not keywords. */
export function keywordOf(token: LeanToken): string | undefined {
  if (token.kind !== "identifier" || token.escaped || token.components?.length !== 1) return undefined;
  return token.text;
}

/**
 * The command `token` can begin (`theorem`, `#eval`, `@[`), or undefined. Every
 * `#`-command token counts (`#eval`, `#exit`, Mathlib's `#find`). With an
 * environment's table, its command category's leading tokens count too (Mathlib's
 * own commands), beside this file's list.
 */
export function commandStartedBy(token: LeanToken, table?: TokenTable): string | undefined {
  if (token.kind === "hashCommand") return token.text;
  if (
    token.kind === "symbol" &&
    (COMMAND_SYMBOLS.has(token.text) || (table?.source === "environment" && table.commandTokens.has(token.text)))
  ) {
    return token.text;
  }
  const keyword = keywordOf(token);
  if (keyword === undefined || HEADER_ONLY.has(keyword)) return undefined;
  if (COMMAND_KEYWORDS.has(keyword)) return keyword;
  return table?.source === "environment" && table.commandTokens.has(keyword) ? keyword : undefined;
}

/**
 * Words that begin a file header (`module`, `prelude`), which Lean reads only at the
 * start of a file: no command parser starts with them, so the command loop never
 * resumes at one, and Mathlib's `module` tactic is an honest proof.
 */
const HEADER_ONLY: ReadonlySet<string> = new Set(["module", "prelude"]);
