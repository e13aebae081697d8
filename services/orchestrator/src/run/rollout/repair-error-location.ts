// Where an error of a failed attempt stands, in words the model can act on: for a
// whole-file proof the checked source is the dataset's context, the file's auxiliary
// declarations, then the theorem, so a line number alone does not say which of the
// model's declarations broke. An error before the theorem's statement is in the
// auxiliary declaration that begins nearest above it (named when it has a name); an
// error after it is in the theorem's proof.
import { codeTokens, commandStartedBy, keywordOf } from "@lean-grpo/lean";

const DECLARATION_WORDS: ReadonlySet<string> = new Set(["theorem", "lemma", "def", "abbrev", "structure", "inductive", "example"]);

/** "in the auxiliary `aux_wf`", "in the theorem's proof", or "" when the source does not say (a body proof, no source). */
export function errorPlace(checkedSource: string, statement: string, context: string, line: number): string {
  const statementAt = statement === "" ? -1 : checkedSource.lastIndexOf(statement.trim());
  if (checkedSource === "" || statementAt < 0) return "";
  const statementLine = lineOf(checkedSource, statementAt);
  const contextLines = context.trim() === "" ? 0 : context.trimEnd().split("\n").length;
  // Nothing between the context and the statement: a body proof, whose lines speak for themselves.
  if (statementLine <= contextLines + 1) return "";
  if (line >= statementLine) return "in the theorem's proof";
  if (line <= contextLines) return "";
  const name = auxiliaryAbove(checkedSource, line);
  return name === undefined ? "in an auxiliary declaration" : `in the auxiliary \`${name}\``;
}

/** The name declared by the last declaration that begins at or above `line` (1-based). */
function auxiliaryAbove(source: string, line: number): string | undefined {
  const upTo = source.split("\n").slice(0, line).join("\n");
  const tokens = codeTokens(upTo);
  for (let i = tokens.length - 1; i >= 0; i--) {
    const word = keywordOf(tokens[i]!);
    if (word === undefined || !DECLARATION_WORDS.has(word) || commandStartedBy(tokens[i]!) === undefined) continue;
    const next = tokens[i + 1];
    return word !== "example" && next?.kind === "identifier" ? next.text : undefined;
  }
  return undefined;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
