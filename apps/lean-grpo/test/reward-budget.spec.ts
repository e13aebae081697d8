// DAPO's overlong penalty follows the run's training.max_tokens: the run's RewardSpec
// carries its generation budget (max_completion_tokens) and the reward service fits the
// `length` scorer to it, so a completion near the run's limit is penalised, as DAPO means,
// instead of never (the scorer's own 4096-token default). StartRun's pre-flight asks the
// reward service to resolve the spec, so a length that cannot fit fails the start.
// Against a real reward service on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { FinishReason, TaskKind } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import {
  OrchestratorConfigSchema,
  RunConfigSchema,
  checkRewardSpec,
  connectMesh,
  rewardSpec,
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
async function lengthComponent(config: ReturnType<typeof runConfig>, tokens: number) {
  const response = await clients.reward.scoreGroup({
    theorem: { id: "t", kind: TaskKind.MATH_ANSWER, informalStatement: "1+1", answer: "2" },
    completions: [{ text: "x".repeat(tokens), tokenIds: Array.from({ length: tokens }, () => 7), finishReason: FinishReason.STOP }],
    ...rewardSpec(config),
  });
  return response.results[0]!.components.find((c) => c.scorer === "length")!;
}

async function refusal(config: ReturnType<typeof runConfig>): Promise<ConnectError | undefined> {
  return checkRewardSpec(clients, config).then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
}

describe("the overlong penalty's length", () => {
  it("follows training.max_tokens: a completion near the run's limit is penalised, a short one is not", async () => {
    const config = runConfig({ preset: "shaped" });
    expect(rewardSpec(config).spec.maxCompletionTokens).toBe(28);
    await checkRewardSpec(clients, config);
    expect((await lengthComponent(config, 10)).value).toBe(0);
    // Soft limit 28 − 7 = 21: (21 − 27) / 7.
    const near = await lengthComponent(config, 27);
    expect(near.value).toBeCloseTo(-6 / 7, 10);
    expect(near.detail).toBe("27 tokens (soft limit 21, hard 28)");
    // The run's config is not rewritten: config.json shows what the user chose.
    expect(config.reward.scorers).toEqual([]);
  });

  it("keeps the preset's own soft zone when it fits, and refuses one that does not fit the run, naming the key", async () => {
    const error = await refusal(runConfig({ preset: "strict" }));
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toMatch(
      /^reward \(with a generation budget of training\.max_tokens 28\): reward "strict": length: cache_tokens \(512\) is larger than max_tokens \(28, the generation budget\)/,
    );
    const fits = RunConfigSchema.parse({ training: { max_tokens: 1024 }, reward: { preset: "strict" } });
    await checkRewardSpec(clients, fits);
    expect((await lengthComponent(fits, 600)).detail).toBe("600 tokens (soft limit 512, hard 1024)");
  });

  it("leaves a reward without the length scorer alone, and refuses a maximum the run can never reach", async () => {
    const binary = runConfig({ preset: "binary" });
    await checkRewardSpec(clients, binary);
    const tooLong = runConfig({ scorers: [{ name: "length", weight: 1, params: { max_tokens: 4096 } }] });
    await expect(checkRewardSpec(clients, tooLong)).rejects.toThrow(/length: max_tokens \(4096\) exceeds the generation budget \(28\)/);
  });

  it("refuses an unknown preset at the start, with the reward service's list", async () => {
    await expect(checkRewardSpec(clients, runConfig({ preset: "shapd" }))).rejects.toThrow(
      /spec\.preset: unknown preset "shapd"; accepted: binary, shaped/,
    );
  });
});
