// Every construct refused before Lean runs, in one list (reference/lean-verification.md
// §3). Each entry says why. The checks read the tokens of Lean's own lexer
// (@lean-grpo/lean), so a banned word counts exactly where Lean would read it as a
// token: `x#eval`, `'a'theorem` and `2theorem` hold the command tokens `#eval` and
// `theorem`; `h_sorry`, `native_decide_lemma` and `«theorem»` hold none. They are
// defence in depth: the verdict also requires a clean elaboration, the theorem
// present, and only the standard axioms (classify-verdict.ts).
//
// A proof body must not leave its declaration. After a parse error Lean's command
// loop resumes at the next token that begins a command, anywhere in the text, so a
// body may hold no such token at all ("a command" below), whatever its position.
// Which commands a context may hold, and what a statement is, are allow-lists of
// their own (context-commands.ts, statement-head.ts); the entries here apply inside
// every command.
import { tokensResynchronised } from "../blank.js";
import { BUILTIN_TABLE } from "../builtin-tokens.js";
import { COMMAND_KEYWORDS, commandStartedBy, keywordOf } from "../commands.js";
import type { TokenTable } from "../token-table.js";
import { tokenize } from "../tokenize.js";
import type { LeanToken } from "../tokens.js";
import {
  construct,
  EVERYWHERE,
  HASH_COMMAND,
  PROOF_ONLY,
  single,
  startKeysOf,
  type BannedConstruct,
  type Matcher,
  type SourcePart,
} from "./construct.js";
import { ELABORATION_TIME_CODE } from "./elaboration-code.js";
import { LIBRARY_SEARCH } from "./library-search.js";

export type { BannedConstruct, Matcher, SourcePart } from "./construct.js";

/** A name anywhere in an identifier, also as a component after a dot (`x.sorry`) or «escaped». */
function word(name: string, why: string, parts = EVERYWHERE): BannedConstruct {
  return construct(
    name,
    why,
    parts,
    single((t) => t.kind === "identifier" && t.components!.includes(name)),
    [name],
  );
}

/** A keyword: the plain one-part identifier (`Set.image.def` and `«def»` are names, not the keyword). */
function keyword(name: string, why: string, parts: readonly SourcePart[] = EVERYWHERE): BannedConstruct {
  return construct(
    name,
    why,
    parts,
    single((t) => keywordOf(t) === name),
    [name],
  );
}

/** A `#`-command; Lean's longest-prefix token rule reads `#evalx` as `#eval` then `x`. */
function hashCommand(name: string, why: string, parts = EVERYWHERE): BannedConstruct {
  return construct(
    name,
    why,
    parts,
    single((t) => t.kind === "hashCommand" && t.text.startsWith(name)),
    [HASH_COMMAND],
  );
}

/** An identifier whose components hold `path` in a row (`Lean.Elab`, also in `Lean.Elab.Term.elabTerm`). */
function path(name: string, why: string, component: string, test: (components: string[]) => boolean): BannedConstruct {
  return construct(
    name,
    why,
    EVERYWHERE,
    single((t) => t.kind === "identifier" && test(t.components!)),
    [component],
  );
}

const holdsInARow = (components: string[], first: string, second: string) =>
  components.some((component, i) => component === first && components[i + 1] === second);

/** `first` followed by a token matching `then`. */
function followedBy(first: string, then: (token: LeanToken) => boolean): Matcher {
  return (tokens, at) => (keywordOf(tokens[at]!) === first && tokens[at + 1] && then(tokens[at + 1]!) ? at + 2 : undefined);
}

const SORRY = "leaves the goal unproved";
const NATIVE = "trusts compiled code instead of a kernel-checked proof (axiom Lean.ofReduceBool)";
const METAPROGRAM = "runs arbitrary code at elaboration time";
const SYNTAX = "redefines syntax or elaborators (e.g. makes a tactic mean sorry)";
/** Notation that only abbreviates a term is a context's (context-commands.ts checks its tokens); a statement or proof holds none. */
const NOTATION_PARTS: readonly SourcePart[] = ["statement", "proof"];
const COMPILER = "makes compiled code disagree with the kernel";
const COMMAND = "is a top-level command; a proof body is one term, and commands after it can change what the theorem's name resolves to";
const ANY_COMMAND =
  "begins a top-level command, which Lean reads wherever the token stands (after a parse error it resumes at the next such token); " +
  "a proof body is one term, and a command after it can run code or change what the theorem's name resolves to " +
  "(only `open … in` and `set_option … in` scope over the proof)";

/** Declarations whose name could be the theorem's. */
const DECLARING = new Set(["theorem", "lemma", "def", "abbrev", "instance", "axiom", "opaque", "structure", "inductive", "class", "alias"]);

/** Symbols after which no token continues into a quote (brackets, separators). */
const OPENING = new Set(["(", "[", "{", "⟨", ",", ";", ":", ":=", "=", "|", "⦃", "‹"]);

/** Tokens a character literal glued after may be read differently from, where the token table is not Lean's own. */
const GLUED_BEFORE_QUOTE: ReadonlySet<string> = new Set(["symbol", "number", "scientific", "fieldIndex"]);

/** Option groups that switch off the kernel's or the compiler's guarantees. */
const UNSAFE_OPTION_GROUPS = new Set(["debug", "kernel", "compiler", "interpreter"]);

/** The first dotted segment of an option name, «escaped» or not (`«compiler.y»` → compiler). */
function optionGroup(token: LeanToken): string | undefined {
  if (token.kind !== "identifier") return undefined;
  return token.components![0]!.split(".")[0];
}

/** Per token list (read once): the `unsafe` tokens that are Aesop's rule phase. */
const aesopPhases = new WeakMap<readonly LeanToken[], ReadonlySet<number>>();

const OPENERS = new Set(["(", "[", "{", "⟨"]);
const CLOSERS = new Set([")", "]", "}", "⟩"]);

/**
 * Aesop's rule phase `unsafe` (`aesop (add unsafe 50% apply foo, safe apply bar)`), which only ranks a rule:
 * the keyword right after `add`, or after a `,` directly inside the `(add …)` clause, of a clause that follows
 * `aesop` (or `aesop?`, `aesop_cat`, …) after its other clauses, never any `(add …` bracket. Read in one pass
 * over the tokens (a walk back over the earlier clauses at each one made `aesop (add)(add)…` quadratic).
 */
function isAesopRulePhase(tokens: readonly LeanToken[], at: number): boolean {
  let phases = aesopPhases.get(tokens);
  if (!phases) {
    const found = new Set<number>();
    const clauses = aesopClauses(tokens);
    // Open brackets, each with whether it is a `(` that begins with `add` in an Aesop call's clauses.
    const open: boolean[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      if (OPENERS.has(token.text)) open.push(token.text === "(" && keywordOf(tokens[i + 1] ?? token) === "add" && clauses.has(i));
      else if (CLOSERS.has(token.text)) open.pop();
      else if (keywordOf(token) === "unsafe" && i > 0) {
        const before = tokens[i - 1]!;
        if ((keywordOf(before) === "add" || before.text === ",") && open.at(-1) === true) found.add(i);
      }
    }
    phases = found;
    aesopPhases.set(tokens, phases);
  }
  return phases.has(at);
}

/**
 * The `(` tokens that open a clause of an Aesop call: right after `aesop…`, or right after the `)` that closes
 * such a clause (brackets matched as `(` and `)` only, as Lean's clause syntax nests them).
 */
function aesopClauses(tokens: readonly LeanToken[]): ReadonlySet<number> {
  const clauses = new Set<number>();
  const parens: number[] = [];
  // Whether the token just before is `aesop…` or the `)` of one of its clauses.
  let afterAesop = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    let next = false;
    if (token.text === "(") {
      if (afterAesop) clauses.add(i);
      parens.push(i);
    } else if (token.text === ")") {
      const opened = parens.pop();
      next = opened !== undefined && clauses.has(opened);
    } else {
      next = token.kind === "identifier" && /^aesop/.test(token.text);
    }
    afterAesop = next;
  }
  return clauses;
}

/** Tokens allowed between `open` and its `in`: the namespaces and their selectors (`open Nat hiding x in`). */
function isOpenDeclToken(token: LeanToken): boolean {
  if (token.kind === "identifier") return !COMMAND_KEYWORDS.has(keywordOf(token) ?? "");
  return token.kind === "symbol" && ["(", ")", "→", "->", ","].includes(token.text);
}

/** Index of the `in` that makes `open …`/`set_option …` at `at` scope over one term or tactic, or undefined. */
function scopedIn(tokens: readonly LeanToken[], at: number): number | undefined {
  const head = keywordOf(tokens[at]!);
  if (head === "open") {
    let i = at + 1;
    if (keywordOf(tokens[i] ?? tokens[at]!) === "scoped") i++;
    const first = i;
    while (tokens[i] && keywordOf(tokens[i]!) !== "in" && isOpenDeclToken(tokens[i]!)) i++;
    return i > first && tokens[i] && keywordOf(tokens[i]!) === "in" ? i : undefined;
  }
  if (head === "set_option") {
    const [name, value, inKeyword] = [tokens[at + 1], tokens[at + 2], tokens[at + 3]];
    const valueOk = value && (value.kind === "number" || value.kind === "string" || value.kind === "identifier");
    return name?.kind === "identifier" && valueOk && inKeyword && keywordOf(inKeyword) === "in" ? at + 3 : undefined;
  }
  return undefined;
}

/** Any token that begins a command, but `open … in` / `set_option … in`, and `@[` (its declaration keyword is refused itself). */
const anyCommand: Matcher = (tokens, at, _theoremName, table) => {
  const started = commandStartedBy(tokens[at]!, table);
  if (started === undefined || started === "@[") return undefined;
  // `scoped` in `open scoped X in` belongs to the open, which is checked at its own token.
  if (started === "scoped" && at > 0 && keywordOf(tokens[at - 1]!) === "open") return undefined;
  // Aesop's `unsafe` rule phase begins no declaration: the keyword a declaration would need next is refused itself.
  if (started === "unsafe" && isAesopRulePhase(tokens, at)) return undefined;
  return scopedIn(tokens, at) === undefined ? at + 1 : undefined;
};

export const BANNED_CONSTRUCTS: readonly BannedConstruct[] = [
  word("sorry", SORRY),
  word("admit", SORRY),
  word("sorryAx", SORRY),
  // Core's `stop tacs` is `repeat sorry`: the sorry comes from a macro, so no `sorry` token is written.
  keyword("stop", `${SORRY} (\`stop\` expands to \`repeat sorry\`)`),
  // Random testing that finds no counterexample admits the goal (Lean warns "declaration uses 'sorry'").
  keyword("plausible", `${SORRY} (it admits the goal when random testing finds no counterexample)`),
  keyword("slim_check", `${SORRY} (Mathlib's old name of plausible, which admits the goal when testing finds no counterexample)`),
  word("native_decide", NATIVE),
  word("native", `${NATIVE} (decide +native, native := true)`),
  word("ofReduceBool", NATIVE),
  word("trustCompiler", NATIVE),
  // Lean's bit-blaster proves by an LRAT check run as compiled code (Lean.ofReduceBool); bv_check reads the proof from a file.
  keyword("bv_decide", NATIVE),
  keyword("bv_decide?", NATIVE),
  keyword("bv_check", `${NATIVE}, and reads its certificate from a file`),
  hashCommand("#eval", METAPROGRAM),
  hashCommand("#exit", "stops elaboration before the theorem is checked"),
  hashCommand("#print", "prints text that could pass for the service's own #print axioms check"),
  word("run_cmd", METAPROGRAM),
  word("run_tac", METAPROGRAM),
  word("run_elab", METAPROGRAM),
  word("run_meta", METAPROGRAM),
  word("by_elab", METAPROGRAM),
  keyword("elab", SYNTAX),
  keyword("elab_rules", SYNTAX),
  keyword("macro", SYNTAX),
  keyword("macro_rules", SYNTAX),
  keyword("syntax", SYNTAX),
  keyword("notation", SYNTAX, NOTATION_PARTS),
  keyword("infix", SYNTAX, NOTATION_PARTS),
  keyword("infixl", SYNTAX, NOTATION_PARTS),
  keyword("infixr", SYNTAX, NOTATION_PARTS),
  keyword("prefix", SYNTAX, NOTATION_PARTS),
  keyword("postfix", SYNTAX, NOTATION_PARTS),
  keyword("axiom", "adds an unproved assumption"),
  word("implemented_by", COMPILER),
  word("extern", COMPILER),
  word("csimp", COMPILER),
  construct(
    "unsafe",
    "declares code the kernel does not check (the term `unsafe e` makes an unsafe definition run by the compiler)",
    EVERYWHERE,
    (tokens, at) =>
      tokens[at]!.kind === "identifier" && tokens[at]!.components!.includes("unsafe") && !isAesopRulePhase(tokens, at) ? at + 1 : undefined,
    ["unsafe"],
  ),
  construct(
    "set_option debug.*/kernel.*",
    "switches off kernel checking (debug.skipKernelTC) or compiler guarantees",
    EVERYWHERE,
    followedBy("set_option", (name) => UNSAFE_OPTION_GROUPS.has(optionGroup(name) ?? "") && name.components!.join(".").includes(".")),
    ["set_option"],
  ),
  path("debug.", "names a debug option (debug.skipKernelTC switches off the kernel)", "debug", (components) =>
    components.slice(0, -1).includes("debug"),
  ),
  construct(
    "skipKernelTC",
    "switches off kernel type checking",
    EVERYWHERE,
    single((t) => t.kind !== "lineComment" && t.kind !== "blockComment" && t.kind !== "docComment" && t.text.includes("skipKernelTC")),
  ),
  keyword("import", "changes the imports, which come from the theorem's header only"),
  construct(
    "open private",
    "exposes private internals (e.g. Environment.mk)",
    EVERYWHERE,
    followedBy("open", (t) => keywordOf(t) === "private"),
    ["open"],
  ),
  keyword("initialize", METAPROGRAM),
  keyword("builtin_initialize", METAPROGRAM),
  path("IO.", "reaches files, processes and the network", "IO", (components) => components[0] === "IO" && components.length > 1),
  path("Lean.Elab", "reaches the elaborator's internals", "Lean", (components) => holdsInARow(components, "Lean", "Elab")),
  path("Lean.Meta", "reaches the elaborator's internals", "Lean", (components) => holdsInARow(components, "Lean", "Meta")),
  word("modifyEnv", "writes the environment past the kernel"),
  word("addDecl", "writes the environment past the kernel"),
  // exact?, apply?, rw?, observe, hint, rw_search, library_search, … (library-search.ts).
  ...LIBRARY_SEARCH,
  construct(
    "redeclaring the theorem",
    "declares the theorem's own name, so the checked constant may not be the dataset's statement",
    ["context", "proof"],
    (tokens, at, theoremName) => {
      const declared = tokens[at + 1];
      if (!DECLARING.has(keywordOf(tokens[at]!) ?? "") || declared?.kind !== "identifier") return undefined;
      return declared.components!.at(-1) === lastComponent(theoremName) ? at + 2 : undefined;
    },
    DECLARING,
  ),
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
  ...["#check", "#reduce", "#synth"].map((name) => hashCommand(name, COMMAND, PROOF_ONLY)),
  // Routes from a body to code run while elaborating, or to the environment (elaboration-code.ts).
  ...ELABORATION_TIME_CODE,
  construct(
    "quote next to a symbol",
    "puts a `'` where the token table decides how Lean reads it: a character literal glued to a symbol or a numeral may be the " +
      "end of a longer token (`⁻¹'`, or a notation a context's `open` brings into scope), or, after a character Lean reads no " +
      "token at (it moves on one byte and reads a name that takes in the digits and the quote), the end of a name; and where " +
      "the header's own table is not known, a listed token that holds a `'` may be no token there, so Lean opens a character " +
      "literal at it; either way Lean would read code where the screen reads a literal",
    EVERYWHERE,
    (tokens, at, _theoremName, table, source) => {
      const [before, token] = [tokens[at - 1], tokens[at]!];
      const glued =
        token.kind === "char" &&
        before !== undefined &&
        before.end === token.start &&
        GLUED_BEFORE_QUOTE.has(before.kind) &&
        !OPENING.has(before.text);
      const unsure = table.source !== "environment" && token.kind === "symbol" && quoteOpensCharLiteral(token, source);
      return glued || unsure ? at + 1 : undefined;
    },
  ),
  // What this still catches: the atoms of scoped notation that an `open` brings into scope (a context's, a proof's
  // `open … in`, or the header's where the table is not Lean's own), which no table the screen reads holds. A
  // context's own notation atoms are in the table (declared-atoms.ts).
  construct(
    "a name glued to a symbol",
    "puts a name right after a symbol (or a symbol and digits), where the token table decides where Lean's token ends: " +
      "a scoped notation's atom (`∘x`, `+1a`) that an `open` brings into scope, which no table the screen reads holds, " +
      "may take in the name's first letters, and Lean then reads a `'` inside the name as the start of a character " +
      "literal, or an `r` at its end as the start of a raw string, where the screen reads a name and then a literal",
    EVERYWHERE,
    (tokens, at, _theoremName, _table, source) => {
      const token = tokens[at]!;
      let before = tokens[at - 1];
      // A numeral between the symbol and the name (`+1a'`): an atom may hold digits after its first character.
      if (
        (before?.kind === "number" || before?.kind === "scientific") &&
        before.end === token.start &&
        tokens[at - 2]?.end === before.start
      )
        before = tokens[at - 2];
      else if (before?.end !== token.start) return undefined;
      if (token.kind !== "identifier" || before?.kind !== "symbol") return undefined;
      const rawStringNext = token.text.endsWith("r") && (source[token.end] === '"' || source[token.end] === "#");
      return rawStringNext || quoteOpensCharLiteral(token, source) ? at + 1 : undefined;
    },
  ),
  // Last: every other token that begins a command (alias, open without in, #find, deriving, ...).
  construct("a command", ANY_COMMAND, PROOF_ONLY, anyCommand),
];

/**
 * Whether Lean, reading `token` without a token for it, could open a character literal at one of its quotes:
 * at a `'` not followed by another `'` (Lean's check), one character or escape then `'`.
 */
function quoteOpensCharLiteral(token: LeanToken, source: string): boolean {
  for (let quote = token.text.indexOf("'"); quote >= 0; quote = token.text.indexOf("'", quote + 1)) {
    // A character literal is at most `'\uXXXX'`: the slice holds it whole.
    const first = tokenize(source.slice(token.start + quote, token.start + quote + 10)).tokens[0];
    if (first?.kind === "char" && first.start === 0) return true;
  }
  return false;
}

/** `Foo.«bar baz»` → `bar baz`: the last component of a name, unescaped, as Lean's lexer reads it. */
export function lastComponent(name: string): string {
  const token = tokenize(name).tokens[0];
  return token?.kind === "identifier" ? token.components!.at(-1)! : name.slice(name.lastIndexOf(".") + 1);
}

export interface BannedUse {
  construct: BannedConstruct;
  /** UTF-16 index of the match in the text. */
  index: number;
  /** The matched text. */
  text: string;
  /** Found only when a plain string's `{` is read as Lean could read it (see findBannedUse). */
  hiddenInString?: boolean;
}

/**
 * The earliest banned construct in `text` (comment-free) for that part of the source,
 * if any, read with `table` (the header's token table; the fallback by default).
 * Strings are read as Lean's tokenizer reads them (interpolated only after the
 * words whose syntax takes an interpolated string). A plain string that holds `{`
 * is also read the other ways Lean could read it — as interpolated, by a syntax the
 * screen does not know, and, after a parse error there, resynchronised from inside
 * the string — and a banned construct in any such reading refuses the text. `tokens`
 * are the text's, when the caller has read them already.
 */
export function findBannedUse(
  text: string,
  part: SourcePart,
  theoremName: string,
  table: TokenTable = BUILTIN_TABLE,
  tokens: readonly LeanToken[] = tokenize(text, { tokens: table }).tokens,
): BannedUse | undefined {
  const direct = firstBannedUse(text, tokens, 0, part, theoremName, table);
  if (direct) return direct;
  const { readings, tooManyAt } = hiddenReadings(text, tokens, table);
  if (tooManyAt !== undefined) return { construct: BRACES_IN_STRINGS, index: tooManyAt, text: "{" };
  for (const reading of readings) {
    const hidden = firstBannedUse(reading.text, reading.tokens, reading.offset, part, theoremName, table);
    if (hidden) return { ...hidden, hiddenInString: true };
  }
  return undefined;
}

/** How many `{` inside plain strings a text may hold; each costs one more reading of the rest of the text. */
const MAX_HIDDEN_READINGS = 16;
/** How many characters those readings may re-read in all, so that a text costs at most about twice its plain reading. */
const MAX_HIDDEN_CHARS = 64 * 1024;

const BRACES_IN_STRINGS = construct(
  "many `{` in strings",
  `holds more \`{\` inside string literals than the screen reads (${MAX_HIDDEN_READINGS}, and ${MAX_HIDDEN_CHARS} characters ` +
    "read again after them in all); Lean may read each as an interpolation, and the screen does not guess",
  EVERYWHERE,
  () => undefined,
  [],
);

/** The rest of a text from just after a `{` inside a plain string, read as code: `offset` places its tokens in the text. */
export interface HiddenReading {
  offset: number;
  text: string;
  tokens: LeanToken[];
}

/**
 * The readings of `text` (whose tokens are `tokens`) that Lean could make at each `{`
 * inside a plain string: as the start of an interpolated term, by a syntax the screen
 * does not know, and after a parse error there, resynchronised from inside the string.
 * `tooManyAt` is the `{` past the most the screen reads (then it refuses).
 */
export function hiddenReadings(
  text: string,
  tokens: readonly LeanToken[],
  table: TokenTable,
): { readings: HiddenReading[]; tooManyAt?: number } {
  const braces: number[] = [];
  for (const token of tokens) {
    if (token.kind !== "string") continue;
    for (let i = token.text.indexOf("{"); i >= 0; i = token.text.indexOf("{", i + 1)) braces.push(token.start + i);
  }
  if (braces.length > MAX_HIDDEN_READINGS) return { readings: [], tooManyAt: braces[MAX_HIDDEN_READINGS]! };
  let reread = 0;
  for (const brace of braces) {
    reread += text.length - brace - 1;
    if (reread > MAX_HIDDEN_CHARS) return { readings: [], tooManyAt: brace };
  }
  return {
    readings: braces.map((brace) => {
      const rest = text.slice(brace + 1);
      return { offset: brace + 1, text: rest, tokens: tokensResynchronised(rest, { tokens: table }) };
    }),
  };
}

/** Per part, the constructs refused there: those tried at every token, and the others by the keys they begin at. */
interface PartIndex {
  everywhere: { construct: BannedConstruct; order: number }[];
  byKey: Map<string, { construct: BannedConstruct; order: number }[]>;
}

const partIndexes = new Map<SourcePart, PartIndex>();

function partIndex(part: SourcePart): PartIndex {
  let index = partIndexes.get(part);
  if (!index) {
    index = { everywhere: [], byKey: new Map() };
    for (const [order, banned] of BANNED_CONSTRUCTS.entries()) {
      if (!banned.parts.includes(part)) continue;
      if (!banned.startKeys) index.everywhere.push({ construct: banned, order });
      else for (const key of banned.startKeys) index.byKey.set(key, [...(index.byKey.get(key) ?? []), { construct: banned, order }]);
    }
    partIndexes.set(part, index);
  }
  return index;
}

/** The first token where a construct of the part begins; of several there, the one listed first. */
function firstBannedUse(
  text: string,
  tokens: readonly LeanToken[],
  offset: number,
  part: SourcePart,
  theoremName: string,
  table: TokenTable,
): BannedUse | undefined {
  const { everywhere, byKey } = partIndex(part);
  // One loop, no closure per token: the screen's time is linear in the tokens with a small constant.
  for (let at = 0; at < tokens.length; at++) {
    let found = firstMatchOf(everywhere, undefined, tokens, at, theoremName, table, text);
    for (const key of startKeysOf(tokens[at]!)) {
      const candidates = byKey.get(key);
      if (candidates) found = firstMatchOf(candidates, found, tokens, at, theoremName, table, text);
    }
    if (found) {
      return {
        construct: found.construct,
        index: tokens[at]!.start + offset,
        text: text.slice(tokens[at]!.start, tokens[found.end - 1]!.end),
      };
    }
  }
  return undefined;
}

interface Match {
  construct: BannedConstruct;
  order: number;
  end: number;
}

/** Of `candidates` matching at `at`, the one listed first, if it is listed before `found`. */
function firstMatchOf(
  candidates: readonly { construct: BannedConstruct; order: number }[],
  found: Match | undefined,
  tokens: readonly LeanToken[],
  at: number,
  theoremName: string,
  table: TokenTable,
  text: string,
): Match | undefined {
  for (const { construct: banned, order } of candidates) {
    if (found && found.order <= order) continue;
    const end = banned.matchAt(tokens, at, theoremName, table, text);
    if (end !== undefined) found = { construct: banned, order, end };
  }
  return found;
}
