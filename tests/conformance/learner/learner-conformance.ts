// The LearnerService conformance suite: one suite, run against every implementation
// (ts-learner.spec.ts, torch-learner.spec.ts). It drives a learner over gRPC only, and
// checks its numbers against the independent PyTorch reference (conformance-fixtures.ts).
import { execFile } from "node:child_process";
import { cpSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@lean-grpo/gen/grpc/health/v1/health_pb";
import {
  type ConformanceFixture,
  expectedAdapter,
  readConformanceFixture,
  REPO_ROOT,
  START_CHECKPOINT,
  START_CHECKPOINT_NAME,
  startAdapter,
} from "./conformance-fixtures.js";
import { startInferenceWithAdapter } from "./inference-with-adapter.js";
import {
  exportedAdapter,
  failure,
  type LearnerClient,
  learnerClient,
  caseStepStream,
  trainStepStream,
  updateError,
  adapterDifference,
} from "./learner-calls.js";
import type { LearnerConfigSection, LearnerUnderTest, RunningLearner } from "./learner-under-test.js";

const { fixture, samples, modelDir } = await readConformanceFixture();
const ALL_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
const MAX_SAMPLES = 16;
const READ_MAX_BYTES = 256 * 1024;
// Tolerances against the float64-free reference: float32 arithmetic in a different order.
const LOGPROB_TOLERANCE = 1e-4;
const METRIC_RELATIVE = 1e-4;
const UPDATE_RELATIVE = 1e-3;

/** The learner config every implementation gets: the fixture adapter's LoRA shape and the reference's AdamW. */
export function conformanceConfig(checkpointDir: string, f: ConformanceFixture = fixture): LearnerConfigSection {
  // A learner reads and writes checkpoints under its checkpoint_dir only: the start checkpoint is copied in.
  cpSync(START_CHECKPOINT, path.join(checkpointDir, START_CHECKPOINT_NAME), { recursive: true });
  return {
    model: { dir: modelDir, name: f.model },
    lora: { rank: 4, alpha: 8, target_modules: ALL_MODULES },
    optimizer: { ...f.optimizer, lr_schedule: "constant", warmup_steps: 0 },
    max_samples_per_step: MAX_SAMPLES,
    checkpoint_dir: checkpointDir,
    seed: 0,
    server: { limits: { read_max_bytes: READ_MAX_BYTES } },
  };
}

function close(got: number | undefined, expected: number, what: string): void {
  expect(got, `${what} is reported`).toBeTypeOf("number");
  expect(Math.abs(got! - expected), `${what}: ${got} vs the reference's ${expected}`).toBeLessThanOrEqual(
    METRIC_RELATIVE * Math.abs(expected) + 1e-7,
  );
}

export function describeLearnerConformance(learner: LearnerUnderTest): void {
  describe(`LearnerService conformance: ${learner.name} learner`, () => {
    let running: RunningLearner;
    let client: LearnerClient;
    let dir: string;

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), `conformance-${learner.name}-`));
      running = await learner.start(conformanceConfig(dir));
      client = learnerClient(running.url);
    }, 240_000);
    afterAll(async () => {
      await running?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /** Every numeric case starts from the same adapter and a fresh optimizer. */
    async function fromStart(): Promise<void> {
      const loaded = await client.loadCheckpoint({ path: START_CHECKPOINT_NAME });
      expect([loaded.step, loaded.adapterVersion]).toEqual([0n, 0n]);
    }

    it("answers grpc.health.v1 SERVING and lists LearnerService through server reflection", async () => {
      const health = createClient(Health, createGrpcTransport({ baseUrl: running.url }));
      expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const { stdout } = await promisify(execFile)(
        path.join(REPO_ROOT, "node_modules/.bin/buf"),
        ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--timeout", "20s", "--list-services", running.url],
        { cwd: "/" },
      );
      expect(stdout.split("\n")).toEqual(expect.arrayContaining(["leangrpo.v1.LearnerService", "grpc.health.v1.Health"]));
    });

    it("lists the seven algorithms", async () => {
      const { algorithms } = await client.listAlgorithms({});
      expect(algorithms.map((a) => a.name).sort()).toEqual(["cispo", "dapo", "dgpo", "drgrpo", "grpo", "gspo", "sapo"]);
      for (const a of algorithms) expect(a.params.map((p) => p.name)).toContain("temperature");
      // The orchestrator sends the generation budget (training.max_tokens) as this knob to every algorithm.
      for (const a of algorithms) expect(a.params.map((p) => p.name)).toContain("max_completion_length");
      // The seed's names for a knob travel in ParameterInfo.aliases (the orchestrator accepts them from there).
      const grpo = algorithms.find((a) => a.name === "grpo")!;
      const aliases = Object.fromEntries(grpo.params.filter((p) => p.aliases.length > 0).map((p) => [p.name, [...p.aliases]]));
      expect(aliases).toMatchObject({ epsilon: ["clip_low"], epsilon_high: ["clip_high"], importance_sampling_cap: ["truncated_is"] });
      for (const p of grpo.params) expect(p.description).not.toMatch(/also accepted as/);
    });

    it("reads sampling temperature 0 as greedy decoding (scored at T = 1, untruncated) and refuses a deprecated temperature that disagrees", async () => {
      await fromStart();
      const sequences = samples.map((s) => ({ promptTokenIds: s.promptTokenIds, completionTokenIds: s.completionTokenIds }));
      const rows = async (sampling: { temperature: number; topK?: number; topP?: number }) =>
        (await client.computeLogprobs({ sequences, sampling })).sequences.flatMap((s) => s.logprobs);
      const full = await rows({ temperature: 1 });
      const greedy = await rows({ temperature: 0, topK: 2, topP: 0.5 });
      greedy.forEach((v, i) => expect(Math.abs(v - full[i]!), `token ${i}`).toBeLessThan(1e-6));
      // top_k and top_p would have changed the scores: greedy decoding does not apply them.
      const truncated = await rows({ temperature: 1, topK: 2, topP: 0.5 });
      expect(Math.max(...truncated.map((v, i) => Math.abs(v - full[i]!)))).toBeGreaterThan(1e-3);
      const error = await client.computeLogprobs({ sequences, temperature: 0.7, sampling: { temperature: 0 } }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.InvalidArgument);
      expect(error?.rawMessage).toMatch(
        /temperature is 0\.[67]\d* but sampling\.temperature is 0 \(greedy decoding, scored under temperature 1\)/,
      );
    });

    it("ComputeLogprobs gives the reference's logprobs and entropies under the policy and under the reference", async () => {
      await fromStart();
      const sequences = samples.map((s) => ({ promptTokenIds: s.promptTokenIds, completionTokenIds: s.completionTokenIds }));
      const policy = await client.computeLogprobs({ sequences, temperature: fixture.temperature, includeEntropy: true });
      const reference = await client.computeLogprobs({ sequences, temperature: fixture.temperature, reference: true });
      expect(reference.adapterVersion).toBe(0n);
      samples.forEach((_, i) => {
        const row = (got: number[], want: number[], what: string) => {
          expect(got, `${what} of sample ${i}`).toHaveLength(want.length);
          got.forEach((v, t) => expect(Math.abs(v - want[t]!), `${what}[${i}][${t}]: ${v} vs ${want[t]}`).toBeLessThan(LOGPROB_TOLERANCE));
        };
        row(policy.sequences[i]!.logprobs, fixture.policy.logprobs[i]!, "policy logprobs");
        row(policy.sequences[i]!.entropies, fixture.policy.entropies[i]!, "policy entropies");
        row(reference.sequences[i]!.logprobs, fixture.reference.logprobs[i]!, "reference logprobs");
      });
      const status = await client.getStatus({});
      expect(status).toMatchObject({ model: fixture.model, step: 0n, adapterVersion: 0n });
      expect(status.lora).toMatchObject({ rank: 4, alpha: 8 });
      expect([...status.lora!.targetModules].sort()).toEqual([...ALL_MODULES].sort());
    });

    it.each(fixture.cases.map((c) => [c.name, c] as const))(
      "%s: one TrainStep gives the reference's loss, metrics and adapter",
      async (_name, c) => {
        await fromStart();
        const response = await client.trainStep(caseStepStream(c, samples));
        expect([response.step, response.adapterVersion, response.adapterName]).toEqual([1n, 1n, "policy-v1"]);
        for (const [key, expected] of Object.entries(c.metrics)) close(response.metrics[key], expected, key);
        close(response.metrics.learning_rate, fixture.optimizer.learning_rate, "learning_rate");
        close(response.metrics.reward_mean, fixture.batch.reward_mean, "reward_mean");
        close(response.metrics.reward_std, fixture.batch.reward_std, "reward_std");
        close(response.metrics.completion_length_mean, fixture.batch.completion_length_mean, "completion_length_mean");
        if (c.mode === "rl") {
          close(response.metrics.frac_reward_zero_std, fixture.batch.frac_reward_zero_std, "frac_reward_zero_std");
          expect(response.zeroStdGroups).toEqual(fixture.batch.zero_std_groups);
        }
        const start = await startAdapter(fixture);
        const expected = await expectedAdapter(c);
        const { manifest, tensors } = await exportedAdapter(client);
        expect(manifest.version).toBe(1n);
        expect([...tensors.keys()].sort()).toEqual([...expected.keys()].sort());
        for (const [key, want] of expected) {
          const got = tensors.get(key)!;
          expect(got.shape, key).toEqual(want.shape);
          const { error, scale } = updateError(start.get(key)!.data, got.data, want.data);
          expect(scale, `${key}: the reference update is zero`).toBeGreaterThan(0);
          expect(error, `${key}: update error relative to the update`).toBeLessThan(UPDATE_RELATIVE);
        }
      },
    );

    // Bad input (status code, field path, nothing applied): bad-input.spec.ts, one table for every learner.
    it("refuses an unknown algorithm or key, a wrong group size, stream misuse (INVALID_ARGUMENT) and a step out of order (FAILED_PRECONDITION)", async () => {
      await fromStart();
      const unknown = await failure(client.trainStep(trainStepStream({ algorithm: "ppo" }, samples)), Code.InvalidArgument);
      expect(unknown).toMatch(/"?ppo"?/);
      expect(unknown).toMatch(/grpo/);
      const key = await failure(
        client.trainStep(trainStepStream({ algorithm: "gspo", algorithmConfig: { target_group_size: 8 } }, samples)),
        Code.InvalidArgument,
      );
      expect(key).toMatch(/target_group_size/);
      // Rollout-correction knobs that cannot act: a level with the correction off, a lower bound above the cap.
      const inert = await failure(
        client.trainStep(trainStepStream({ algorithm: "grpo", algorithmConfig: { importance_sampling_level: "token" } }, samples)),
        Code.InvalidArgument,
      );
      expect(inert).toMatch(/importance_sampling_level/);
      expect(inert).toMatch(/importance_sampling_cap/);
      const bounds = await failure(
        client.trainStep(
          trainStepStream({ algorithm: "grpo", algorithmConfig: { importance_sampling_cap: 2, importance_sampling_min: 3 } }, samples),
        ),
        Code.InvalidArgument,
      );
      expect(bounds).toMatch(/importance_sampling_min = 3/);
      const action = await failure(
        client.trainStep(
          trainStepStream(
            { algorithm: "grpo", algorithmConfig: { importance_sampling_cap: 2, importance_sampling_action: "drop" } },
            samples,
          ),
        ),
        Code.InvalidArgument,
      );
      expect(action).toMatch(/importance_sampling_action.*"truncate", "mask"/);
      // pass@k's k must fit every group (g2 has 2 completions), and needs advantage_estimator passk.
      const k = await failure(
        client.trainStep(trainStepStream({ algorithm: "grpo", algorithmConfig: { advantage_estimator: "passk", pass_k: 3 } }, samples)),
        Code.InvalidArgument,
      );
      expect(k).toMatch(/pass_k = 3 does not fit group "g2" of 2 completions/);
      const inertK = await failure(
        client.trainStep(trainStepStream({ algorithm: "grpo", algorithmConfig: { pass_k: 2 } }, samples)),
        Code.InvalidArgument,
      );
      expect(inertK).toMatch(/sets pass_k but advantage_estimator is "grpo"/);
      const groups = await failure(
        client.trainStep(trainStepStream({ algorithm: "grpo", numGenerations: 4 }, samples)),
        Code.InvalidArgument,
      );
      expect(groups).toMatch(/g1/);
      expect(groups).toMatch(/num_generations/);
      const order = await failure(client.trainStep(trainStepStream({ algorithm: "grpo", step: 9n }, samples)), Code.FailedPrecondition);
      expect(order).toMatch(/step/);
      expect(order).toMatch(/9/);
      const sampleFirst = (async function* () {
        for await (const message of trainStepStream({ algorithm: "grpo" }, samples)) if (message.part.case === "sample") yield message;
      })();
      expect(await failure(client.trainStep(sampleFirst), Code.InvalidArgument)).toMatch(/header/);
      const status = await client.getStatus({});
      expect([status.step, status.adapterVersion]).toEqual([0n, 0n]);
    });

    it("answers RESOURCE_EXHAUSTED beyond max_samples_per_step and beyond server.limits.read_max_bytes", async () => {
      await fromStart();
      const many = Array.from({ length: MAX_SAMPLES + 1 }, (_, i) => ({
        ...samples[i % samples.length]!,
        groupId: `g${i}`,
        sampleId: `m${i}`,
      }));
      expect(await failure(client.trainStep(trainStepStream({ algorithm: "grpo" }, many)), Code.ResourceExhausted)).toMatch(
        /max_samples_per_step/,
      );
      const huge = [{ ...samples[0]!, promptTokenIds: Array.from({ length: READ_MAX_BYTES + 1024 }, (_, i) => 3 + (i % 50)) }];
      await failure(client.trainStep(trainStepStream({ algorithm: "grpo" }, huge)), Code.ResourceExhausted);
      const status = await client.getStatus({});
      expect([status.step, status.adapterVersion]).toEqual([0n, 0n]);
    });

    it("ExportAdapter of a version not held is NOT_FOUND naming it", async () => {
      await fromStart();
      expect(await failure(client.exportAdapter({ version: 999n })[Symbol.asyncIterator]().next(), Code.NotFound)).toMatch(/999/);
    });

    it("SaveCheckpoint, a step, LoadCheckpoint and the same step again give the same adapter", async () => {
      await fromStart();
      const grpo = fixture.cases.find((c) => c.name === "grpo")!;
      const dapo = fixture.cases.find((c) => c.name === "dapo")!;
      const step = (c: typeof grpo, n: bigint) =>
        client.trainStep(
          trainStepStream(
            { algorithm: c.algorithm, algorithmConfig: c.config, step: n, temperature: c.config.temperature as number },
            samples,
          ),
        );
      await step(grpo, 1n);
      const saved = await client.saveCheckpoint({});
      expect(saved).toMatchObject({ step: 1n, adapterVersion: 1n });
      // Named relative to checkpoint_dir, as LoadCheckpoint takes it back.
      expect(saved.path).toBe("step-1");
      expect(saved.sizeBytes).toBeGreaterThan(0n);
      const atSave = await exportedAdapter(client);
      const first = await step(dapo, 2n);
      const afterFirst = await exportedAdapter(client);
      expect(adapterDifference(afterFirst.tensors, atSave.tensors).error, "the second step moved the adapter").toBeGreaterThan(1e-4);

      const loaded = await client.loadCheckpoint({ path: saved.path });
      expect(loaded).toMatchObject({ step: 1n, adapterVersion: 1n, algorithm: "grpo" });
      expect(adapterDifference((await exportedAdapter(client)).tensors, atSave.tensors).error).toBe(0);
      const again = await step(dapo, 2n);
      expect(adapterDifference((await exportedAdapter(client)).tensors, afterFirst.tensors).error).toBeLessThan(1e-6);
      close(again.metrics.loss, first.metrics.loss!, "loss of the replayed step");
      close(again.metrics.grad_norm, first.metrics.grad_norm!, "grad_norm of the replayed step");

      expect(await failure(client.loadCheckpoint({ path: "no-such-checkpoint" }), Code.NotFound)).toBe(
        'path "no-such-checkpoint" does not exist under checkpoint_dir',
      );
      // Only under checkpoint_dir: an absolute path, `..` or the fixture's own directory are refused by both learners alike.
      for (const outside of [START_CHECKPOINT, "../start-checkpoint", `${START_CHECKPOINT_NAME}/../../x`]) {
        expect(await failure(client.loadCheckpoint({ path: outside }), Code.InvalidArgument)).toMatch(
          /^path ".*" (is absolute|contains "\.\.")/,
        );
        expect(await failure(client.saveCheckpoint({ path: outside }), Code.InvalidArgument)).toMatch(
          /^path ".*" (is absolute|contains "\.\.")/,
        );
      }
      expect(await failure(client.loadCheckpoint({ path: "" }), Code.InvalidArgument)).toMatch(/path/);
    });

    it("its exported PEFT files load into the inference service, which then samples from the trained policy", async () => {
      await fromStart();
      const grpo = fixture.cases.find((c) => c.name === "grpo")!;
      await client.trainStep(trainStepStream({ algorithm: "grpo", algorithmConfig: grpo.config, step: 1n, temperature: 0.7 }, samples));
      const inference = await startInferenceWithAdapter(modelDir, client);
      try {
        expect(inference.loaded).toBe("policy-v1");
        const prompt = samples[0]!.promptTokenIds;
        const tuned = await inference.sample(prompt, "policy-v1");
        const base = await inference.sample(prompt, "");
        // The sampler's logprobs are the learner's: under the policy with the adapter, under the reference without.
        for (const [completions, reference] of [
          [tuned, false],
          [base, true],
        ] as const) {
          const scored = await client.computeLogprobs({
            sequences: completions.map((c) => ({ promptTokenIds: prompt, completionTokenIds: c.tokenIds })),
            temperature: 1,
            reference,
          });
          completions.forEach((c, i) =>
            c.logprobs.forEach((lp, t) =>
              expect(
                Math.abs(lp - scored.sequences[i]!.logprobs[t]!),
                `${reference ? "base" : "policy-v1"} completion ${i} token ${t}`,
              ).toBeLessThan(2e-4),
            ),
          );
        }
        const underBase = await client.computeLogprobs({
          sequences: tuned.map((c) => ({ promptTokenIds: prompt, completionTokenIds: c.tokenIds })),
          temperature: 1,
          reference: true,
        });
        const moved = Math.max(...tuned.flatMap((c, i) => c.logprobs.map((lp, t) => Math.abs(lp - underBase.sequences[i]!.logprobs[t]!))));
        expect(moved, "the adapter changes what the sampler draws from").toBeGreaterThan(1e-2);
      } finally {
        await inference.stop();
      }
    });
  });

  describe(`LearnerService conformance: ${learner.name} learner without a model`, () => {
    it("serves status and algorithms, and answers FAILED_PRECONDITION naming model.dir for model RPCs", async () => {
      const running = await learner.start({});
      try {
        const client = learnerClient(running.url);
        expect((await client.getStatus({})).step).toBe(0n);
        expect((await client.listAlgorithms({})).algorithms).toHaveLength(7);
        expect(await failure(client.trainStep(trainStepStream({ algorithm: "grpo" }, samples)), Code.FailedPrecondition)).toMatch(
          /model\.dir/,
        );
        const sequences = [{ promptTokenIds: [1], completionTokenIds: [2] }];
        expect(await failure(client.computeLogprobs({ sequences }), Code.FailedPrecondition)).toMatch(/model\.dir/);
        expect(await failure(client.saveCheckpoint({}), Code.FailedPrecondition)).toMatch(/model\.dir/);
      } finally {
        await running.stop();
      }
    }, 240_000);
  });
}
