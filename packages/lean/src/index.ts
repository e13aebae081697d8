export { blankComments, blankNonCode, tokensResynchronised } from "./blank.js";
export { crlfToLf } from "./line-ends.js";
export { isIdFirst, isIdRest, isLetterLike, isSubscriptAlnum } from "./characters.js";
export { COMMAND_KEYWORDS, COMMAND_SYMBOLS, commandStartedBy, keywordOf } from "./commands.js";
export { tokenize, type TokenizeOptions } from "./tokenize.js";
export type { LeanToken, LeanTokenKind, LexError, LexResult } from "./tokens.js";
export { BUILTIN_COMMAND_TOKENS, BUILTIN_TABLE, BUILTIN_TOKENS } from "./builtin-tokens.js";
export { makeTokenTable, type TokenTable, type TokenTableSource } from "./token-table.js";
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
