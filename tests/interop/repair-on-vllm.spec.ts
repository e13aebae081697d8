// Repair turns through the inference service's vLLM backend, against the OpenAI-compatible
// stand-in that answers as vLLM does: the feedback turn is cut out of vLLM's own chat
// template (/tokenize, /detokenize), and the second attempt's /v1/completions request sends
// the trajectory's exact token ids (prompt ids + sampled ids + feedback ids), so what the
// learner trains on is what vLLM sampled, never re-tokenised text. The reward service is the
// real one (math answers): the stand-in's letters are never right, so every trajectory repairs.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { TaskKind, TheoremSchema } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { InferenceService } from "@lean-grpo/gen/leangrpo/v1/inference_pb";
import { RewardService } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { createInferenceService, InferenceConfigSchema } from "@lean-grpo/inference";
import { loadConfig, serve } from "@lean-grpo/kit";
import { createRewardService, RewardConfigSchema } from "@lean-grpo/reward";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MeshClients } from "../../services/orchestrator/src/run/mesh-clients.js";
import { MATH_FEEDBACK } from "../../services/orchestrator/src/run/rollout/repair-feedback.js";
import { trajectoryCompletion } from "../../services/orchestrator/src/run/rollout/repair-rollout.js";
import { rollRepairTrajectories } from "../../services/orchestrator/src/run/rollout/repair-trajectories.js";
import { RunConfigSchema } from "../../services/orchestrator/src/run/config/run-config.js";
import { applyChatTemplate, startVllmStandIn, tokenizeText, type VllmStandIn } from "../fakes/vllm/vllm-stand-in.js";

let vllm: VllmStandIn;
const closers: Array<() => Promise<unknown>> = [];
let clients: Pick<MeshClients, "inference" | "reward" | "withRetry">;

beforeAll(async () => {
  vllm = await startVllmStandIn();
  closers.push(() => vllm.close());
  const inferenceConfig = loadConfig(InferenceConfigSchema, {
    overrides: [
      `vllm.url=${vllm.url}`,
      `adapters.dir=${mkdtempSync(join(tmpdir(), "adapters-"))}`,
      "server.port=0",
      "server.shutdown.drain_delay_ms=0",
    ],
  });
  const inference = await serve({ name: "inference", services: [createInferenceService(inferenceConfig)], config: inferenceConfig.server });
  closers.push(() => inference.shutdown());
  const rewardConfig = loadConfig(RewardConfigSchema, { overrides: ["server.port=0", "server.shutdown.drain_delay_ms=0"] });
  const reward = await serve({ name: "reward", services: [createRewardService(rewardConfig)], config: rewardConfig.server });
  closers.push(() => reward.shutdown());
  clients = {
    inference: createClient(InferenceService, createGrpcTransport({ baseUrl: inference.url })),
    reward: createClient(RewardService, createGrpcTransport({ baseUrl: reward.url })),
    withRetry: (_service, call) => call(),
  };
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

describe("repair turns on vLLM", () => {
  it("sends each later turn to /v1/completions as the trajectory's exact token ids, the feedback tokenised with vLLM's chat template", async () => {
    const problem = create(TheoremSchema, { id: "p", informalStatement: "What is 2 + 2?", answer: "4", kind: TaskKind.MATH_ANSWER });
    const config = RunConfigSchema.parse({ training: { mode: "repair" }, prompt: { math_template: "{problem}" } });
    const rollout = await rollRepairTrajectories({
      clients,
      config,
      theorem: problem,
      chatPrompts: true,
      adapter: "",
      n: 2,
      maxTurns: 3,
      sampling: { maxTokens: 4, temperature: 1 },
      seed: 11,
      requestId: "r",
      groupId: "g",
      attributes: {},
    });
    const completions = vllm.requests.filter((r) => r.path === "/v1/completions").map((r) => r.body as { prompt: number[]; n: number });
    // Turn 1: one request for both attempts; turns 2 and 3: one per trajectory.
    expect(completions.map((c) => c.n)).toEqual([2, 1, 1, 1, 1]);

    const prompt = tokenizeText(applyChatTemplate([{ role: "user", content: "What is 2 + 2?" }]), false);
    expect(rollout.promptTokenIds).toEqual(prompt);
    // vLLM's own template around the feedback: the assistant turn closed, the user turn, the next assistant header.
    const feedbackIds = tokenizeText(
      `<|im_end|>\n<|im_start|>user\n${MATH_FEEDBACK}\nTry again.<|im_end|>\n<|im_start|>assistant\n`,
      false,
    );
    for (const trajectory of rollout.trajectories) {
      expect(trajectory.attempts).toHaveLength(3);
      let context = prompt;
      for (const [turn, attempt] of trajectory.attempts.entries()) {
        expect(attempt.contextIds).toEqual(context);
        if (turn > 0) expect(completions.some((c) => JSON.stringify(c.prompt) === JSON.stringify(context))).toBe(true);
        if (attempt.feedback) expect(attempt.feedback.ids).toEqual(feedbackIds);
        context = [...context, ...attempt.completion.tokenIds, ...(attempt.feedback?.ids ?? [])];
      }
      // The training sample: every id sampled or fed, in order, after the first prompt.
      const { completion, mask } = trajectoryCompletion(trajectory);
      expect([...prompt, ...completion.tokenIds]).toEqual(context);
      expect(mask.filter((m) => !m)).toHaveLength(2 * feedbackIds.length);
    }
  });
});
