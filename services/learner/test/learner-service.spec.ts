// The LearnerService served for real on loopback with the tiny fixture model, driven over
// gRPC: TrainStep (header, then samples), validation with nothing applied, ComputeLogprobs,
// ExportAdapter (manifest + chunks whose SHA-256 match), checkpoints, status, algorithms.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { LearnerService, TrainingMode, TrainStepRequestSchema, type TrainStepRequest } from "@lean-grpo/gen/leangrpo/v1/learner_pb";
import { loadConfig, serve, type RunningServer } from "@lean-grpo/kit";
import { LearnerConfigSchema } from "../src/config.js";
import { createLearnerService } from "../src/service.js";
import { scoreCompletions } from "@lean-grpo/lm";
import { importPeftAdapter, type PeftFiles } from "@lean-grpo/lm";
import { CausalLM } from "@lean-grpo/lm";
import { fixtureExamples, readAlgorithmFixture } from "./support/algorithm-fixtures.js";
import { fixturePath } from "../../../packages/lm/test/support/fixtures.js";

const examples = fixtureExamples(await readAlgorithmFixture());

function stream(
  header: { algorithm: string; algorithmConfig?: JsonObject; step?: bigint; mode?: TrainingMode; numGenerations?: number },
  spoil?: (samples: TrainStepRequest[]) => void,
): AsyncIterable<TrainStepRequest> {
  const samples = examples.map((e) =>
    create(TrainStepRequestSchema, {
      part: {
        case: "sample",
        value: {
          groupId: e.groupId,
          promptTokenIds: e.promptIds,
          completionTokenIds: e.completionIds,
          samplerLogprobs: e.samplerLogprobs ?? [],
          reward: e.reward,
          truncated: e.truncated,
          sampleId: e.sampleId,
        },
      },
    }),
  );
  spoil?.(samples);
  const messages = [create(TrainStepRequestSchema, { part: { case: "header", value: { mode: TrainingMode.RL, ...header } } }), ...samples];
  return (async function* () {
    yield* messages;
  })();
}

async function expectCode(call: Promise<unknown>, code: Code, message: RegExp): Promise<void> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, "the call should have failed").toBeInstanceOf(ConnectError);
  expect(Code[(error as ConnectError).code]).toBe(Code[code]);
  expect((error as ConnectError).rawMessage).toMatch(message);
}

async function exported(client: Client<typeof LearnerService>, version = 0n, chunkSize = 0) {
  const files = new Map<string, Uint8Array[]>();
  let manifest;
  for await (const message of client.exportAdapter({ version, chunkSize })) {
    if (message.part.case === "manifest") manifest = message.part.value;
    else if (message.part.case === "chunk") {
      const chunk = message.part.value;
      files.set(chunk.path, [...(files.get(chunk.path) ?? []), chunk.data]);
    }
  }
  const joined = new Map([...files].map(([p, parts]) => [p, Buffer.concat(parts)]));
  return { manifest: manifest!, files: joined };
}

describe("LearnerService over gRPC", () => {
  let server: RunningServer;
  let client: Client<typeof LearnerService>;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "learner-service-"));
    const config = loadConfig(LearnerConfigSchema, {
      overrides: [
        `model.dir=${fixturePath("qwen2-tiny")}`,
        "model.name=qwen2-tiny",
        "backend=cpu",
        "lora.rank=4",
        "lora.alpha=8",
        "optimizer.learning_rate=1e-2",
        `checkpoint_dir=${dir}`,
        "server.port=0",
        "server.shutdown.drain_delay_ms=0",
      ],
    });
    server = await serve({ name: "learner", services: [createLearnerService(config)], config: config.server });
    client = createClient(LearnerService, createGrpcTransport({ baseUrl: server.url }));
  });
  afterAll(async () => {
    await server?.shutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs a TrainStep from a streamed header and samples, and reports the reference trainers' metrics", async () => {
    const before = await exported(client);
    const response = await client.trainStep(stream({ algorithm: "dapo", step: 1n }));
    expect(response.step).toBe(1n);
    expect(response.adapterVersion).toBe(1n);
    expect(response.adapterName).toBe("policy-v1");
    expect(response.zeroStdGroups).toEqual(["g2"]);
    for (const key of [
      "loss",
      "reward_mean",
      "reward_std",
      "frac_reward_zero_std",
      "clip_ratio_low_mean",
      "clip_ratio_high_mean",
      "clip_ratio_region_mean",
      "entropy",
      "completion_length_mean",
      "grad_norm",
      "learning_rate",
      "tokens_per_second",
    ]) {
      expect(Number.isFinite(response.metrics[key]), key).toBe(true);
    }
    expect(response.metrics.frac_reward_zero_std).toBeCloseTo(2 / 9, 12);
    expect(response.metrics.learning_rate).toBe(1e-2);
    const after = await exported(client);
    expect(after.manifest.files[1]!.sha256).not.toBe(before.manifest.files[1]!.sha256);
    const status = await client.getStatus({});
    expect(status).toMatchObject({ model: "qwen2-tiny", backend: "cpu", step: 1n, adapterVersion: 1n, algorithm: "dapo" });
    expect(status.lora).toMatchObject({ rank: 4, alpha: 8, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"] });
    expect(status.trainableParameters).toBeGreaterThan(0n);
    expect(status.totalParameters).toBeGreaterThan(status.trainableParameters);
  });

  it.each([
    [
      "an id out of the vocabulary",
      (s: TrainStepRequest[]) => {
        (s[2]!.part.value as { completionTokenIds: number[] }).completionTokenIds = [5, 400];
      },
      /samples\[2\]\.completion_token_ids\[1\] = 400 is outside the model's vocabulary \[0, 96\) \(sample_id "s2"\)/,
    ],
    [
      "lengths that disagree",
      (s: TrainStepRequest[]) => {
        (s[0]!.part.value as { samplerLogprobs: number[] }).samplerLogprobs = [-1, -2];
      },
      /samples\[0\]\.sampler_logprobs has 2 values but samples\[0\]\.completion_token_ids has 5 \(sample_id "s0"\)/,
    ],
    [
      "a NaN reward",
      (s: TrainStepRequest[]) => {
        (s[5]!.part.value as { reward: number }).reward = Number.NaN;
      },
      /samples\[5\]\.reward is NaN \(sample_id "s5"\)/,
    ],
    [
      "an empty group",
      (s: TrainStepRequest[]) => {
        (s[3]!.part.value as { groupId: string }).groupId = "";
      },
      /samples\[3\]\.group_id is empty \(sample_id "s3"\)/,
    ],
  ] as const)("refuses a batch with %s as INVALID_ARGUMENT naming sample and field; nothing is applied", async (_what, spoil, message) => {
    const before = await client.getStatus({});
    const adapter = await exported(client);
    await expectCode(client.trainStep(stream({ algorithm: "grpo" }, spoil)), Code.InvalidArgument, message);
    const after = await client.getStatus({});
    expect([after.step, after.adapterVersion]).toEqual([before.step, before.adapterVersion]);
    expect((await exported(client)).manifest.files).toEqual(adapter.manifest.files);
  });

  it("refuses unknown algorithms, unknown config keys, group-size mismatches, stream misuse and out-of-order steps", async () => {
    await expectCode(
      client.trainStep(stream({ algorithm: "ppo" })),
      Code.InvalidArgument,
      /algorithm "ppo" is not known; accepted: grpo, drgrpo, dapo, gspo, dgpo/,
    );
    await expectCode(
      client.trainStep(stream({ algorithm: "gspo", algorithmConfig: { target_group_size: 8 } })),
      Code.InvalidArgument,
      /header\.algorithm_config\.target_group_size is not a key of "gspo"; valid keys: temperature, scale_rewards/,
    );
    await expectCode(
      client.trainStep(stream({ algorithm: "grpo", numGenerations: 4 })),
      Code.InvalidArgument,
      /header\.num_generations is 4 but group_id "g1" has 3 samples/,
    );
    await expectCode(
      client.trainStep(stream({ algorithm: "grpo", step: 9n })),
      Code.FailedPrecondition,
      /header.step is 9 but the learner is at step \d+/,
    );
    const sampleFirst = (async function* () {
      yield create(TrainStepRequestSchema, {
        part: { case: "sample", value: { groupId: "g", promptTokenIds: [1], completionTokenIds: [2] } },
      });
    })();
    await expectCode(client.trainStep(sampleFirst), Code.InvalidArgument, /the first message must be the header/);
  });

  it("ComputeLogprobs scores with the policy and the reference; ExportAdapter's files reproduce the policy", async () => {
    const sequences = examples.slice(0, 3).map((e) => ({ promptTokenIds: e.promptIds, completionTokenIds: e.completionIds }));
    const policy = await client.computeLogprobs({ sequences, includeEntropy: true, temperature: 0.7 });
    const reference = await client.computeLogprobs({ sequences, reference: true });
    expect(reference.adapterVersion).toBe(0n);
    expect(policy.sequences.map((s) => s.logprobs.length)).toEqual(sequences.map((s) => s.completionTokenIds.length));
    expect(policy.sequences[0]!.entropies).toHaveLength(sequences[0]!.completionTokenIds.length);
    expect(reference.sequences[0]!.entropies).toHaveLength(0);

    const { manifest, files } = await exported(client, 0n, 1000);
    expect(manifest.version).toBe(policy.adapterVersion);
    expect(manifest.baseModel).toBe("qwen2-tiny");
    for (const info of manifest.files) {
      const bytes = files.get(info.path)!;
      expect(BigInt(bytes.byteLength)).toBe(info.size);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(info.sha256);
    }
    // The exported adapter, loaded by the core, gives the logprobs the service computed.
    const model = await CausalLM.load(fixturePath("qwen2-tiny"));
    const adapter = await importPeftAdapter(Object.fromEntries(files) as unknown as PeftFiles, model.config);
    const local = await scoreCompletions(
      model,
      sequences.map((s) => ({ promptIds: s.promptTokenIds, completionIds: s.completionTokenIds })),
      { temperature: 0.7, adapter },
    );
    local.logprobs.forEach((row, i) => row.forEach((lp, t) => expect(policy.sequences[i]!.logprobs[t]).toBeCloseTo(lp, 5)));
    adapter.dispose();
    model.dispose();
    await expectCode(
      client.exportAdapter({ version: 999n })[Symbol.asyncIterator]().next(),
      Code.NotFound,
      /adapter version 999 is not held; held versions: /,
    );
    await expectCode(
      client.computeLogprobs({ sequences: [{ promptTokenIds: [1], completionTokenIds: [500] }] }),
      Code.InvalidArgument,
      /sequences\[0\]\.completion_token_ids\[0\] = 500 is outside the model's vocabulary \[0, 96\)/,
    );
  });

  it("SaveCheckpoint then LoadCheckpoint brings back the step and the adapter", async () => {
    const saved = await client.saveCheckpoint({});
    const status = await client.getStatus({});
    expect(saved.step).toBe(status.step);
    // Relative to checkpoint_dir, as LoadCheckpoint takes it back.
    expect(saved.path).toBe(`step-${status.step}`);
    expect(existsSync(path.join(dir, `step-${status.step}`, "trainer_state.json"))).toBe(true);
    expect(saved.sizeBytes).toBeGreaterThan(0n);
    const adapter = await exported(client);
    await client.trainStep(stream({ algorithm: "gspo", mode: TrainingMode.SFT }));
    expect((await client.getStatus({})).step).toBe(status.step + 1n);
    const loaded = await client.loadCheckpoint({ path: saved.path });
    expect(loaded).toMatchObject({ step: status.step, adapterVersion: status.adapterVersion });
    expect((await exported(client)).manifest.files).toEqual(adapter.manifest.files);
    await expectCode(client.loadCheckpoint({ path: "nope" }), Code.NotFound, /^path "nope" does not exist under checkpoint_dir$/);
    await mkdir(path.join(dir, "empty"));
    await expectCode(client.loadCheckpoint({ path: "empty" }), Code.InvalidArgument, /cannot read trainer_state.json: ENOENT/);
  });

  it("writes and reads checkpoints under checkpoint_dir only, never echoing a file it read", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "learner-outside-"));
    try {
      // SaveCheckpoint used to mkdir -p anywhere.
      for (const target of [path.join(outside, "planted"), "../planted", "a/../../planted"]) {
        await expectCode(client.saveCheckpoint({ path: target }), Code.InvalidArgument, /^path ".*" (is absolute|contains "\.\.")/);
      }
      await symlink(outside, path.join(dir, "link-out"));
      await expectCode(
        client.saveCheckpoint({ path: "link-out/planted" }),
        Code.InvalidArgument,
        /^path "link-out" is a symlink; symlinks inside checkpoint_dir are refused$/,
      );
      expect(await readdir(outside)).toEqual([]);
      // LoadCheckpoint used to load any directory and quote its files in errors.
      await expectCode(client.loadCheckpoint({ path: "/etc" }), Code.InvalidArgument, /is absolute/);
      await expectCode(client.loadCheckpoint({ path: "link-out" }), Code.InvalidArgument, /^path "link-out" is a symlink/);
      await mkdir(path.join(dir, "planted-state"));
      await writeFile(path.join(outside, "state.json"), "SECRET-5e1d not json");
      await symlink(path.join(outside, "state.json"), path.join(dir, "planted-state", "trainer_state.json"));
      await expectCode(
        client.loadCheckpoint({ path: "planted-state" }),
        Code.InvalidArgument,
        /^path "planted-state\/trainer_state.json" is a symlink; symlinks inside checkpoint_dir are refused$/,
      );
      await mkdir(path.join(dir, "bad-state"));
      await writeFile(path.join(dir, "bad-state", "trainer_state.json"), "SECRET-5e1d not json");
      const bad = await client.loadCheckpoint({ path: "bad-state" }).catch((e: unknown) => ConnectError.from(e));
      expect(bad).toBeInstanceOf(ConnectError);
      expect((bad as ConnectError).rawMessage).toBe("trainer_state.json is not valid JSON; is it a directory written by SaveCheckpoint?");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("never writes through a symlink planted inside checkpoint_dir (a file or a directory of the checkpoint)", async () => {
    const outside = await mkdtemp(path.join(tmpdir(), "learner-outside-"));
    try {
      const victim = path.join(outside, "victim.bin");
      await writeFile(victim, "VICTIM-7a21");
      await mkdir(path.join(outside, "adapter-here"));
      // A saved checkpoint with its optimizer state swapped for a link to a file elsewhere.
      await mkdir(path.join(dir, "ck"));
      await symlink(path.relative(path.join(dir, "ck"), victim), path.join(dir, "ck", "optimizer.safetensors"));
      await expectCode(
        client.saveCheckpoint({ path: "ck" }),
        Code.InvalidArgument,
        /^path "ck\/optimizer.safetensors" is a symlink; symlinks inside checkpoint_dir are refused$/,
      );
      expect(await readFile(victim, "utf8")).toBe("VICTIM-7a21");
      // Its adapter directory swapped for a link to a directory elsewhere.
      await mkdir(path.join(dir, "ck2"));
      await symlink(path.join(outside, "adapter-here"), path.join(dir, "ck2", "adapter"));
      await expectCode(
        client.saveCheckpoint({ path: "ck2" }),
        Code.InvalidArgument,
        /^path "ck2\/adapter" is a symlink; symlinks inside checkpoint_dir are refused$/,
      );
      expect(await readdir(path.join(outside, "adapter-here"))).toEqual([]);
      // The links themselves are left as they were, and nothing was half-written beside them.
      expect(await readdir(path.join(dir, "ck"))).toEqual(["optimizer.safetensors"]);
      expect(await readdir(path.join(dir, "ck2"))).toEqual(["adapter"]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("lists the algorithms with their keys", async () => {
    const { algorithms } = await client.listAlgorithms({});
    expect(algorithms.map((a) => a.name)).toEqual(["grpo", "drgrpo", "dapo", "gspo", "dgpo", "cispo", "sapo"]);
    const dapo = algorithms.find((a) => a.name === "dapo")!;
    expect(dapo.title).toBe("Decoupled Clip and Dynamic sAmpling Policy Optimization");
    expect(dapo.params.find((p) => p.name === "epsilon_high")).toMatchObject({ type: "number", defaultValue: "0.28" });
    expect(algorithms.find((a) => a.name === "dgpo")!.params.map((p) => p.name)).toEqual(
      expect.arrayContaining(["use_dpo_loss", "dpo_beta", "dpo_coef"]),
    );
  });
});

describe("LearnerService without a model", () => {
  it("starts, answers status and algorithms, and FAILED_PRECONDITION naming model.dir for model RPCs", async () => {
    const config = loadConfig(LearnerConfigSchema, { overrides: ["server.port=0", "server.shutdown.drain_delay_ms=0"] });
    const server = await serve({ name: "learner", services: [createLearnerService(config)], config: config.server });
    try {
      const client = createClient(LearnerService, createGrpcTransport({ baseUrl: server.url }));
      expect((await client.getStatus({})).step).toBe(0n);
      expect((await client.listAlgorithms({})).algorithms).toHaveLength(7);
      await expectCode(client.trainStep(stream({ algorithm: "grpo" })), Code.FailedPrecondition, /set model.dir/);
      await expectCode(
        client.computeLogprobs({ sequences: [{ promptTokenIds: [1], completionTokenIds: [2] }] }),
        Code.FailedPrecondition,
        /model.dir/,
      );
    } finally {
      await server.shutdown();
    }
  });
});
