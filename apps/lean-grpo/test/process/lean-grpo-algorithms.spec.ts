// `lean-grpo algorithms` reads the learner's algorithms (its ListAlgorithms handler, in
// process: no server starts) and prints them; --json gives the ListAlgorithms answer.
import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { repoRoot } from "../../../../tests/support/interop-verifier.js";

const run = (args: string[], env: Record<string, string> = { LOG_LEVEL: "warn" }) =>
  promisify(execFile)(process.execPath, [`${repoRoot}apps/lean-grpo/bin/lean-grpo.mjs`, "algorithms", ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });

describe("lean-grpo algorithms", () => {
  it("lists the seven algorithms with their knobs: DAPO's clip-higher, CISPO's epsilon_max, SAPO's temperatures", async () => {
    const { stdout } = await run(["--json"]);
    const { algorithms } = JSON.parse(stdout);
    expect(algorithms.map((a: { name: string }) => a.name)).toEqual(["grpo", "drgrpo", "dapo", "gspo", "dgpo", "cispo", "sapo"]);
    const dapo = algorithms.find((a: { name: string }) => a.name === "dapo");
    expect(dapo.params.find((p: { name: string }) => p.name === "epsilon_high").defaultValue).toBe("0.28");
    const knob = (algorithm: string, name: string) =>
      algorithms.find((a: { name: string }) => a.name === algorithm).params.find((p: { name: string }) => p.name === name)?.defaultValue;
    expect(knob("cispo", "epsilon_max")).toBe("5");
    expect([knob("sapo", "sapo_temperature_pos"), knob("sapo", "sapo_temperature_neg")]).toEqual(["1", "1.05"]);
    // The rollout correction's knobs are every algorithm's, with TRL's defaults.
    expect([knob("grpo", "importance_sampling_level"), knob("grpo", "importance_sampling_action")]).toEqual(['"sequence"', '"mask"']);
    const dgpo = algorithms.find((a: { name: string }) => a.name === "dgpo");
    expect(dgpo.params.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["use_dpo_loss", "dpo_beta", "dpo_coef"]));
  });

  it("prints a table naming each algorithm, what it is for, and its keys", async () => {
    const { stdout } = await run([]);
    for (const name of ["grpo", "drgrpo", "dapo", "gspo", "dgpo", "cispo", "sapo"]) expect(stdout).toMatch(new RegExp(`^${name}\\s`, "m"));
    expect(stdout).toContain("kl_estimator");
    expect(stdout).toContain("seed schulman = k3");
  });

  it("starts no server to read them (no serving log line, even at info)", async () => {
    const { stdout, stderr } = await run([], { LOG_LEVEL: "info" });
    expect(stdout).toContain("dapo");
    expect(stderr).not.toMatch(/"msg"/);
  });
});
