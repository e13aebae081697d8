// What every held-out evaluation of a run shares, whether it scores one greedy attempt
// (heldout-eval.ts) or a repair trajectory (repair-heldout.ts): the clients and problems, how
// many problems are in flight, and how many attempts each gets.
import type { Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { MeshClients } from "../mesh-clients.js";
import type { RunConfig } from "../config/run-config.js";

export interface HeldoutContext {
  clients: MeshClients;
  config: RunConfig;
  theorems: readonly Theorem[];
  chatPrompts: boolean;
  signal?: AbortSignal;
}

/** Held-out problems sent at once. */
export const HELDOUT_CONCURRENCY = 256;

/** Attempts per held-out problem: eval.max_turns, else rollout.max_turns in repair mode (unless it samples pass@k), else 1. */
export function evalTurns(config: RunConfig): number {
  return config.eval.max_turns ?? (config.training.mode === "repair" && config.eval.samples === 1 ? config.rollout.max_turns : 1);
}
