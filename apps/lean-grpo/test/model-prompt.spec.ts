// A model's prompt format travels with the model (models/arith-tiny/prompt_format.json): every
// path that names the shipped model samples it with the prompt it was made for unless the user
// sets one, a prompt it was not made for starts with one warning naming the keys, a directory
// without the file keeps the run config's defaults, and the README's configuration sends the
// same prompt as before.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunConfigMessageSchema, RunConfigSchema } from "@lean-grpo/orchestrator";
import { registerTrainCommand, type TrainPlan } from "../src/commands/train-command.js";
import { applyModelPrompt } from "../src/config/model-prompt.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

async function plan(words: string[]): Promise<TrainPlan> {
  let planned: TrainPlan | undefined;
  const program = new Command().exitOverride();
  registerTrainCommand(program, async (p) => {
    planned = p;
  }).exitOverride();
  await program.parseAsync(["train", ...words], { from: "user" });
  return planned!;
}

/** The prompt section the orchestrator will run with (defaults filled). */
function resolvedPrompt(p: TrainPlan) {
  return RunConfigSchema.parse(toJson(RunConfigMessageSchema, p.runConfig, { useProtoFieldName: true })).prompt;
}

const DEFAULT_PROMPT = RunConfigSchema.parse({}).prompt;
let cwd: string;
let scratch: string;
beforeAll(() => {
  cwd = process.cwd();
  process.chdir(repoRoot);
  scratch = mkdtempSync(path.join(tmpdir(), "model-prompt-"));
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(scratch, { recursive: true, force: true });
});

describe("the model's own prompt on every path that names it", () => {
  it("seed 001's command, a data file and no group: the shipped model's prompt and learner settings, no warning", async () => {
    const p = await plan(
      "examples/arith.jsonl --algorithm grpo --num-generations 8 eval.data=examples/arith-heldout.jsonl --steps 30".split(" "),
    );
    expect(resolvedPrompt(p)).toEqual({
      ...DEFAULT_PROMPT,
      system: "",
      math_template: "{problem}",
      feedback_template: "{feedback} {problem}",
    });
    // What makes a model this small learn (configs/model/arith-tiny.yaml), as the README's run has it.
    expect(p.file.services.learner).toMatchObject({
      optimizer: { learning_rate: 0.001 },
      lora: { target_modules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
    });
    expect(p.warnings).toEqual([]);
    expect(p.notes).toEqual([]);
  }, 60_000);

  it("the README's configuration sends the prompt it always sent", async () => {
    const p = await plan(["examples/arith.jsonl", "--config", "configs/train/arith.yaml"]);
    expect(resolvedPrompt(p)).toEqual({
      ...DEFAULT_PROMPT,
      format: "auto",
      system: "",
      math_template: "{problem}",
      feedback_template: "{feedback} {problem}",
    });
    expect(p.warnings).toEqual([]);
    expect(p.notes).toEqual([]);
    expect(p.file.services.learner).toMatchObject({ micro_batch_tokens: 1024, optimizer: { learning_rate: 0.001 } });
  }, 60_000);

  it("a system prompt the shipped model was not made for is kept, with one warning naming it", async () => {
    const p = await plan(["dataset=arith", "dataset.system_prompt=You are an expert mathematician."]);
    expect(resolvedPrompt(p)).toMatchObject({ system: "You are an expert mathematician.", math_template: "{problem}" });
    expect(p.warnings).toHaveLength(1);
    expect(p.warnings[0]).toMatch(
      /^prompt\.system is "You are an expert mathematician\.", a system turn the model never saw \(models\/arith-tiny\/prompt_format\.json holds the prompt the model was made for\): the run samples the prompt you set; leave it unset to use the model's own$/,
    );
  }, 60_000);

  it("a template the user sets wins over the model's, named in the warning with every other key that differs", async () => {
    const p = await plan(["examples/arith.jsonl", "prompt.math_template={problem} Answer:", "prompt.system=Be brief."]);
    expect(resolvedPrompt(p)).toMatchObject({ system: "Be brief.", math_template: "{problem} Answer:" });
    expect(p.warnings[0]).toMatch(
      /^prompt\.system is "Be brief\.", a system turn the model never saw; prompt\.math_template is "\{problem\} Answer:", not the model's "\{problem\}" .*leave these keys unset/,
    );
  }, 60_000);

  it("a model directory without prompt_format.json (a Hugging Face model as downloaded) keeps the run config's defaults", async () => {
    const model = path.join(scratch, "hf-model");
    cpSync("models/arith-tiny", model, { recursive: true });
    rmSync(path.join(model, "prompt_format.json"));
    const p = await plan(["examples/arith.jsonl", `model.dir=${model}`]);
    expect(resolvedPrompt(p)).toEqual(DEFAULT_PROMPT);
    expect(p.warnings).toEqual([]);
    // Its directory is no group's: the learner keeps its own defaults.
    expect(p.file.services.learner?.optimizer).toBeUndefined();
  }, 60_000);

  it("a resumed run keeps the prompt it was started with (its saved config), so nothing is filled in", async () => {
    const p = await plan(["--resume", "no-such-run-yet"]);
    expect(p.runConfig.prompt).toBeUndefined();
  }, 60_000);

  it("applyModelPrompt fills only unset keys and says nothing where the run agrees with the model", () => {
    const runConfig = { prompt: { mathTemplate: "{problem}" } } as Parameters<typeof applyModelPrompt>[0];
    const result = applyModelPrompt(runConfig, "models/arith-tiny");
    expect(result.fromModel).toEqual(["system", "feedback_template"]);
    expect(result.warning).toBeUndefined();
    expect(runConfig.prompt).toMatchObject({ mathTemplate: "{problem}", system: "", feedbackTemplate: "{feedback} {problem}" });
  });
});
