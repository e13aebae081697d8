// Messages between the verifier and its screen threads (screen-threads.ts). A token
// table is made of functions, so it travels as what it was made from, once per thread:
// later jobs name it by id.
import type { TokenTableSpec } from "@lean-grpo/lean";
import type { CheckedSource, Screened } from "../verdict/proof-source.js";
import type { SourcePosition } from "../verdict/source-position.js";
import type { TheoremTarget } from "../verdict/theorem-target.js";

/** A table as a job names it: one of the two built in, or one the thread was sent (with its spec the first time). */
export type TableRef = { kind: "builtin" } | { kind: "presumed" } | { kind: "sent"; id: number; spec?: TokenTableSpec };

export type ScreenJob =
  | { op: "proof"; target: TheoremTarget; proof: string; table: TableRef }
  | { op: "start"; target: TheoremTarget; table: TableRef }
  | { op: "tactic"; tactic: string; theoremName: string; context: string; table: TableRef };

export interface ScreenJobResults {
  proof: Screened<CheckedSource>;
  start: Screened<CheckedSource & { sorryAt: SourcePosition }>;
  tactic: Screened<string>;
}

export type ScreenRequest = { id: number; job: ScreenJob };
export type ScreenReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };
