// What training.mode needs, checked before a run starts: tactic mode proves Lean theorems
// step by step through the verifier, so a math-answer dataset or a mesh without a
// verifier URL is refused up front rather than failing at the first group.
import { Code, ConnectError } from "@connectrpc/connect";
import { TaskKind, type Theorem } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import type { OrchestratorConfig } from "../../config.js";
import { RUN_MODES, type RunConfig } from "../config/run-config.js";

export function checkRunMode(config: RunConfig, theorems: readonly Theorem[], services: OrchestratorConfig["services"]): void {
  if (config.training.mode !== "tactic") return;
  const index = theorems.findIndex((t) => t.kind === TaskKind.MATH_ANSWER || t.statement.trim() === "");
  if (index >= 0) {
    const theorem = theorems[index]!;
    throw new ConnectError(
      `training.mode "tactic" needs Lean theorems (records with statement or formal_statement), but problem ${index + 1} of the dataset ` +
        `(id ${JSON.stringify(theorem.id)}) is a math-answer problem; train math datasets with training.mode "whole" (accepted: ${RUN_MODES.join(", ")})`,
      Code.InvalidArgument,
    );
  }
  if (!services.verifier) {
    throw new ConnectError(
      'training.mode "tactic" calls the verifier (StartProof, ApplyTactic) itself: set services.verifier in the orchestrator\'s config',
      Code.FailedPrecondition,
    );
  }
}
