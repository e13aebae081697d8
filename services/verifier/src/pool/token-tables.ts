// The token table of each header, read once from Lean by whichever worker warms the
// header first (repl/token-table-query.ts), and shared by the pool: every worker's
// environment for the same header has the same table. Where Lean could not answer,
// the header is screened with the fallback table, and that is logged once.
import { BUILTIN_TABLE, type TokenTable } from "@lean-grpo/lean";
import type { Logger } from "../logger.js";

export class TokenTables {
  private readonly tables = new Map<string, TokenTable>();

  constructor(private readonly logger: Logger) {}

  /** Whether this header's table has been read (or given up on). */
  has(header: string): boolean {
    return this.tables.has(header);
  }

  /** The table to screen bodies on `header` with: Lean's, else the fallback. */
  get(header: string | undefined): TokenTable {
    return (header === undefined ? undefined : this.tables.get(header)) ?? BUILTIN_TABLE;
  }

  set(header: string, table: TokenTable): void {
    this.tables.set(header, table);
  }

  useFallback(header: string, reason: string): void {
    this.tables.set(header, BUILTIN_TABLE);
    this.logger.warn(
      { header, reason },
      "could not read the header's token table from Lean; screening its proofs with the built-in table (it may refuse honest proofs that use Mathlib notation)",
    );
  }

  /** Per header: where its table came from. */
  sources(): Record<string, TokenTable["source"]> {
    return Object.fromEntries([...this.tables].map(([header, table]) => [header, table.source]));
  }
}
