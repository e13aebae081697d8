// A whole-file proof taken apart: the auxiliary declarations, and the body of the
// theorem the file ends with, whose statement must be the dataset's. What is checked
// here, before Lean runs (the reasons say which rule a file broke):
//   - the file lexes as Lean, and begins with a command;
//   - a preamble of `import`s the header already has, `open`s of namespaces the header
//     or context already opens, and `set_option`s a header may set is dropped (the
//     theorem's header governs); any other leading command is refused;
//   - after it, every command is a declaration an auxiliary may be: theorem, lemma,
//     def, abbrev, structure, inductive or example, with the modifiers private,
//     protected, noncomputable, nonrec and the attributes of AUXILIARY_ATTRIBUTES.
//     Scope commands (namespace, section, open, set_option, variable, universe, `… in`)
//     would change how the theorem's statement reads, and instances (instance, class,
//     deriving, @[instance]) what it means, where no token comparison can see it;
//   - exactly one declaration has the theorem's name (compared by its last component,
//     so `_root_.x` and `Foo.x` count), it is the last command, and its statement is
//     the dataset's token for token (same-statement.ts);
//   - no auxiliary declares a name the statement mentions;
//   - the auxiliaries pass the theorem screen as a context, the body the proof screen.
// The caller attaches the dataset's own statement to the body: what Lean elaborates is
// the context, the auxiliaries, then the trusted statement.
import { blankComments } from "../blank.js";
import { BUILTIN_TABLE } from "../builtin-tokens.js";
import { keywordOf } from "../commands.js";
import { codeTokens, topLevelAssign } from "../declarations.js";
import { HEADER_OPTIONS } from "../header-screen.js";
import { crlfToLf } from "../line-ends.js";
import { lexicalRefusal, placeIn, screenSourcePart } from "../screen/source-screen.js";
import { screenTheoremSource } from "../screen/theorem-screen.js";
import type { TokenTable } from "../token-table.js";
import { tokenize } from "../tokenize.js";
import type { LeanToken } from "../tokens.js";
import { fileCommands, type FileCommand } from "./file-commands.js";
import { statementDifference } from "./same-statement.js";

/** What the file must prove, from the dataset's record. */
export interface WholeFileTarget {
  /** The theorem's name as the statement declares it. */
  name: string;
  /** The statement without its proof (no trailing `:=`). */
  statement: string;
  /** The dataset's context ("" when none): its opens count as already open. */
  context: string;
  /** The theorem's header: its imports and opens count as already there. */
  header: string;
}

export interface WholeFile {
  /** The auxiliary declarations, comments blanked, as Lean is sent them ("" when none). */
  auxiliaries: string;
  /** The main theorem's proof: the text after its `:=`, comments blanked. */
  body: string;
  /** Names the auxiliaries declare, as written. */
  auxiliaryNames: string[];
  /** The preamble commands dropped (the header governs), as written. */
  dropped: string[];
}

export type WholeFileReading = { ok: true; value: WholeFile } | { ok: false; reason: string };

/** Declarations an auxiliary may be. */
export const AUXILIARY_KEYWORDS: ReadonlySet<string> = new Set(["theorem", "lemma", "def", "abbrev", "structure", "inductive", "example"]);
const AUXILIARY_MODIFIERS: ReadonlySet<string> = new Set(["private", "protected", "noncomputable", "nonrec"]);
/** Attributes that act on the declaration they mark only: none changes how another term elaborates. */
export const AUXILIARY_ATTRIBUTES: ReadonlySet<string> = new Set(["simp", "reducible", "irreducible", "inline", "ext"]);
const NAMED = new Set(["theorem", "lemma", "def", "abbrev", "structure", "inductive"]);
const SCOPES = new Set([
  "namespace",
  "section",
  "end",
  "open",
  "set_option",
  "variable",
  "universe",
  "universes",
  "include",
  "omit",
  "export",
]);
const INSTANCES = new Set(["instance", "class", "deriving"]);

const ACCEPTED =
  `a whole-file proof holds a preamble (imports the header has, opens it already has, set_option ${[...HEADER_OPTIONS.keys()].join("/")}), ` +
  `then declarations (${[...AUXILIARY_KEYWORDS].join(", ")}; modifiers ${[...AUXILIARY_MODIFIERS].join(", ")}; ` +
  `attributes ${[...AUXILIARY_ATTRIBUTES].join(", ")}), the last one the theorem with the dataset's statement`;

export function splitWholeFile(file: string, target: WholeFileTarget, table: TokenTable = BUILTIN_TABLE): WholeFileReading {
  const text = crlfToLf(file);
  const lexical = lexicalRefusal(text, table, "file");
  if (lexical) return { ok: false, reason: lexical.reason };
  const code = blankComments(text, { tokens: table });
  const tokens = codeTokens(code, { tokens: table });
  if (tokens.length === 0) return { ok: false, reason: "the file is empty (after removing comments)" };
  const split = fileCommands(tokens, table);
  if ("strayAt" in split) {
    return refuse(
      code,
      tokens[split.strayAt]!,
      `\`${excerpt(tokens[split.strayAt]!.text)}\` begins no command: a whole file begins with a declaration`,
    );
  }
  const commands = split.commands;
  const where = (command: FileCommand) => placeIn(code, tokens[command.first]!.start, "file");
  const source = (command: FileCommand) => code.slice(tokens[command.first]!.start, tokens[command.end - 1]!.end);

  // The preamble: dropped where the header already says it, refused otherwise.
  const known = alreadyThere(target, table);
  const dropped: string[] = [];
  let k = 0;
  for (; k < commands.length; k++) {
    const command = commands[k]!;
    if (!["import", "open", "set_option"].includes(command.keyword) || command.first !== command.head) break;
    const problem = preambleProblem(tokens.slice(command.head, command.end), known);
    if (problem) return { ok: false, reason: `the preamble's \`${excerpt(source(command))}\` at ${where(command)} ${problem}` };
    dropped.push(source(command));
  }
  const declarations = commands.slice(k);
  if (declarations.length === 0) return { ok: false, reason: `the file declares no theorem \`${target.name}\`; ${ACCEPTED}` };

  for (const command of declarations) {
    const problem = declarationProblem(command);
    if (problem) return { ok: false, reason: `\`${excerpt(source(command))}\` at ${where(command)} ${problem}; ${ACCEPTED}` };
  }

  // The theorem: the one declaration of its name, the last command.
  const lastName = lastComponent(target.name);
  const named = declarations.map((command) => ({ command, name: declaredName(tokens, command) }));
  const mains = named.filter((d) => d.name !== undefined && lastComponent(d.name) === lastName);
  if (mains.length === 0) {
    return { ok: false, reason: `the file declares no theorem \`${target.name}\` (the dataset's); the theorem must keep its name` };
  }
  if (mains.length > 1) {
    const places = mains.map((d) => `\`${d.name}\` at ${where(d.command)}`).join(", ");
    return {
      ok: false,
      reason: `the file declares \`${lastName}\` ${mains.length} times (${places}): exactly one declaration may carry the theorem's name`,
    };
  }
  const main = mains[0]!;
  if (main.command !== declarations.at(-1)) {
    const after = declarations[declarations.indexOf(main.command) + 1]!;
    return {
      ok: false,
      reason: `the theorem \`${target.name}\` must be the file's last declaration; \`${after.keyword}\` follows it at ${where(after)}`,
    };
  }
  if (main.name !== target.name) {
    return {
      ok: false,
      reason: `the file declares \`${main.name}\` at ${where(main.command)}; the dataset's theorem is \`${target.name}\``,
    };
  }

  // Its statement, token by token.
  const assign = topLevelAssign(tokens.slice(0, main.command.end), main.command.head);
  if (assign < 0) return { ok: false, reason: `the theorem \`${target.name}\` at ${where(main.command)} has no \`:=\` and so no proof` };
  const expected = codeTokens(target.statement, { tokens: table });
  const written = tokens.slice(main.command.first, assign);
  const difference = statementDifference(expected, written);
  if (difference) {
    const at = written[difference.at] ?? tokens[assign]!;
    return {
      ok: false,
      reason:
        `the theorem's statement is not the dataset's: at ${placeIn(code, at.start, "file")} it has \`${excerpt(difference.found)}\` ` +
        `where the dataset's has \`${excerpt(difference.expected)}\` (names, binders and type must be the same tokens)`,
    };
  }

  const auxiliaryCommands = declarations.slice(0, -1);
  const auxiliaryNames = auxiliaryCommands.flatMap((command) => declaredName(tokens, command) ?? []);
  const mentioned = mentionedNames(expected);
  const clash = auxiliaryNames.find((name) => mentioned.has(name) || mentioned.has(lastComponent(name)));
  if (clash)
    return {
      ok: false,
      reason: `the auxiliary \`${clash}\` declares a name the theorem's statement uses, which would change what the statement says`,
    };

  const auxiliaries =
    auxiliaryCommands.length === 0 ? "" : code.slice(tokens[auxiliaryCommands[0]!.first]!.start, tokens[main.command.first]!.start).trim();
  const body = code.slice(tokens[assign]!.end).trim();
  if (body === "") return { ok: false, reason: `the theorem \`${target.name}\` has an empty proof` };

  // The auxiliaries as a context, the body as a proof: the screens every part passes.
  if (auxiliaries !== "") {
    const screened = screenTheoremSource({ context: auxiliaries, statement: target.statement }, table);
    if (!screened.ok)
      return { ok: false, reason: `the auxiliary declarations are refused: ${screened.reason.replaceAll("context ", "auxiliaries ")}` };
  }
  const refused = screenSourcePart(body, "proof", target.name, table);
  if (refused) return { ok: false, reason: refused.reason };
  return { ok: true, value: { auxiliaries, body, auxiliaryNames, dropped } };
}

/** Why a command after the preamble may not stand in a whole file, or undefined when it may. */
function declarationProblem(command: FileCommand): string | undefined {
  const { keyword } = command;
  if (INSTANCES.has(keyword)) {
    return "declares or changes instances, which change what the theorem's statement means (its `+`, `<`, numerals, coercions) where no token comparison can see it";
  }
  if (keyword === "attribute") {
    return "changes the attributes of declarations (instances, simp sets, reducibility), which can change what the theorem's statement means";
  }
  if (SCOPES.has(keyword))
    return "changes how the declarations after it read (names in scope, options, namespaces), the theorem's statement included";
  if (keyword === "import") return "is an import after a declaration (imports come from the theorem's header)";
  if (!AUXILIARY_KEYWORDS.has(keyword)) return "is not a declaration an auxiliary may be";
  const modifier = command.modifiers.find((word) => !AUXILIARY_MODIFIERS.has(word));
  if (modifier) return `has the modifier \`${modifier}\`, which a whole-file proof may not use`;
  for (const attribute of command.attributes) {
    const names = splitAttributes(attribute);
    const bad = names.length === 0 ? "@[]" : names.find((name) => !AUXILIARY_ATTRIBUTES.has(name));
    if (bad !== undefined) return `has the attribute \`${bad}\`, which a whole-file proof may not use`;
  }
  return undefined;
}

/** The attribute names of one `@[a, b c, local d]` list: the first identifier of each comma-separated entry. */
function splitAttributes(attribute: readonly LeanToken[]): string[] {
  const names: string[] = [];
  let expectName = true;
  for (const token of attribute) {
    if (token.text === ",") expectName = true;
    else if (expectName) {
      names.push(token.text);
      expectName = false;
    }
  }
  return names;
}

/** The name a declaration declares (`lemma NAME`, `def NAME`), or undefined (`example`). */
function declaredName(tokens: readonly LeanToken[], command: FileCommand): string | undefined {
  if (!NAMED.has(command.keyword)) return undefined;
  const next = tokens[command.head + 1];
  return next?.kind === "identifier" ? next.text : undefined;
}

function lastComponent(name: string): string {
  const parts = tokenize(name).tokens[0]?.components;
  return parts?.at(-1) ?? name;
}

/**
 * Identifiers of the statement that refer to constants: every identifier but the
 * theorem's name and the names its bracketed binders bind (`(n m : ℕ)`).
 */
function mentionedNames(statement: readonly LeanToken[]): Set<string> {
  const bound = new Set<string>();
  for (let i = 0; i < statement.length; i++) {
    if (!["(", "{", "⦃", "["].includes(statement[i]!.text)) continue;
    let j = i + 1;
    while (statement[j]?.kind === "identifier" && keywordOf(statement[j]!) !== undefined) j++;
    if (statement[j]?.text === ":") for (let b = i + 1; b < j; b++) bound.add(statement[b]!.text);
  }
  const names = new Set<string>();
  statement.forEach((token, i) => {
    if (i <= 1 || token.kind !== "identifier" || bound.has(token.text)) return;
    names.add(token.text);
    names.add(lastComponent(token.text));
  });
  return names;
}

interface Known {
  imports: Set<string>;
  opens: Set<string>;
}

/** The imports and opened namespaces the header and the dataset's context already have (an `open … in` opens nothing after it). */
function alreadyThere(target: WholeFileTarget, table: TokenTable): Known {
  const known: Known = { imports: new Set(), opens: new Set() };
  for (const text of [target.header, target.context]) {
    const tokens = codeTokens(blankComments(text, { tokens: table }), { tokens: table });
    const split = fileCommands(tokens, table);
    if ("strayAt" in split) continue;
    for (const command of split.commands) {
      const words = tokens.slice(command.head + 1, command.end);
      if (command.keyword === "import" && words[0]) known.imports.add(words[0].text);
      if (command.keyword !== "open" || words.some((token) => keywordOf(token) === "in")) continue;
      for (const token of words) if (token.kind === "identifier" && keywordOf(token) !== "scoped") known.opens.add(token.text);
    }
  }
  return known;
}

/** Why a preamble command cannot be dropped (the header does not already say it), or undefined. */
function preambleProblem(command: readonly LeanToken[], known: Known): string | undefined {
  const [head, ...rest] = command;
  const word = keywordOf(head!);
  if (word === "import") {
    const module = rest[0]?.text;
    if (rest.length !== 1 || module === undefined) return "is not one `import Module`";
    return known.imports.has(module) ? undefined : `imports \`${module}\`, which the theorem's header does not import`;
  }
  if (word === "set_option") {
    const option = rest[0]?.text ?? "";
    if (rest.length !== 2 || !HEADER_OPTIONS.has(option))
      return `sets an option other than ${[...HEADER_OPTIONS.keys()].join(", ")}, or with \`in\``;
    return undefined;
  }
  const names = rest.filter((token) => !(keywordOf(token) === "scoped"));
  const unknown = names.find((token) => token.kind !== "identifier" || keywordOf(token) === "in" || !known.opens.has(token.text));
  if (names.length === 0) return "opens nothing";
  return unknown === undefined
    ? undefined
    : `opens \`${unknown.text}\`, which the theorem's header and context do not open (it would change how the statement reads)`;
}

function refuse(code: string, token: LeanToken, problem: string): WholeFileReading {
  return { ok: false, reason: `${problem} (at ${placeIn(code, token.start, "file")}); ${ACCEPTED}` };
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/gu, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 60)}…` : flat;
}
