// DAPO's overlong penalty follows the run's training.max_tokens: at start the orchestrator
// gives the reward's `length` scorer the run's length (and a soft zone inside it), so a
// completion near the run's limit is penalised, as DAPO means, instead of never (the
// scorer's own 4096-token default). Against a real reward service on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import {
  OrchestratorConfigSchema,
  RunConfigSchema,
  connectMesh,
  rewardSpec,
  tieOverlongLength,
  type MeshClients,
} from "@lean-grpo/orchestrator";
import { RewardConfigSchema, createRewardService } from "@lean-grpo/reward";

let server: RunningServer;
let clients: MeshClients;

beforeAll(async () => {
  const config = loadConfig(RewardConfigSchema, { flags: { server: { port: 0 } } });
  server = await serve({ name: "reward", services: [createRewardService(config)], config: config.server });
  // Only the reward service is called here; the others are named because a mesh needs them.
  const unused = "http://127.0.0.1:9";
  clients = connectMesh(
    loadConfig(OrchestratorConfigSchema, { flags: { services: { reward: server.url, inference: unused, learner: unused } } }),
  );
});
afterAll(async () => {
  clients?.close();
  await server?.shutdown();
});

const runConfig = (reward: Record<string, unknown>) =>
  RunConfigSchema.parse({ algorithm: { name: "dapo" }, training: { max_tokens: 28 }, reward });

/** The `length` component of a completion of `tokens` tokens under the run's reward. */
async function lengthComponent(config: ReturnType<typeof runConfig>, tokens: number): Promise<number> {
  const response = await clients.reward.scoreGroup({
    theorem: { id: "t", kind: TaskKind.MATH_ANSWER, informalStatement: "1+1", answer: "2" },
    completions: [{ text: "x".repeat(tokens), tokenIds: Array.from({ length: tokens }, () => 7), finishReason: FinishReason.STOP }],
    ...rewardSpec(config),
  });
  return response.results[0]!.components.find((c) => c.scorer === "length")!.value;
}

describe("the overlong penalty's length", () => {
  it("follows training.max_tokens: a completion near the run's limit is penalised, a short one is not", async () => {
    const config = runConfig({ preset: "shaped" });
    // What the scorer did before the run tied it: 27 of 28 tokens is far below 4096 − 1024.
    expect(await lengthComponent(config, 27)).toBe(0);
    await tieOverlongLength(clients, config);
    expect(config.reward.scorers).toMatchObject([
      { name: "length", weight: 0.5, params: { max_tokens: 28, cache_tokens: 7, unit: "tokens" } },
    ]);
    expect(await lengthComponent(config, 10)).toBe(0);
    // Soft limit 28 − 7 = 21: (21 − 27) / 7.
    expect(await lengthComponent(config, 27)).toBeCloseTo(-6 / 7, 10);
    // A resumed run reads the tied override back and keeps it.
    await tieOverlongLength(clients, config);
    expect(config.reward.scorers).toHaveLength(1);
  });

  it("keeps the preset's own soft zone when it fits, and refuses one that does not fit the run, naming the key", async () => {
    const strict = runConfig({ preset: "strict" });
    const error = await tieOverlongLength(clients, strict).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toMatch(
      /reward preset "strict": length\.cache_tokens \(512\) is larger than its max_tokens \(28, from training\.max_tokens\)/,
    );
    const fits = RunConfigSchema.parse({ training: { max_tokens: 1024 }, reward: { preset: "strict" } });
    await tieOverlongLength(clients, fits);
    expect(fits.reward.scorers).toMatchObject([{ name: "length", weight: 0.5, params: { max_tokens: 1024, cache_tokens: 512 } }]);
  });

  it("leaves a reward without the length scorer alone, and refuses a maximum the run can never reach", async () => {
    const binary = runConfig({ preset: "binary" });
    await tieOverlongLength(clients, binary);
    expect(binary.reward.scorers).toEqual([]);
    expect(rewardSpec(binary)).toEqual({ spec: { preset: "binary", scorers: [] } });
    const tooLong = runConfig({ scorers: [{ name: "length", weight: 1, params: { max_tokens: 4096 } }] });
    await expect(tieOverlongLength(clients, tooLong)).rejects.toThrow(
      /reward\.scorers\[length\]\.max_tokens \(4096\) exceeds training\.max_tokens \(28\)/,
    );
  });
});
