// What a run records for people to read is the text the sampler was given: samples.jsonl (and
// the step events the dashboard shows, which carry the same records) and eval.jsonl hold the
// prompt as the shipped model's chat template renders it, system turn included. The expected
// text is written out here from the template's ChatML, not produced by the code under test.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RunOutputs } from "@lean-grpo/orchestrator";
import { registerTrainCommand } from "../src/commands/train-command.js";
import { repoRoot } from "../../../tests/support/interop-verifier.js";

const SYSTEM = "You are an expert mathematician.";
/** models/arith-tiny's chat template (ChatML) around one system and one user turn, with the generation prompt. */
const chatml = (problem: string) =>
  `<|im_start|>system\n${SYSTEM}<|im_end|>\n<|im_start|>user\n${problem}<|im_end|>\n<|im_start|>assistant\n`;

let cwd: string;
let out: string;
beforeAll(() => {
  cwd = process.cwd();
  process.chdir(repoRoot);
  out = mkdtempSync(path.join(tmpdir(), "sampled-prompts-"));
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(out, { recursive: true, force: true });
});

describe("the run records the exact prompt", () => {
  it("samples.jsonl and eval.jsonl show the system turn and the chat template; the run starts with one warning naming the key", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      const program = new Command().exitOverride();
      registerTrainCommand(program);
      await program.parseAsync(
        [
          "train",
          "dataset=arith",
          `dataset.system_prompt=${SYSTEM}`,
          "training.steps=1",
          "training.batch_size=2",
          "training.num_generations=2",
          "training.max_tokens=4",
          "eval.max_problems=2",
          "report.samples_per_step=4",
          "--output_dir",
          out,
        ],
        { from: "user" },
      );
      const warnings = stderr.mock.calls.map(([text]) => String(text)).filter((text) => text.startsWith("lean-grpo: warning:"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`prompt.system is "${SYSTEM}", a system turn the model never saw`);
    } finally {
      stderr.mockRestore();
      process.exitCode = undefined;
    }
    const [runId] = readdirSync(out).filter((f) => !f.startsWith("."));
    const outputs = new RunOutputs(path.join(out, runId!));
    expect((await outputs.readRun()).state).toBe("COMPLETED");
    const problems = new Map(
      readFileSync("examples/arith.jsonl", "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line, i) => [`row-${i + 1}`, (JSON.parse(line) as { problem: string }).problem]),
    );
    const kept = (await outputs.readSamples()).flatMap((s) => s.samples);
    expect(kept.length).toBeGreaterThan(0);
    for (const sample of kept) expect(sample.prompt).toBe(chatml(problems.get(sample.theorem_id)!));
    const [evaluation] = await outputs.readEvals();
    expect(evaluation!.prompt).toEqual({ theorem_id: "row-1", text: chatml("What is 48 + 29?") });
  }, 300_000);
});
