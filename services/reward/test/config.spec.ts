import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "@lean-grpo/kit";
import { RewardConfigSchema, configuredReward, verifierUrls } from "../src/config.js";

const example = fileURLToPath(new URL("../../../configs/reward/example.yaml", import.meta.url));
const load = (overrides: string[] = [], file?: string) => loadConfig(RewardConfigSchema, { overrides, ...(file ? { file } : {}) });

describe("reward config", () => {
  it("defaults to the binary preset and no verifier", () => {
    const config = load();
    expect(config.reward.preset).toBe("binary");
    expect(configuredReward(config.reward).name).toBe("binary");
    expect(verifierUrls(config)).toEqual([]);
    expect(config.server.port).toBe(50053);
  });

  it("loads configs/reward/example.yaml onto its preset", () => {
    const config = load([], example);
    const reward = configuredReward(config.reward);
    expect(reward.name).toBe("shaped+config");
    const byName = Object.fromEntries(reward.scorers.map((s) => [s.scorer.name, s]));
    expect(byName.lean_proof).toMatchObject({ weight: 1, params: { mode: "shaped", max_partial: 0.25 } });
    expect(byName.length).toMatchObject({ weight: 0.5, params: { max_tokens: 8192, cache_tokens: 2048 } });
    expect(byName.format).toMatchObject({ weight: 0.1, params: { think_opened_by_prompt: true, require_think: true } });
    expect(byName.efficiency).toMatchObject({ weight: 0.05, params: { target_tactics: 4 } });
    expect(verifierUrls(config)).toEqual(["http://127.0.0.1:50052"]);
  });

  it("takes a dns:/// target for the verifier's replicas", () => {
    expect(verifierUrls(load(["verifier.url=dns:///verifier.mesh:50052"]))).toEqual(["dns:///verifier.mesh:50052"]);
  });

  it("takes dotted overrides, and a list of verifier URLs", () => {
    const config = load([
      "reward.preset=strict",
      "reward.scorers.domain.weight=0.2",
      "reward.scorers.domain.geometry=2",
      "verifier.url=[http://a:1, http://b:2]",
    ]);
    const domain = configuredReward(config.reward).scorers.find((s) => s.scorer.name === "domain");
    expect(domain).toMatchObject({ weight: 0.2, params: { geometry: 2, algebra: 1 } });
    expect(verifierUrls(config)).toEqual(["http://a:1", "http://b:2"]);
  });

  it.each([
    [
      ["reward.scorers.brevity.weight=1"],
      'unknown config key "reward.scorers.brevity"',
      'accepted keys under "reward.scorers": difficulty, domain, efficiency, format, lean_proof, length, math_answer',
    ],
    [
      ["reward.scorers.length.max_token=9"],
      'unknown config key "reward.scorers.length.max_token"',
      "cache_tokens, max_tokens, truncated, unit, weight",
    ],
    [["reward.scorers.length.unit=bytes"], 'config key "reward.scorers.length.unit"', '"tokens" | "characters"'],
    [["reward.scorers.format.weight=-1"], 'config key "reward.scorers.format.weight"', "expected a finite number >= 0"],
    [["reward.scorers.lean_proof.max_partial=1"], 'config key "reward.scorers.lean_proof.max_partial"', "expected a number in [0, 1)"],
    [
      ["reward.scorers.length.cache_tokens=9000"],
      'config key "reward.scorers.length"',
      "cache_tokens (9000) must be at most max_tokens (4096)",
    ],
    [["reward.preset=gentle"], 'config key "reward.preset"', '"binary" | "shaped" | "lenient" | "strict"'],
    [["verifier.url=localhost:50052"], 'config key "verifier.url"', ""],
    [["verifier.url=[dns:///verifier:50052]"], 'config key "verifier.url', "expected an http(s):// URL"],
  ])("rejects %j, naming the key and what it accepts", (overrides, key, accepted) => {
    let message = "";
    try {
      load(overrides);
    } catch (error) {
      message = String((error as Error).message);
    }
    expect(message).toContain(key);
    expect(message).toContain(accepted);
  });
});
