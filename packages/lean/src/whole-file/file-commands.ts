// A whole file's top-level commands, read from Lean's tokens: each begins at a token
// that begins a command (commands.ts) and runs to the next one. Modifiers and an
// attribute list (`private`, `noncomputable`, `@[simp]`) belong to the declaration
// they stand before, so `@[simp] private lemma x` is one command whose keyword is
// `lemma`. Lean's command loop starts a command at any such token, wherever it stands
// (also inside what looks like a proof), so that is where this reading splits too.
import { commandStartedBy, keywordOf } from "../commands.js";
import type { TokenTable } from "../token-table.js";
import type { LeanToken } from "../tokens.js";

export const DECLARATION_MODIFIERS: ReadonlySet<string> = new Set([
  "private",
  "protected",
  "noncomputable",
  "nonrec",
  "public",
  "local",
  "scoped",
  "unsafe",
  "partial",
  "meta",
]);

export interface FileCommand {
  /** The command's keyword after its modifiers and attributes (`lemma`, `open`, `#eval`, `@[` when nothing follows). */
  keyword: string;
  /** Token index of its first token (a modifier, `@[`, or the keyword). */
  first: number;
  /** Token index of the keyword. */
  head: number;
  /** Token index just past its last token. */
  end: number;
  /** Modifier words before the keyword. */
  modifiers: string[];
  /** Attribute lists before the keyword, each as the tokens between `@[` and `]`. */
  attributes: LeanToken[][];
}

/**
 * The commands of `tokens` (code tokens, comments dropped), or the index of the first
 * token that stands before any command (text a file may not begin with).
 */
export function fileCommands(tokens: readonly LeanToken[], table: TokenTable): { commands: FileCommand[] } | { strayAt: number } {
  const starts: number[] = [];
  tokens.forEach((token, at) => {
    const command = commandStartedBy(token, table) ?? (keywordOf(token) === "import" ? "import" : undefined);
    if (command === undefined) return;
    // `open Classical in simp` inside a proof is a tactic (a term): it begins no command.
    if ((command === "open" || command === "set_option") && at > 0 && scopesATerm(tokens, at, table)) return;
    starts.push(at);
  });
  if (tokens.length > 0 && starts[0] !== 0) return { strayAt: 0 };
  const commands: FileCommand[] = [];
  let k = 0;
  while (k < starts.length) {
    const first = starts[k]!;
    const modifiers: string[] = [];
    const attributes: LeanToken[][] = [];
    let head = first;
    for (;;) {
      const token = tokens[head];
      if (token?.text === "@[" && token.kind === "symbol") {
        const close = closingBracket(tokens, head);
        attributes.push(tokens.slice(head + 1, close));
        head = close + 1;
      } else if (token && DECLARATION_MODIFIERS.has(keywordOf(token) ?? "") && head + 1 < tokens.length) {
        modifiers.push(token.text);
        head++;
      } else break;
    }
    if (head >= tokens.length) head = first;
    const keyword = commandStartedBy(tokens[head]!, table) ?? keywordOf(tokens[head]!) ?? tokens[head]!.text;
    // The next command begins at the first start past this one's keyword.
    while (k < starts.length && starts[k]! <= head) k++;
    const end = k < starts.length ? starts[k]! : tokens.length;
    commands.push({ keyword, first, head, end, modifiers, attributes });
  }
  return { commands };
}

/**
 * Whether the `open`/`set_option` at `at` is the `… in` of a tactic or term: its `in` comes
 * before any other command's token and is followed by something that begins no command.
 * Before a declaration (`open Foo in theorem …`) it is a command, as Lean reads it.
 */
function scopesATerm(tokens: readonly LeanToken[], at: number, table: TokenTable): boolean {
  for (let j = at + 1; j < tokens.length; j++) {
    if (commandStartedBy(tokens[j]!, table) !== undefined) return false;
    if (keywordOf(tokens[j]!) !== "in") continue;
    const next = tokens[j + 1];
    return next !== undefined && commandStartedBy(next, table) === undefined && keywordOf(next) !== "import";
  }
  return false;
}

/** Index of the `]` closing the `@[` at `open` (brackets nested); the last token when none closes it. */
function closingBracket(tokens: readonly LeanToken[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const text = tokens[i]!.text;
    if (text === "[" || text === "@[" || text === "#[" || text === "%[") depth++;
    else if (text === "]" && --depth === 0) return i;
  }
  return tokens.length - 1;
}
