// Lean's token table: the symbols and keywords an environment's parsers declared.
// Lean reads a token by longest match against this table (`tokenFn` in
// Lean/Parser/Basic.lean, `Trie.matchPrefix`), so what counts as one token (`⁻¹'`,
// `×ˢ`, `#eval`, `Type*`) depends on the imports. The verifier asks Lean for the
// table of each header it warms (verifier: repl/token-table-query.ts); BUILTIN_TABLE
// (builtin-tokens.ts) is the fallback where it cannot.

/**
 * "environment": read from Lean for the header. "builtin": the fallback list, read
 * strictly where it may miss a token (every `#word` a command, a quote next to a symbol
 * refused). "presumed": the fallback list read as a Mathlib environment reads it, for
 * the early screens of services that never see Lean (builtin-tokens.ts, PRESUMED_TABLE).
 */
export type TokenTableSource = "environment" | "builtin" | "presumed";

export interface TokenTable {
  readonly source: TokenTableSource;
  /** The longest token that `src` holds at UTF-16 index `at`, or undefined. */
  longestMatch(src: string, at: number): string | undefined;
  has(token: string): boolean;
  /** The tokens that begin a command (the `command` category's leading tokens), e.g. `theorem`, `#eval`, `@[`. */
  readonly commandTokens: ReadonlySet<string>;
  readonly size: number;
}

export function makeTokenTable(tokens: Iterable<string>, commandTokens: Iterable<string>, source: TokenTableSource): TokenTable {
  const all = new Set<string>();
  for (const token of tokens) if (token !== "") all.add(token);
  const commands = new Set<string>(commandTokens);
  // Candidates by first UTF-16 unit, longest first: the first that matches is the longest.
  const byFirst = new Map<string, string[]>();
  for (const token of all) {
    const list = byFirst.get(token[0]!) ?? [];
    list.push(token);
    byFirst.set(token[0]!, list);
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.length - a.length);
  return {
    source,
    commandTokens: commands,
    size: all.size,
    has: (token) => all.has(token),
    longestMatch(src, at) {
      const candidates = byFirst.get(src[at] ?? "");
      return candidates?.find((token) => src.startsWith(token, at));
    },
  };
}

/**
 * `table` with `atoms` added, as Lean's table is after a command declares them (a
 * notation's `"…"` atoms, trimmed): same source and command tokens.
 */
export function withAtoms(table: TokenTable, atoms: Iterable<string>): TokenTable {
  const added = [...atoms].filter((atom) => atom !== "" && !table.has(atom));
  if (added.length === 0) return table;
  const extra = makeTokenTable(added, [], table.source);
  return {
    source: table.source,
    commandTokens: table.commandTokens,
    size: table.size + extra.size,
    has: (token) => extra.has(token) || table.has(token),
    longestMatch(src, at) {
      const [mine, theirs] = [extra.longestMatch(src, at), table.longestMatch(src, at)];
      return mine !== undefined && (theirs === undefined || mine.length > theirs.length) ? mine : theirs;
    },
  };
}
