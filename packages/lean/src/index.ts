export { blankCommentTokens, blankComments, blankNonCode, tokensResynchronised } from "./blank.js";
export { crlfToLf } from "./line-ends.js";
export { isIdFirst, isIdRest, isLetterLike, isSubscriptAlnum } from "./characters.js";
export { COMMAND_KEYWORDS, COMMAND_SYMBOLS, commandStartedBy, keywordOf } from "./commands.js";
export { tokenize, type TokenizeOptions } from "./tokenize.js";
export type { LeanToken, LeanTokenKind, LexError, LexResult } from "./tokens.js";
export { BUILTIN_COMMAND_TOKENS, BUILTIN_TABLE, BUILTIN_TOKENS, PRESUMED_TABLE } from "./builtin-tokens.js";
export { makeTokenTable, tokenTableSpec, withAtoms, type TokenTable, type TokenTableSource, type TokenTableSpec } from "./token-table.js";
export {
  codeTokens,
  declaredTheoremName,
  nextCommandAtLineStart,
  statementWithoutProof,
  theoremDeclarations,
  topLevelAssign,
  type Declaration,
} from "./declarations.js";
export {
  HEADER_OPTIONS,
  MAX_HEADER_CHARS,
  screenHeader,
  screenTheoremHeader,
  type HeaderScreen,
  type TheoremHeaderFields,
} from "./header-screen.js";
export { positionAt, type SourcePosition } from "./screen/position.js";
export type { BannedConstruct, SourcePart } from "./screen/construct.js";
export { BANNED_CONSTRUCTS, findBannedUse, lastComponent, type BannedUse } from "./screen/banned-constructs.js";
export { CONTEXT_COMMANDS } from "./screen/context-commands.js";
export { lexicalRefusal, screenSourcePart, type Refusal } from "./screen/source-screen.js";
export {
  MAX_THEOREM_TEXT_CHARS,
  screenTheorem,
  screenTheoremSource,
  tablesAfterContext,
  type TheoremField,
  type TheoremScreen,
  type TheoremSourceFields,
} from "./screen/theorem-screen.js";
export { PROOF_FORMATS, readsAsWholeFile, type ProofFormat } from "./whole-file/proof-format.js";
export {
  AUXILIARY_ATTRIBUTES,
  AUXILIARY_KEYWORDS,
  splitWholeFile,
  type WholeFile,
  type WholeFileReading,
  type WholeFileTarget,
} from "./whole-file/split-whole-file.js";
export { readDeclaringAtoms, type AtomReadings, type DeclaredAtom } from "./screen/declared-atoms.js";
