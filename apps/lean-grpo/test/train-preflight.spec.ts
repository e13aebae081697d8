// `lean-grpo train`'s pre-flight judges the algorithm knobs the learner will get, with the
// orchestrator's own rule for what an async run adds (the rollout correction, unless the
// config chose one): a choice StartRun accepts is not refused before start-up.
import { describe, expect, it } from "vitest";
import { Command } from "commander";
import { registerTrainCommand, type TrainPlan } from "../src/commands/train-command.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

/** `lean-grpo train <words>` parsed and planned (the pre-flight included), without running it. */
async function plan(words: string[]): Promise<TrainPlan> {
  let planned: TrainPlan | undefined;
  const program = new Command().exitOverride();
  registerTrainCommand(program, async (p) => {
    planned = p;
  }).exitOverride();
  await program.parseAsync(["train", ...words], { from: "user" });
  return planned!;
}

const ASYNC_RUN = [`${repoRoot}examples/arith.jsonl`, "--config", `${repoRoot}configs/train/arith.yaml`, "training.async=true"];

describe("the pre-flight's algorithm check on an async run", () => {
  it("accepts the run's own correction under either name, and none", async () => {
    for (const choice of [
      "algorithm.config.truncated_is=3",
      "algorithm.config.importance_sampling_cap=3",
      "algorithm.config.importance_sampling_cap=null",
    ]) {
      const planned = await plan([...ASYNC_RUN, choice]);
      expect(planned.runConfig.training?.async, choice).toBe(true);
    }
  }, 60_000);

  it("still refuses what the learner would refuse, naming the knob", async () => {
    await expect(plan([...ASYNC_RUN, "algorithm.config.truncated_is=3", "algorithm.config.importance_sampling_cap=2"])).rejects.toThrow(
      /importance_sampling_cap/,
    );
  }, 60_000);
});
