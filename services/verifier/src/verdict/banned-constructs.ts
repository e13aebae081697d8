// Every construct refused before Lean runs, in one list (reference/lean-verification.md
// §3). Each entry says why. The checks run on comment-free text (strip-comments.ts),
// and are defence in depth: the verdict also requires a clean elaboration, the
// theorem present, and only the standard axioms (classify-verdict.ts).
//
// Matching is by token: an entry does not fire inside a longer identifier
// (`h_sorry`, `native_decide_lemma`), but does after a dot (`x.sorry`), since
// refusing a rare odd name costs less than missing a real use.

/** The parts of a checked source: the dataset's statement and context, and the model's proof (or tactic). */
export type SourcePart = "statement" | "context" | "proof";

export interface BannedConstruct {
  /** How reasons name it, e.g. "sorry", "#eval", "set_option debug.*". */
  name: string;
  why: string;
  /** The parts it is refused in. */
  parts: readonly SourcePart[];
  /** A global, unicode pattern; the redeclaration entry depends on the theorem's name. */
  pattern(theoremName: string): RegExp;
}

const ID = String.raw`[\p{L}\p{N}_']`;
const EVERYWHERE: readonly SourcePart[] = ["statement", "context", "proof"];
const PROOF_ONLY: readonly SourcePart[] = ["proof"];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A token anywhere, not part of a longer identifier. */
function token(name: string, why: string, parts = EVERYWHERE): BannedConstruct {
  const regex = new RegExp(`(?<!${ID})${escapeRegExp(name)}(?!${ID})`, "gu");
  return { name, why, parts, pattern: () => regex };
}

/** A command keyword: as `token`, but not after a dot (`Set.image.def`-style names are not commands). */
function keyword(name: string, why: string, parts = EVERYWHERE): BannedConstruct {
  const regex = new RegExp(String.raw`(?<![\p{L}\p{N}_'.])${escapeRegExp(name)}(?!${ID})`, "gu");
  return { name, why, parts, pattern: () => regex };
}

function custom(name: string, why: string, parts: readonly SourcePart[], source: string): BannedConstruct {
  const regex = new RegExp(source, "gu");
  return { name, why, parts, pattern: () => regex };
}

const SORRY = "leaves the goal unproved";
const NATIVE = "trusts compiled code instead of a kernel-checked proof (axiom Lean.ofReduceBool)";
const METAPROGRAM = "runs arbitrary code at elaboration time";
const SYNTAX = "redefines syntax or elaborators (e.g. makes a tactic mean sorry)";
const COMPILER = "makes compiled code disagree with the kernel";
const SEARCH = "uses library search, which has produced proofs that hide a sorry (DeepSeek-Prover-V2, App. B)";
const COMMAND = "is a top-level command; a proof body is one term, and commands after it can change what the theorem's name resolves to";

export const BANNED_CONSTRUCTS: readonly BannedConstruct[] = [
  token("sorry", SORRY),
  token("admit", SORRY),
  token("sorryAx", SORRY),
  token("native_decide", NATIVE),
  token("native", `${NATIVE} (decide +native, native := true)`),
  token("ofReduceBool", NATIVE),
  token("trustCompiler", NATIVE),
  token("#eval", METAPROGRAM),
  token("#exit", "stops elaboration before the theorem is checked"),
  token("#print", "prints text that could pass for the service's own #print axioms check"),
  token("run_cmd", METAPROGRAM),
  token("run_tac", METAPROGRAM),
  token("run_elab", METAPROGRAM),
  token("run_meta", METAPROGRAM),
  token("by_elab", METAPROGRAM),
  keyword("elab", SYNTAX),
  keyword("elab_rules", SYNTAX),
  keyword("macro", SYNTAX),
  keyword("macro_rules", SYNTAX),
  keyword("syntax", SYNTAX),
  keyword("notation", SYNTAX),
  keyword("infix", SYNTAX),
  keyword("infixl", SYNTAX),
  keyword("infixr", SYNTAX),
  keyword("prefix", SYNTAX),
  keyword("postfix", SYNTAX),
  keyword("axiom", "adds an unproved assumption"),
  token("implemented_by", COMPILER),
  token("extern", COMPILER),
  token("csimp", COMPILER),
  token("unsafe", "declares code the kernel does not check"),
  custom(
    "set_option debug.*/kernel.*",
    "switches off kernel checking (debug.skipKernelTC) or compiler guarantees",
    EVERYWHERE,
    String.raw`(?<!${ID})set_option\s+«?(?:debug|kernel|compiler|interpreter)(?=[.»])`,
  ),
  custom("debug.", "names a debug option (debug.skipKernelTC switches off the kernel)", EVERYWHERE, String.raw`(?<!${ID})«?debug»?\.`),
  custom("skipKernelTC", "switches off kernel type checking", EVERYWHERE, "skipKernelTC"),
  keyword("import", "changes the imports, which come from the theorem's header only"),
  custom("open private", "exposes private internals (e.g. Environment.mk)", EVERYWHERE, String.raw`(?<!${ID})open\s+private(?!${ID})`),
  keyword("initialize", METAPROGRAM),
  keyword("builtin_initialize", METAPROGRAM),
  custom("IO.", "reaches files, processes and the network", EVERYWHERE, String.raw`(?<![\p{L}\p{N}_'.])IO\.`),
  custom("Lean.Elab", "reaches the elaborator's internals", EVERYWHERE, String.raw`(?<!${ID})Lean\.Elab(?!${ID})`),
  custom("Lean.Meta", "reaches the elaborator's internals", EVERYWHERE, String.raw`(?<!${ID})Lean\.Meta(?!${ID})`),
  token("modifyEnv", "writes the environment past the kernel"),
  token("addDecl", "writes the environment past the kernel"),
  custom("apply?", SEARCH, EVERYWHERE, String.raw`(?<!${ID})apply\?`),
  custom("exact?", SEARCH, EVERYWHERE, String.raw`(?<!${ID})exact\?`),
  {
    name: "redeclaring the theorem",
    why: "declares the theorem's own name, so the checked constant may not be the dataset's statement",
    parts: ["context", "proof"],
    pattern: (theoremName) => {
      const last = escapeRegExp(lastComponent(theoremName));
      return new RegExp(
        String.raw`(?<![\p{L}\p{N}_'.])(?:theorem|lemma|def|abbrev|instance|axiom|opaque|structure|inductive|class)\s+(?:\S*\.)?«?${last}»?(?!${ID})`,
        "gu",
      );
    },
  },
  ...[
    "theorem",
    "lemma",
    "def",
    "abbrev",
    "instance",
    "example",
    "structure",
    "inductive",
    "class",
    "namespace",
    "section",
    "end",
    "mutual",
    "universe",
    "variable",
    "opaque",
    "attribute",
    "export",
    "noncomputable",
  ].map((name) => keyword(name, COMMAND, PROOF_ONLY)),
  ...["#check", "#reduce", "#synth"].map((name) => token(name, COMMAND, PROOF_ONLY)),
];

/** `Foo.«bar baz»` → `bar baz`. */
export function lastComponent(name: string): string {
  const quoted = /«([^»]*)»$/u.exec(name);
  if (quoted) return quoted[1]!;
  return name.slice(name.lastIndexOf(".") + 1);
}

export interface BannedUse {
  construct: BannedConstruct;
  /** UTF-16 index of the match in the text. */
  index: number;
  /** The matched text. */
  text: string;
}

/** The earliest banned construct in `text` (comment-free) for that part of the source, if any. */
export function findBannedUse(text: string, part: SourcePart, theoremName: string): BannedUse | undefined {
  let first: BannedUse | undefined;
  for (const construct of BANNED_CONSTRUCTS) {
    if (!construct.parts.includes(part)) continue;
    const pattern = construct.pattern(theoremName);
    pattern.lastIndex = 0;
    const match = pattern.exec(text);
    if (match && (!first || match.index < first.index)) first = { construct, index: match.index, text: match[0] };
  }
  return first;
}
