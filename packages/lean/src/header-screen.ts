// The one check every theorem header passes before Lean sees it. A header is
// elaborated by the REPL as a command of its own, before any proof screen runs, so a
// header holding `#eval IO.Process.output …` would run code on the verifier's host.
// The check is an allow-list over Lean's own tokens (this package's lexer), not a
// deny-list: a header is
//   import lines (one module each), then any of
//   open [scoped] Namespace…      (brings names into scope; not IO's or Lean's)
//   set_option NAME VALUE         (for the options in HEADER_OPTIONS only)
// with `--` and `/- -/` comments anywhere. Everything else (another command, `in`,
// a doc comment, a symbol, a string, a lexical error) is refused, so comments,
// strings and Unicode look-alikes cannot smuggle a command through: whatever the
// lexer does not read as one of the allowed words is refused.
import { COMMAND_KEYWORDS, keywordOf } from "./commands.js";
import { METAPROGRAMMING_NAMESPACES } from "./screen/metaprogramming.js";
import { tokenize } from "./tokenize.js";
import type { LeanToken } from "./tokens.js";

/**
 * Options a header may set, with the kind of value each takes. They bound how hard
 * elaboration tries (heartbeats, recursion depth, instance search) or how names are
 * bound (auto-bound implicits); none switches off a kernel check, runs code or reads
 * a file. The service's wall-clock limit bounds time whatever `maxHeartbeats` says
 * (miniF2F's header sets it to 0).
 */
export const HEADER_OPTIONS: ReadonlyMap<string, "nat" | "bool"> = new Map([
  ["maxHeartbeats", "nat"],
  ["maxRecDepth", "nat"],
  ["synthInstance.maxHeartbeats", "nat"],
  ["synthInstance.maxSize", "nat"],
  ["autoImplicit", "bool"],
  ["relaxedAutoImplicit", "bool"],
]);

/** Longest header accepted, characters (miniF2F's and ProofNet's are under 200). */
export const MAX_HEADER_CHARS = 16 * 1024;

export type HeaderScreen = { ok: true } | { ok: false; reason: string };

const ACCEPTED =
  "a header may hold only `import Module` lines, then `open [scoped] Namespace…` and " +
  `\`set_option NAME VALUE\` for ${[...HEADER_OPTIONS.keys()].join(", ")}, with \`--\` and \`/- -/\` comments`;

/** Whether `header` is only imports, `open`s and allowed `set_option`s; the reason names the line and the token when not. */
export function screenHeader(header: string): HeaderScreen {
  if (header.length > MAX_HEADER_CHARS) {
    return { ok: false, reason: `is ${header.length} characters long; at most ${MAX_HEADER_CHARS} are accepted` };
  }
  const { tokens, error } = tokenize(header);
  if (error) return refuse(header, error.index, `does not lex (${error.message})`);
  for (const token of tokens) {
    if (token.kind === "docComment") return refuse(header, token.start, "holds a doc comment, which belongs to a declaration");
    if (token.kind === "blockComment" && token.unterminated) return refuse(header, token.start, "holds an unterminated comment");
  }
  const code = tokens.filter((token) => token.kind !== "lineComment" && token.kind !== "blockComment");
  let importsDone = false;
  for (let i = 0; i < code.length; ) {
    const token = code[i]!;
    const command = keywordOf(token);
    if (command === "import") {
      if (importsDone) return refuse(header, token.start, "has an `import` after an `open` or `set_option` (Lean reads imports first)");
      const module = code[i + 1];
      if (!module || !isName(module)) return refuse(header, (module ?? token).start, "has an `import` without a module name after it");
      i += 2;
    } else if (command === "open") {
      importsDone = true;
      let next = i + 1;
      if (code[next] && keywordOf(code[next]!) === "scoped") next++;
      const first = next;
      while (code[next] && isName(code[next]!)) {
        const opened = code[next]!.components!.find((part) => part !== "_root_") ?? "";
        if (METAPROGRAMMING_NAMESPACES.has(opened)) {
          return refuse(
            header,
            code[next]!.start,
            `opens \`${opened}\`, whose members run or reach code at elaboration time (IO, Lean's elaborator)`,
          );
        }
        next++;
      }
      if (next === first) return refuse(header, (code[next] ?? token).start, "has an `open` without a namespace after it");
      i = next;
    } else if (command === "set_option") {
      importsDone = true;
      const refused = checkOption(code[i + 1], code[i + 2]);
      if (refused) return refuse(header, (code[i + 1] ?? token).start, refused);
      i += 3;
    } else {
      return refuse(header, token.start, `holds ${quote(token)}, which is not allowed there`);
    }
  }
  return { ok: true };
}

/** A namespace or module name: an identifier that is not a keyword (`in`, `hiding`, `#eval`, `theorem`, …). */
function isName(token: LeanToken): boolean {
  if (token.kind !== "identifier") return false;
  if (token.escaped) return true;
  const word = keywordOf(token) ?? "";
  return !COMMAND_KEYWORDS.has(word) && !NOT_NAMES.has(word);
}

/** Words of `open`'s and `set_option`'s own syntax, which would extend the command beyond a plain list of names. */
const NOT_NAMES: ReadonlySet<string> = new Set(["in", "hiding", "renaming", "scoped", "true", "false", "at"]);

function checkOption(name: LeanToken | undefined, value: LeanToken | undefined): string | undefined {
  if (name?.kind !== "identifier" || name.escaped) return "has a `set_option` without an option name after it";
  const kind = HEADER_OPTIONS.get(name.text);
  if (!kind) return `sets the option \`${excerpt(name.text)}\`, which a header may not set`;
  const valueOk =
    kind === "nat"
      ? value?.kind === "number" && /^[0-9]+$/.test(value.text)
      : value !== undefined && ["true", "false"].includes(keywordOf(value) ?? "");
  if (!valueOk)
    return `sets \`${name.text}\` to ${value ? quote(value) : "nothing"}; it takes ${kind === "nat" ? "a decimal number" : "true or false"}`;
  return undefined;
}

function refuse(header: string, index: number, problem: string): HeaderScreen {
  const line = header.slice(0, index).split("\n").length;
  return { ok: false, reason: `line ${line} ${problem}; ${ACCEPTED}` };
}

function quote(token: LeanToken): string {
  return `\`${excerpt(token.text)}\``;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > 40 ? `${flat.slice(0, 40)}…` : flat;
}

/** A dataset theorem's header fields, as in the Theorem message. */
export interface TheoremHeaderFields {
  header: string;
  imports: readonly string[];
}

/**
 * Screens the header the verifier would elaborate for a theorem: `header` when set,
 * else one `import` line per module of `imports`. Services that pass theorems on (the
 * reward service, the orchestrator) refuse them early with the same check; `field`
 * names the field to blame.
 */
export function screenTheoremHeader(
  theorem: TheoremHeaderFields,
): { ok: true } | { ok: false; field: "header" | "imports"; reason: string } {
  const fromImports = theorem.header.trim() === "";
  const screen = screenHeader(fromImports ? theorem.imports.map((module) => `import ${module}`).join("\n") : theorem.header);
  return screen.ok ? screen : { ok: false, field: fromImports ? "imports" : "header", reason: screen.reason };
}
