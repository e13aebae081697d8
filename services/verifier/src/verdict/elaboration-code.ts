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
import { keywordOf, type LeanToken } from "@lean-grpo/lean";
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
const ALLOWED_OPTIONS = new Set(["maxHeartbeats", "maxRecDepth", "synthInstance.maxHeartbeats", "synthInstance.maxSize", "maxSteps"]);
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

/** `open A B … in` (or `open … hiding/renaming …`) naming a metaprogramming namespace. */
const openMetaprogramming: Matcher = (tokens, at) => {
  if (keywordOf(tokens[at]!) !== "open") return undefined;
  for (let i = at + 1; i < tokens.length && keywordOf(tokens[i]!) !== "in"; i++) {
    const first = firstComponent(tokens[i]!);
    if (first !== undefined && METAPROGRAMMING_NAMESPACES.has(first)) return i + 1;
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
    "polyrith",
    "sends the goal to an external server (and prints a proof to paste rather than proving)",
    PROOF_ONLY,
    single((t) => keywordOf(t) === "polyrith"),
  ),
];
