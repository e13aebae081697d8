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

/** What a table was made from: enough to make it again elsewhere (another thread). */
export interface TokenTableSpec {
  tokens: string[];
  commandTokens: string[];
  source: TokenTableSource;
}

const specs = new WeakMap<TokenTable, TokenTableSpec>();

/** The tokens, command tokens and source `table` was made from by makeTokenTable; undefined for a table made otherwise. */
export function tokenTableSpec(table: TokenTable): TokenTableSpec | undefined {
  return specs.get(table);
}

export function makeTokenTable(tokens: Iterable<string>, commandTokens: Iterable<string>, source: TokenTableSource): TokenTable {
  const all = new Set<string>();
  for (const token of tokens) if (token !== "") all.add(token);
  const commands = new Set<string>(commandTokens);
  const table = tableOf(all, commands, source);
  specs.set(table, { tokens: [...all], commandTokens: [...commands], source });
  return table;
}

function tableOf(all: ReadonlySet<string>, commands: ReadonlySet<string>, source: TokenTableSource): TokenTable {
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
  const growing = growingTable(table);
  return growing.add(atoms) ? growing.table : table;
}

/**
 * A table that grows as a text declares atoms, for one reading of it: `add` puts atoms
 * into the same table object (each atom costs its first character's candidates, so a
 * text of many notations is read in time linear in it) and says whether any was new.
 */
export function growingTable(base: TokenTable): { table: TokenTable; add(atoms: Iterable<string>): boolean } {
  const added = new Set<string>();
  const byFirst = new Map<string, string[]>();
  const table: TokenTable = {
    source: base.source,
    commandTokens: base.commandTokens,
    get size() {
      return base.size + added.size;
    },
    has: (token) => added.has(token) || base.has(token),
    longestMatch(src, at) {
      const theirs = base.longestMatch(src, at);
      const candidates = byFirst.get(src[at] ?? "");
      if (candidates === undefined) return theirs;
      const mine = candidates.find((token) => src.startsWith(token, at));
      return mine !== undefined && (theirs === undefined || mine.length > theirs.length) ? mine : theirs;
    },
  };
  const add = (atoms: Iterable<string>) => {
    let grew = false;
    for (const atom of atoms) {
      if (atom === "" || table.has(atom)) continue;
      added.add(atom);
      const list = byFirst.get(atom[0]!) ?? [];
      // Longest first, so that the first match is the longest.
      const at = list.findIndex((token) => token.length < atom.length);
      list.splice(at < 0 ? list.length : at, 0, atom);
      byFirst.set(atom[0]!, list);
      grew = true;
    }
    return grew;
  };
  return { table, add };
}
