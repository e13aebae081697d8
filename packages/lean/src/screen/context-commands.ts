// Which commands a theorem's context may hold: an allow-list over Lean's own tokens,
// not a list of words to refuse. Lean's command loop starts a command only at a token
// that begins one (after a parse error it skips token by token to the next such
// token), and once the context lexes as Lean (source-screen.ts) those tokens are the
// ones read here, so every one of them must begin a command on the list — wherever it
// stands, also inside brackets or after `in`. The code inside every command is
// screened by the banned constructs (banned-constructs.ts, elaboration-code.ts).
import { commandStartedBy } from "../commands.js";
import type { TokenTable } from "../token-table.js";
import type { LeanToken } from "../tokens.js";
import { placeIn, type Refusal } from "./source-screen.js";

/** Declarations: their bodies are elaborated and kernel-checked, and run no code of the request's. */
const DECLARATIONS = ["theorem", "lemma", "def", "abbrev", "instance", "example", "structure", "class", "inductive", "mutual"];
/** Scopes and names in scope. */
const SCOPES = ["namespace", "section", "end", "open", "variable", "universe", "include", "omit"];
/** Modifiers and prefixes: the command they modify begins with a token of its own, checked on its own. */
const MODIFIERS = ["private", "protected", "noncomputable", "nonrec", "public", "local", "scoped", "@["];
/** Notation that abbreviates a term (a syntax-to-syntax rule, no code), with plain atoms (notation-atoms.ts). */
const NOTATION = ["notation", "infix", "infixl", "infixr", "prefix", "postfix"];
/**
 * `set_option` for the listed options, `attribute […]` for the listed attributes (both checked by the banned
 * constructs), and `deriving`, whose handlers come from the header's imports.
 */
const OTHERS = ["set_option", "attribute", "deriving"];

/** Every token that may begin a command of a context. */
export const CONTEXT_COMMANDS: ReadonlySet<string> = new Set([...DECLARATIONS, ...SCOPES, ...MODIFIERS, ...NOTATION, ...OTHERS]);

const ACCEPTED =
  `a context holds only declarations (${DECLARATIONS.join(", ")}), ${SCOPES.join(", ")}, the modifiers ` +
  `${MODIFIERS.join(", ")}, notation with plain atoms (${NOTATION.join(", ")}), set_option for the listed options, ` +
  "attribute with the listed attributes, and deriving";

/** Why a command a context may not hold is refused, by family. */
function whyRefused(command: string): string {
  if (command.startsWith("#")) return "runs, evaluates or prints something while Lean elaborates (#eval, #guard, #print, ...)";
  if (/^(run_cmd|run_elab|run_meta|initialize|builtin_initialize)$/u.test(command)) {
    return "runs code of the request while Lean elaborates it";
  }
  if (/^(elab|elab_rules|macro|macro_rules|syntax|declare_syntax_cat|syntax_abbrev|notation3|binder_predicate)$/u.test(command)) {
    return "extends Lean's syntax or elaborators with rules or code of the request's, which run while Lean elaborates";
  }
  if (command === "axiom") return "adds an unproved assumption";
  if (/^(opaque|unsafe|partial|meta)$/u.test(command)) return "declares code the kernel does not check, or that runs at compile time";
  if (command === "export") return "puts names of another namespace into this one, past the screen's namespace checks";
  if (command === "import") return "changes the imports, which come from the theorem's header only";
  return "is not a command a context may hold";
}

/**
 * The first command of `tokens` (the context's code tokens, comments dropped, read
 * with `table`) that a context may not hold.
 * The tokens index `text` from `offset` on (a reading of its rest, hiddenReadings).
 */
export function contextCommandRefusal(tokens: readonly LeanToken[], text: string, table: TokenTable, offset = 0): Refusal | undefined {
  const starts = tokens.flatMap((token, at) => {
    const command = commandStartedBy(token, table);
    return command === undefined ? [] : [{ at, command }];
  });
  for (const { at, command } of starts) {
    const token = tokens[at]!;
    const index = token.start + offset;
    if (!CONTEXT_COMMANDS.has(command)) {
      return {
        index,
        reason: `\`${command}\` at ${placeIn(text, index, "context")} begins a command a context may not hold: it ${whyRefused(command)}; ${ACCEPTED}`,
      };
    }
    // A notation's atoms are read by the declared-atoms reading (declared-atoms.ts), which refuses those it cannot model.
  }
  return undefined;
}
