// `lean-grpo train` as a user runs it (the README's main command, shortened): the shipped
// model and config, every service on loopback, JSON lines per step when stdout is not a
// TTY, held-out evaluation, and the summary table at the end. LEANGRPO_AUTH_TOKEN is set, as
// in a shell that also talks to a mesh: every service requires it and the command presents it.
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const TOKEN = "train-shell-t0ken-5c";

describe("lean-grpo train", () => {
  it("trains the shipped model 2 steps with configs/train/arith.yaml and prints steps, held-out accuracy and the summary", async () => {
    const runsDir = mkdtempSync(path.join(tmpdir(), "lean-grpo-train-"));
    try {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        [
          `${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`,
          "train",
          "examples/arith.jsonl",
          "--config",
          "configs/train/arith.yaml",
          "training.steps=2",
          "training.batch_size=2",
          "training.num_generations=2",
          "eval.max_problems=4",
          "eval.every=1",
          `runs_dir=${runsDir}`,
        ],
        { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: "warn", LEANGRPO_AUTH_TOKEN: TOKEN } },
      );
      expect(`${stdout}${stderr}`).not.toContain(TOKEN);
      const lines = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.step)).toEqual([1, 2]);
      for (const line of lines) {
        expect(Number.isFinite(line.metrics.reward_mean)).toBe(true);
        expect(line.metrics.heldout_accuracy).toBeGreaterThanOrEqual(0);
        expect(line.timings.totalS).toBeGreaterThan(0);
      }
      expect(stderr).toMatch(/held-out greedy accuracy after step 0: \d+\.\d% \(\d\/4/);
      expect(stdout).toMatch(/state\s*│\s*COMPLETED/);
      expect(stdout).toMatch(/held-out\s*│\s*\d+\.\d% after step 0 -> \d+\.\d% after step 2 \(greedy, 4 problems, 3 evaluations/);
      const runId = /run\s*│\s*(\S+)/.exec(stdout)![1]!;
      const evals = readFileSync(path.join(runsDir, runId, "eval.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(evals.map((e) => e.step)).toEqual([0, 1, 2]);
      expect(readFileSync(path.join(runsDir, runId, "report.html"), "utf8")).toMatch(/id="run-data">.*"evaluations":\[/s);
    } finally {
      rmSync(runsDir, { recursive: true, force: true });
    }
  }, 180_000);
});
