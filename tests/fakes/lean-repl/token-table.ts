// The token table the stand-in reports for a header's environment by default: a
// Mathlib-like one. Core Lean's and Mathlib's usual tokens, `#` as a token of its own
// (Mathlib's `#s` card notation), the `#` commands listed one by one, and `module` a
// token (Mathlib's tactic) that begins no command, as in a real Mathlib environment.
import { BUILTIN_COMMAND_TOKENS, BUILTIN_TOKENS } from "@lean-grpo/lean";

const HEADER_ONLY = new Set(["module", "prelude"]);

export const DEFAULT_TOKEN_TABLE = {
  tokens: [...new Set([...BUILTIN_TOKENS, "#", "module", "∑ x ∈", "‖₊", "fun₀"])],
  commands: BUILTIN_COMMAND_TOKENS.filter((token) => !HEADER_ONLY.has(token)),
};
