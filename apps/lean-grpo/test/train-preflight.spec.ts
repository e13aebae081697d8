// `lean-grpo train`'s pre-flight judges the algorithm knobs the learner will get, with the
// orchestrator's own rule for what an async run adds (the rollout correction, unless the
// config chose one): a choice StartRun accepts is not refused before start-up. It reports
// every problem it finds at once, each naming its key, and reads config groups in any case.
import { describe, expect, it } from "vitest";
import { Command } from "commander";
import { ConfigError } from "@lean-grpo/kit";
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

/** The issues of a refused plan (a ConfigError), or a failure if it was planned. */
async function refusal(words: string[]): Promise<{ path: string; message: string }[]> {
  const error = await plan(words).then(
    () => undefined,
    (e: unknown) => e as ConfigError,
  );
  expect(error, `planned without error: ${words.join(" ")}`).toBeInstanceOf(ConfigError);
  return error!.issues;
}

describe("one pre-flight reports every problem at once", () => {
  it("seed 004's configuration with fp16, gradient checkpointing and its 2048-token budget: refused once, naming all three", async () => {
    const issues = await refusal([
      `${repoRoot}examples/arith.jsonl`,
      "--config",
      `${repoRoot}apps/lean-grpo/test/seeds/rl_fp16.yaml`,
      "--max_samples",
      "10",
    ]);
    expect(issues.map((i) => i.path)).toEqual(["fp16", "gradient_checkpointing", "training.max_tokens"]);
    expect(issues[0]!.message).toMatch(/^fp16 \(file .*rl_fp16\.yaml; seed 004: train in fp16 mixed precision\): fp16 is not supported/);
    expect(issues[1]!.message).toMatch(/^gradient_checkpointing: gradient checkpointing is the PyTorch learner's/);
    expect(issues[2]!.message).toMatch(/^prompt plus max_tokens is \d+ tokens .*set training\.max_tokens to at most \d+/);
  }, 60_000);

  it("a problem of the run config and one of a service section, with a refused seed name, come together", async () => {
    const issues = await refusal([
      `${repoRoot}examples/arith.jsonl`,
      "logging_steps=5",
      "training.steps=0",
      "services.learner.lora.rank=-1",
    ]);
    const paths = issues.map((i) => i.path).join(" | ");
    expect(paths).toMatch(/logging_steps/);
    expect(issues.some((i) => /rank/.test(i.message))).toBe(true);
    expect(issues.some((i) => /training\.steps/.test(i.message))).toBe(true);
  }, 60_000);

  it("a missing dataset and a missing model are said together, without what would follow from them", async () => {
    const issues = await refusal(["theorems.jsonl", "model.dir=models/nope"]);
    expect(issues.map((i) => i.path)).toEqual(["dataset.path", "model.dir"]);
  }, 60_000);
});

describe("config groups in any case, as -a reads algorithm names", () => {
  it("algorithm=DAPO chooses configs/algorithm/dapo.yaml", async () => {
    const planned = await plan([`${repoRoot}examples/arith.jsonl`, "algorithm=DAPO"]);
    expect(planned.runConfig.algorithm?.name).toBe("dapo");
  }, 60_000);
});

describe("TRL's common names act, or say what they are here", () => {
  it("loss_type chooses the algorithm of that loss, use_vllm the backend, log_completions the kept samples; the accepted values change nothing else", async () => {
    const planned = await plan([
      `${repoRoot}examples/arith.jsonl`,
      "loss_type=dr_grpo",
      "training.use_vllm=true",
      "services.inference.vllm.url=http://127.0.0.1:9",
      "log_completions=false",
      "max_prompt_length=64",
      "optim=adamw_torch",
      "save_strategy=steps",
      "training.eval_strategy=steps",
      "tf32=false",
    ]);
    expect(planned.runConfig.algorithm?.name).toBe("drgrpo");
    expect(planned.file.services.inference).toMatchObject({ backend: "vllm" });
    expect(planned.runConfig.report?.samplesPerStep).toBe(0);
  }, 60_000);

  it("the rest are refused together, each saying what it maps to or why it has no meaning here", async () => {
    const issues = await refusal([
      `${repoRoot}examples/arith.jsonl`,
      "loss_type=bnpo",
      "optim=adafactor",
      "save_strategy=no",
      "eval_strategy=epoch",
      "save_total_limit=2",
      "tf32=true",
      "logging_dir=tb",
      "max_prompt_length=4",
    ]);
    const byName = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(Object.keys(byName).sort()).toEqual(
      ["eval_strategy", "logging_dir", "loss_type", "max_prompt_length", "optim", "save_strategy", "save_total_limit", "tf32"].sort(),
    );
    expect(byName.loss_type).toMatch(/bnpo .* nearest is dapo/);
    expect(byName.optim).toMatch(/"adafactor": the learners' optimizer is AdamW.*accepted: adamw_torch/);
    expect(byName.save_strategy).toMatch(/checkpoints every training\.checkpoint_every steps.*cannot be turned off/);
    expect(byName.eval_strategy).toMatch(/set eval\.every to the steps of an epoch/);
    expect(byName.save_total_limit).toMatch(/every checkpoint of a run is kept .*training\.checkpoint_every=N/);
    expect(byName.tf32).toMatch(/TF32 has no setting here/);
    expect(byName.logging_dir).toMatch(/runs\/<id>\/tensorboard/);
    expect(byName.max_prompt_length).toMatch(
      /^max_prompt_length \(override max_prompt_length=4\) is 4, but the longest prompt, dataset "row-\d+", is \d+ tokens .*never cut/,
    );
  }, 60_000);
});
