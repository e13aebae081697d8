// Lean 4's character classes for identifiers (Init/Meta.lean: isLetterLike,
// isSubScriptAlnum, isIdFirst, isIdRest). `Char.isAlpha` there is ASCII only, so
// `é` or `ß` is not an identifier character: Lean stops the identifier before it.

/** Greek (but λ, Π, Σ), Coptic, polytonic Greek, the letterlike block and mathematical alphanumerics. */
export function isLetterLike(cp: number): boolean {
  return (
    (cp >= 0x3b1 && cp <= 0x3c9 && cp !== 0x3bb) ||
    (cp >= 0x391 && cp <= 0x3a9 && cp !== 0x3a0 && cp !== 0x3a3) ||
    (cp >= 0x3ca && cp <= 0x3fb) ||
    (cp >= 0x1f00 && cp <= 0x1ffe) ||
    (cp >= 0x2100 && cp <= 0x214f) ||
    (cp >= 0x1d49c && cp <= 0x1d59f)
  );
}

/** Subscript digits ₀-₉, letters ₐ-ₜ and ᵢ-ᵪ. */
export function isSubscriptAlnum(cp: number): boolean {
  return (cp >= 0x2080 && cp <= 0x2089) || (cp >= 0x2090 && cp <= 0x209c) || (cp >= 0x1d62 && cp <= 0x1d6a);
}

const isAsciiAlpha = (cp: number) => (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
export const isDigit = (cp: number) => cp >= 0x30 && cp <= 0x39;
export const isHexDigit = (cp: number) => isDigit(cp) || (cp >= 0x41 && cp <= 0x46) || (cp >= 0x61 && cp <= 0x66);

export function isIdFirst(cp: number): boolean {
  return isAsciiAlpha(cp) || cp === 0x5f || isLetterLike(cp);
}

/** Letters, digits, `_`, `'`, `!`, `?`, letterlike and subscripts. */
export function isIdRest(cp: number): boolean {
  return isIdFirst(cp) || isDigit(cp) || cp === 0x27 || cp === 0x21 || cp === 0x3f || isSubscriptAlnum(cp);
}

/** Lean's `Char.isWhitespace`: space, tab, CR, LF. */
export function isWhitespace(cp: number): boolean {
  return cp === 0x20 || cp === 0x09 || cp === 0x0d || cp === 0x0a;
}
