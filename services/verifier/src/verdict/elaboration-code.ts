// Routes from a proof body to code that runs while Lean elaborates it, or to the
// environment itself (reference/lean-verification.md §3.2a). Elaboration-time code
// can add a declaration the kernel never checked (`addDeclCore` with checking off,
// `addDecl` under `debug.skipKernelTC`), and `#print axioms` trusts what the
// environment holds. A list of macro names cannot be complete (Mathlib adds them
// every month), so these entries refuse what every such route needs rather than
// the routes' names: a `do` block, a quotation, a name literal, the metaprogramming
// namespaces (directly or opened), the environment's API, and any option that is not
// one of the few a proof may scope. This is the cheap pre-filter; the replay tier
// (replay/) is the guarantee.
import { COMMAND_KEYWORDS, keywordOf, type LeanToken } from "@lean-grpo/lean";
import { construct, PROOF_ONLY, single, type BannedConstruct, type Matcher } from "./construct.js";

/** Namespaces whose members run or build elaboration-time code: `Lean.*` (Elab, Meta, Environment, Kernel, ...), IO and its kin. */
const METAPROGRAMMING_NAMESPACES = new Set([
  "Lean",
  "IO",
  "EIO",
  "BaseIO",
  "EStateM",
  "System",
  "Elab",
  "Meta",
  "Kernel",
  "Environment",
  "Parser",
  "Syntax",
  "Macro",
  "MacroM",
  "CoreM",
  "MetaM",
  "TermElabM",
  "TacticM",
  "CommandElabM",
  "Unsafe",
]);

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

const CODE = "runs code while Lean elaborates the proof, which can add declarations the kernel never checks";

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

export function isAllowedOption(name: string): boolean {
  return ALLOWED_OPTIONS.has(name) || ALLOWED_OPTION_GROUPS.has(name.split(".")[0]!);
}

/** `set_option NAME` with a NAME not on the allowed list (whatever its spelling). */
const unlistedOption: Matcher = (tokens, at) => {
  if (keywordOf(tokens[at]!) !== "set_option") return undefined;
  const name = tokens[at + 1];
  if (name === undefined || name.kind !== "identifier") return at + 1;
  return isAllowedOption(optionName(name)) ? undefined : at + 2;
};

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
 * Attributes a proof body may give its own `where` / `let rec` declarations (Lean's `letRecDecl` takes
 * `@[…]`): those that only guide the elaborator or state what the kernel has checked. Any other, e.g.
 * `tactic`, `term_elab`, `macro`, `init`, `export`, registers code or changes how later text elaborates.
 */
const LOCAL_ATTRIBUTES = new Set(["simp", "reducible", "irreducible", "semireducible", "instance", "inline", "specialize", "nolint"]);

/** In the `@[…]` opening at `open`, the token of the first attribute outside LOCAL_ATTRIBUTES (`open` when never closed). */
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
      if (word === undefined || !LOCAL_ATTRIBUTES.has(word)) return i;
      expectName = false;
    }
  }
  return open;
}

/** Per token list (read once): the tokens where an attribute outside LOCAL_ATTRIBUTES stands. */
const unlistedAttributes = new WeakMap<readonly LeanToken[], ReadonlySet<number>>();

/**
 * An attribute outside LOCAL_ATTRIBUTES, matched at its name, so that an entry naming the attribute itself
 * (`csimp`, `implemented_by`, `extern`) reports it first.
 */
const unlistedAttribute: Matcher = (tokens, at) => {
  let found = unlistedAttributes.get(tokens);
  if (!found) {
    const names = new Set<number>();
    tokens.forEach((token, open) => {
      const offending = token.text === "@[" ? unlistedAttributeIn(tokens, open) : undefined;
      if (offending !== undefined) names.add(offending);
    });
    found = names;
    unlistedAttributes.set(tokens, found);
  }
  return found.has(at) ? at + 1 : undefined;
};

/** Symbols an `open` may hold between its namespaces: `open Nat (succ)`, `open Nat renaming succ → s, zero → z`. */
const OPEN_SYMBOLS = new Set(["(", ")", "→", "->", ","]);

/** `open A B … in` (or `open … hiding/renaming …`) naming a metaprogramming namespace. */
const openMetaprogramming: Matcher = (tokens, at) => {
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
    `writes a monadic program (a \`do\` block); a proof has no use for one, and run_tac, by_elab and the macros over them run it: it ${CODE}`,
    PROOF_ONLY,
    single((t) => keywordOf(t) === "do"),
  ),
  construct(
    "syntax quotation",
    `quotes syntax, which only metaprograms (macros and elaborators) use: it ${CODE}`,
    PROOF_ONLY,
    single((t) => t.kind === "symbol" && t.text.startsWith("`")),
  ),
  construct(
    "name literal",
    "builds a name at elaboration time (how metaprograms name declarations and options, e.g. an option spelled from parts)",
    PROOF_ONLY,
    single((t) => t.kind === "nameLiteral"),
  ),
  construct(
    "metaprogramming namespace",
    `names the elaborator, the environment, the kernel or IO (\`Lean.*\`, \`IO.*\`, ...): it ${CODE}`,
    PROOF_ONLY,
    single((t) => METAPROGRAMMING_NAMESPACES.has(firstComponent(t) ?? "")),
  ),
  construct(
    "environment API",
    "names an API that writes the environment, evaluates code or sets options (addDecl, modifyEnv, evalTactic, withOptions, ...)",
    PROOF_ONLY,
    single((t) => t.kind === "identifier" && t.components!.some((c) => ENVIRONMENT_API.has(c))),
  ),
  construct(
    "open of a metaprogramming namespace",
    `opens the elaborator's, the environment's or IO's namespace, so its API is reachable by short names: it ${CODE}`,
    PROOF_ONLY,
    openMetaprogramming,
  ),
  construct(
    "set_option (not allowed in a proof)",
    `sets an option a proof may not scope; allowed: ${[...ALLOWED_OPTIONS].join(", ")}, linter.*, pp.* (options such as debug.skipKernelTC switch off the kernel)`,
    PROOF_ONLY,
    unlistedOption,
  ),
  construct(
    "attribute (not allowed in a proof)",
    `gives a local declaration an attribute a proof may not use (allowed: ${[...LOCAL_ATTRIBUTES].join(", ")}); others, such as ` +
      "tactic, term_elab, macro, init or export, register code that runs while Lean elaborates",
    PROOF_ONLY,
    unlistedAttribute,
  ),
  construct(
    "include_str",
    "reads a file while Lean elaborates the proof (core's `include_str`); a proof has no files to read",
    PROOF_ONLY,
    single((t) => keywordOf(t) === "include_str"),
  ),
  construct(
    "eval%",
    `evaluates a term in the interpreter while elaborating (Mathlib's \`eval%\`, Meta.evalExpr): it ${CODE}`,
    PROOF_ONLY,
    interpreterEval,
  ),
  construct(
    "polyrith",
    "sends the goal to an external server (and prints a proof to paste rather than proving)",
    PROOF_ONLY,
    single((t) => keywordOf(t) === "polyrith"),
  ),
];
