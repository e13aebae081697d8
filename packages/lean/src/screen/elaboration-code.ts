// Routes to code that runs while Lean elaborates a text, or to the environment itself
// (reference/lean-verification.md §3.2a), refused in every part: the proof, and the
// dataset's context and statement, whose lemmas' tactic blocks are elaborated on the
// same host. Elaboration-time code can add a declaration the kernel never checked
// (`addDeclCore` with checking off, `addDecl` under `debug.skipKernelTC`), and
// `#print axioms` trusts what the environment holds; it can also reach IO. A list of
// macro names cannot be complete (Mathlib adds them every month), so these entries
// refuse what every such route needs rather than the routes' names: a `do` block, a
// quotation, a name literal, the metaprogramming namespaces (directly or opened), the
// environment's API, and any option or attribute that is not one of the few listed.
// This is the cheap pre-filter; the sandbox and the replay tier are the guarantee.
import { COMMAND_KEYWORDS, keywordOf } from "../commands.js";
import { HEADER_OPTIONS } from "../header-screen.js";
import type { LeanToken } from "../tokens.js";
import { METAPROGRAMMING_NAMESPACES } from "./metaprogramming.js";
import { construct, EVERYWHERE, PROOF_ONLY, single, THEOREM_ONLY, type BannedConstruct, type Matcher } from "./construct.js";

/** Names of the environment's and the compiler's API, in any namespace (`Lean.addDecl`, `addDecl` after an `open`). */
const ENVIRONMENT_API = new Set([
  "addDecl",
  "addDeclCore",
  "addAndCompile",
  "addAndCompileUnsafe",
  "modifyEnv",
  "setEnv",
  "replaceConst",
  "evalTactic",
  "evalTerm",
  "evalExpr",
  "elabTerm",
  "elabCommand",
  "unsafeCast",
  "unsafeIO",
  "unsafeBaseIO",
  "unsafeEIO",
  "ofExcept",
  "withOptions",
  "modifyOptions",
  "setOption",
  "KVMap",
]);

/** Options a proof may scope with `set_option … in`: resource limits and what only changes messages. */
const ALLOWED_OPTIONS = new Set([
  "maxHeartbeats",
  "maxRecDepth",
  "synthInstance.maxHeartbeats",
  "synthInstance.maxSize",
  "maxSteps",
  // Honest Mathlib proofs scope these too; each changes only how a tactic searches, never what the kernel checks.
  "maxSynthPendingDepth",
  "push_neg.use_distrib",
  "tactic.skipAssignedInstances",
  "exponentiation.threshold",
]);
const ALLOWED_OPTION_GROUPS = new Set(["linter", "pp"]);

/** Options a context or statement may set: a proof's, and the header's (`autoImplicit`, ...), which bound elaboration only. */
const THEOREM_OPTIONS = new Set([...ALLOWED_OPTIONS, ...HEADER_OPTIONS.keys()]);

const CODE = "runs code while Lean elaborates the text, which can reach IO or add declarations the kernel never checks";

/** The first component of a name, past `_root_` (`_root_.Lean.Elab.x` is in `Lean`). */
function firstComponent(token: LeanToken): string | undefined {
  if (token.kind !== "identifier") return undefined;
  const components = token.components![0] === "_root_" ? token.components!.slice(1) : token.components!;
  return components[0];
}

/** The option's name as Lean reads it: «escaped» parts unescaped and joined (`«debug».skipKernelTC` → debug.skipKernelTC). */
export function optionName(token: LeanToken): string {
  return token.components!.join(".");
}

export function isAllowedOption(name: string, listed: ReadonlySet<string> = ALLOWED_OPTIONS): boolean {
  return listed.has(name) || ALLOWED_OPTION_GROUPS.has(name.split(".")[0]!);
}

/** `set_option NAME` with a NAME not on `listed` (whatever its spelling). */
function unlistedOption(listed: ReadonlySet<string>): Matcher {
  return (tokens, at) => {
    if (keywordOf(tokens[at]!) !== "set_option") return undefined;
    const name = tokens[at + 1];
    if (name === undefined || name.kind !== "identifier") return at + 1;
    return isAllowedOption(optionName(name), listed) ? undefined : at + 2;
  };
}

/**
 * Mathlib's `eval% t` (syntax `eval_expr`, elaborated by `Mathlib.Meta.elabEvalExpr` with `Meta.evalExpr`): one
 * token on a Mathlib table; on the fallback table the word `eval` with `%` glued to it.
 */
const interpreterEval: Matcher = (tokens, at) => {
  const [token, next] = [tokens[at]!, tokens[at + 1]];
  if (token.text === "eval%") return at + 1;
  const glued = keywordOf(token) === "eval" && next?.kind === "symbol" && next.text.startsWith("%") && next.start === token.end;
  return glued ? at + 2 : undefined;
};

/**
 * Attributes a declaration may carry — a context's, the statement's, or a proof body's own `where` /
 * `let rec` ones (Lean's `letRecDecl` takes `@[…]`): those that only guide the elaborator, tag a lemma
 * for a tactic that reads lemmas, or state what the kernel has checked. Any other, e.g. `tactic`,
 * `term_elab`, `macro`, `init`, `export`, `extern`, `implemented_by`, `csimp`, `norm_num`, `positivity`
 * or `aesop`, registers code that runs while Lean elaborates, or swaps compiled code for the kernel's.
 */
const LISTED_ATTRIBUTES = new Set([
  "simp",
  "reducible",
  "irreducible",
  "semireducible",
  "instance",
  "inline",
  "noinline",
  "specialize",
  "nolint",
  "ext",
  "symm",
  "refl",
  "trans",
  "elab_as_elim",
  "match_pattern",
  "norm_cast",
  "push_cast",
  "coe",
]);

/** In the `@[…]` (or `attribute [`) list opening at `open`, the token of the first attribute not listed (`open` when never closed). */
function unlistedAttributeIn(tokens: readonly LeanToken[], open: number): number | undefined {
  let depth = 0;
  let expectName = true;
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (depth === 0 && token.text === "]") return undefined;
    if (["(", "[", "{", "⟨"].includes(token.text)) depth++;
    else if ([")", "]", "}", "⟩"].includes(token.text)) depth--;
    else if (depth === 0 && token.text === ",") expectName = true;
    else if (expectName && depth === 0) {
      const word = keywordOf(token);
      if (word === "local" || word === "scoped" || token.text === "-") continue;
      if (word === undefined || !LISTED_ATTRIBUTES.has(word)) return i;
      expectName = false;
    }
  }
  return open;
}

/** Per token list (read once): the tokens where an attribute outside LISTED_ATTRIBUTES stands. */
const unlistedAttributes = new WeakMap<readonly LeanToken[], ReadonlySet<number>>();

/**
 * An attribute outside LISTED_ATTRIBUTES, in `@[…]` or the `attribute […]` command, matched at its name, so
 * that an entry naming the attribute itself (`csimp`, `implemented_by`, `extern`) reports it first.
 */
const unlistedAttribute: Matcher = (tokens, at) => {
  let found = unlistedAttributes.get(tokens);
  if (!found) {
    const names = new Set<number>();
    tokens.forEach((token, open) => {
      const list = token.text === "@[" || (token.text === "[" && keywordOf(tokens[open - 1] ?? token) === "attribute");
      const offending = list ? unlistedAttributeIn(tokens, open) : undefined;
      if (offending !== undefined) names.add(offending);
    });
    found = names;
    unlistedAttributes.set(tokens, found);
  }
  return found.has(at) ? at + 1 : undefined;
};

/** Symbols an `open` may hold between its namespaces: `open Nat (succ)`, `open Nat renaming succ → s, zero → z`. */
const OPEN_SYMBOLS = new Set(["(", ")", "→", "->", ","]);

/**
 * `open A B … in` (or `open … hiding/renaming …`) naming a metaprogramming namespace, or `namespace` entering
 * one: either way its members answer to short names.
 */
const openMetaprogramming: Matcher = (tokens, at) => {
  if (keywordOf(tokens[at]!) === "namespace") {
    return METAPROGRAMMING_NAMESPACES.has(firstComponent(tokens[at + 1] ?? tokens[at]!) ?? "") ? at + 2 : undefined;
  }
  if (keywordOf(tokens[at]!) !== "open") return undefined;
  for (let i = at + 1; i < tokens.length && keywordOf(tokens[i]!) !== "in"; i++) {
    const token = tokens[i]!;
    const first = firstComponent(token);
    if (first !== undefined && METAPROGRAMMING_NAMESPACES.has(first)) return i + 1;
    // The `open` ends at the first token its syntax cannot hold (another command's keyword, a term's symbol):
    // reading on would make a body of many `open`s quadratic to screen.
    const word = keywordOf(token);
    const inOpen = token.kind === "identifier" ? word === "scoped" || !COMMAND_KEYWORDS.has(word ?? "") : OPEN_SYMBOLS.has(token.text);
    if (!inOpen) return undefined;
  }
  return undefined;
};

export const ELABORATION_TIME_CODE: readonly BannedConstruct[] = [
  construct(
    "do",
    `writes a monadic program (a \`do\` block); a theorem or its proof has no use for one, and run_tac, by_elab and the macros over them run it: it ${CODE}`,
    EVERYWHERE,
    single((t) => keywordOf(t) === "do"),
    ["do"],
  ),
  construct(
    "syntax quotation",
    `quotes syntax, which only metaprograms (macros and elaborators) use: it ${CODE}`,
    EVERYWHERE,
    single((t) => t.kind === "symbol" && t.text.startsWith("`")),
  ),
  construct(
    "name literal",
    "builds a name at elaboration time (how metaprograms name declarations and options, e.g. an option spelled from parts)",
    EVERYWHERE,
    single((t) => t.kind === "nameLiteral"),
  ),
  construct(
    "metaprogramming namespace",
    `names the elaborator, the environment, the kernel or IO (\`Lean.*\`, \`IO.*\`, ...): it ${CODE}`,
    EVERYWHERE,
    single((t) => METAPROGRAMMING_NAMESPACES.has(firstComponent(t) ?? "")),
    METAPROGRAMMING_NAMESPACES,
  ),
  construct(
    "environment API",
    "names an API that writes the environment, evaluates code or sets options (addDecl, modifyEnv, evalTactic, withOptions, ...)",
    EVERYWHERE,
    single((t) => t.kind === "identifier" && t.components!.some((c) => ENVIRONMENT_API.has(c))),
    ENVIRONMENT_API,
  ),
  construct(
    "metaprogramming namespace opened",
    `opens (or, with \`namespace\`, enters) the elaborator's, the environment's or IO's namespace, so its API is reachable by short names: it ${CODE}`,
    EVERYWHERE,
    openMetaprogramming,
    ["open", "namespace"],
  ),
  construct(
    "set_option (not allowed in a proof)",
    `sets an option a proof may not scope; allowed: ${[...ALLOWED_OPTIONS].join(", ")}, linter.*, pp.* (options such as debug.skipKernelTC switch off the kernel)`,
    PROOF_ONLY,
    unlistedOption(ALLOWED_OPTIONS),
    ["set_option"],
  ),
  construct(
    "set_option (not allowed in a theorem)",
    `sets an option a context or statement may not set; allowed: ${[...THEOREM_OPTIONS].join(", ")}, linter.*, pp.* ` +
      "(options such as debug.skipKernelTC switch off the kernel)",
    THEOREM_ONLY,
    unlistedOption(THEOREM_OPTIONS),
    ["set_option"],
  ),
  construct(
    "attribute (not allowed)",
    `gives a declaration an attribute that is not allowed (allowed: ${[...LISTED_ATTRIBUTES].join(", ")}); others, such as ` +
      "tactic, term_elab, macro, init, export, extern, implemented_by or norm_num, register code that runs while Lean elaborates",
    EVERYWHERE,
    unlistedAttribute,
  ),
  construct(
    "include_str",
    "reads a file while Lean elaborates the text (core's `include_str`); a theorem or its proof has no files to read",
    EVERYWHERE,
    single((t) => keywordOf(t) === "include_str"),
    ["include_str"],
  ),
  construct(
    "eval%",
    `evaluates a term in the interpreter while elaborating (Mathlib's \`eval%\`, Meta.evalExpr): it ${CODE}`,
    EVERYWHERE,
    interpreterEval,
    ["eval", "eval%"],
  ),
  construct(
    "polyrith",
    "sends the goal to an external server (and prints a proof to paste rather than proving)",
    EVERYWHERE,
    single((t) => keywordOf(t) === "polyrith"),
    ["polyrith"],
  ),
];
