// `lean-grpo train --url` planned without a server: the dataset is the orchestrator's (not
// looked for here), the config is read and checked as for the local command, what only
// configures a local mesh is named in a note, and --ui is refused with what to run instead.
import { describe, expect, it } from "vitest";
import { Command } from "commander";
import { registerTrainCommand, type TrainPlan } from "../src/commands/train-command.js";
import { checkRemoteTrainOptions, remoteTrainNotes } from "../src/commands/train-remote.js";
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

const README = ["--config", `${repoRoot}configs/train/arith.yaml`, "--url", "http://127.0.0.1:50055"];

describe("lean-grpo train --url, planned", () => {
  it("sends the dataset path as the orchestrator names it, and the run config of the local command", async () => {
    const planned = await plan(["data/on-the-orchestrator.jsonl", ...README, "training.steps=7"]);
    expect(planned.file.dataset.path).toBe("data/on-the-orchestrator.jsonl");
    expect(planned.runConfig.training?.steps).toBe(7);
    expect(planned.runConfig.eval?.data).toBe("examples/arith-heldout.jsonl");
    // Without --url the same file must exist here.
    await expect(plan(["data/on-the-orchestrator.jsonl", "--config", `${repoRoot}configs/train/arith.yaml`])).rejects.toThrow(
      /on-the-orchestrator\.jsonl/,
    );
  });

  it("still refuses a bad config key before contacting anything, naming it", async () => {
    await expect(plan(["examples/arith.jsonl", ...README, "training.stepz=2"])).rejects.toThrow(/training\.stepz/);
  });

  it("names the sections the running mesh decides, and refuses --ui", async () => {
    const planned = await plan(["examples/arith.jsonl", ...README]);
    const notes = remoteTrainNotes(planned);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^services\.learner configures the services `lean-grpo train` starts here; with --url the running mesh's own config decides/,
    );
    expect(remoteTrainNotes({ ...planned, file: { ...planned.file, services: {} } })).toEqual([]);
    expect(() => checkRemoteTrainOptions({ ui: true })).toThrow(/--ui .* with --url run `lean-grpo dashboard --url URL`/);
    expect(() => checkRemoteTrainOptions({})).not.toThrow();
  });
});
