// The TypeScript learner's exported adapter with a reasoning vocabulary, loaded by Hugging Face
// PEFT (docs/concepts/reasoning-vocabulary.md): arith-tiny (n_s = 147, tied) with
// model.reasoning_vocab_size 147 and markers ":" / "\boxed{", one gated GRPO step (LoRA and the
// reasoning rows move), ExportAdapter written to a directory, the expanded base written by
// `python -m leangrpo_learner.reasoning.expand_checkpoint`, and reference/peft_adapter_logprobs.py
// (transformers' AutoModelForCausalLM + PeftModel.from_pretrained, no learner code) scoring a
// completion with reasoning ids. Its logprobs must be the learner's policy logprobs under the
// `free` mask (the full softmax over the expanded vocabulary, which needs no mask on PEFT's side).
// Skipped, saying why, without a Python that has torch >= 2, transformers and peft: set
// PEFT_PYTHON to one (default python3).
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReasoningMask } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { REPO_ROOT } from "./conformance-fixtures.js";
import { type LearnerClient, learnerClient, trainStepStream } from "./learner-calls.js";
import type { RunningLearner } from "./learner-under-test.js";
import { tsLearner } from "./ts-learner-under-test.js";
import { MIXED, MODEL, N_S, PROMPT, STANDARD } from "./reasoning-vocab-case.js";

const PYTHON = process.env.PEFT_PYTHON || "python3";
const TORCH_LEARNER = path.join(REPO_ROOT, "services/learner-torch");
const SCORER = path.join(REPO_ROOT, "tests/conformance/learner/reference/peft_adapter_logprobs.py");
// float32 in both; measured differences are below 1e-5, so one LoRA entry off by 0.05 fails.
const TOLERANCE = 2e-5;

/** Why PEFT cannot run here, or null when it can. */
function peftUnavailable(): string | null {
  const probe = spawnSync(
    PYTHON,
    ["-c", "import torch, transformers, peft; assert int(torch.__version__.split('.')[0]) >= 2, 'torch ' + torch.__version__ + ' < 2'"],
    { encoding: "utf8" },
  );
  if (probe.error)
    return `${PYTHON} cannot be run (${probe.error.message}); set PEFT_PYTHON to a Python with torch>=2, transformers and peft`;
  if (probe.status !== 0) {
    const why = probe.stderr.trim().split("\n").at(-1);
    return `${PYTHON} lacks torch>=2, transformers or peft (${why}); set PEFT_PYTHON to a Python that has them`;
  }
  return null;
}

function python(args: string[], options: { cwd?: string; input?: string } = {}): string {
  const run = spawnSync(PYTHON, args, { encoding: "utf8", maxBuffer: 64 << 20, ...options });
  if (run.error || run.status !== 0) throw new Error(`${PYTHON} ${args.join(" ")} failed: ${run.error?.message ?? run.stderr}`);
  return run.stdout;
}

async function writeExportedAdapter(client: LearnerClient, directory: string): Promise<string[]> {
  const parts = new Map<string, Buffer[]>();
  for await (const message of client.exportAdapter({ version: 0n, chunkSize: 0 })) {
    if (message.part.case === "chunk") {
      const chunk = message.part.value;
      parts.set(chunk.path, [...(parts.get(chunk.path) ?? []), Buffer.from(chunk.data)]);
    }
  }
  await mkdir(directory, { recursive: true });
  for (const [file, chunks] of parts) await writeFile(path.join(directory, file), Buffer.concat(chunks));
  return [...parts.keys()].sort();
}

async function logprobs(client: LearnerClient, completion: number[], reference: boolean): Promise<number[]> {
  const res = await client.computeLogprobs({
    sequences: [{ promptTokenIds: PROMPT, completionTokenIds: completion }],
    reference,
    sampling: { temperature: 1, topK: 0, topP: 1, reasoningMask: ReasoningMask.FREE },
  });
  return res.sequences[0]!.logprobs;
}

const unavailable = peftUnavailable();
if (unavailable) console.log(`ts-learner-peft-export.spec.ts skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)("ts learner: the exported reasoning adapter in Hugging Face PEFT", { timeout: 300_000 }, () => {
  let dir: string;
  let learner: RunningLearner;
  let client: LearnerClient;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ts-learner-peft-"));
    learner = await tsLearner.start({
      model: { dir: MODEL, name: "arith-tiny", reasoning_vocab_size: N_S, reasoning_markers: [":", "\\boxed{"], reasoning_mask: "gated" },
      lora: { rank: 4, alpha: 8, target_modules: ["q_proj", "v_proj"] },
      optimizer: { learning_rate: 0.01, max_grad_norm: 1, lr_schedule: "constant", warmup_steps: 0 },
      checkpoint_dir: path.join(dir, "checkpoints"),
      seed: 0,
    });
    client = learnerClient(learner.url);
  }, 300_000);
  afterAll(async () => {
    await learner?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("loads on the expanded base and gives the learner's logprobs for a completion with reasoning ids", async () => {
    // The standard completions win and the mixed ones lose (rewards that do not cancel), so the
    // step moves the LoRA and the copies' rows.
    const rewards = [1, 0, 0, 1];
    const samples = [STANDARD, MIXED, MIXED, STANDARD].map((completion, i) => ({
      sampleId: `r${i}`,
      groupId: "g0",
      promptTokenIds: PROMPT,
      completionTokenIds: completion,
      samplerLogprobs: [] as number[],
      reward: rewards[i]!,
      truncated: false,
    }));
    await client.trainStep(
      trainStepStream(
        { algorithm: "grpo", step: 1n, numGenerations: 4, expectedSamples: 4, temperature: 1, reasoningMask: ReasoningMask.GATED },
        samples,
      ),
    );
    const adapter = path.join(dir, "adapter");
    expect(await writeExportedAdapter(client, adapter)).toEqual([
      "adapter_config.json",
      "adapter_model.safetensors",
      "reasoning_token_map.json",
    ]);
    const policy = await logprobs(client, MIXED, false);
    const base = await logprobs(client, MIXED, true);

    const expanded = path.join(dir, "expanded");
    python(
      [
        "-m",
        "leangrpo_learner.reasoning.expand_checkpoint",
        "--model",
        MODEL,
        "--out",
        expanded,
        "--reasoning-vocab-size",
        `${N_S}`,
        "--markers",
        ":",
        "\\boxed{",
      ],
      { cwd: TORCH_LEARNER },
    );
    const request = { base: expanded, adapter, sequences: [{ prompt: PROMPT, completion: MIXED }] };
    const answer = JSON.parse(python([SCORER], { input: JSON.stringify(request) })) as {
      logprobs: number[][];
      vocab_size: number;
      adapter_keys: string[];
    };
    expect(answer.vocab_size).toBe(2 * N_S);
    // PEFT holds the LoRA and the trainable tokens it was given.
    expect(answer.adapter_keys).toContain("base_model.model.model.embed_tokens.token_adapter.trainable_tokens_delta");
    expect(answer.adapter_keys.some((key) => key.includes("lora_A"))).toBe(true);
    // The step moved the policy off the base, so equal logprobs mean the exported weights arrived.
    expect(Math.max(...policy.map((lp, t) => Math.abs(lp - base[t]!)))).toBeGreaterThan(1e-3);
    const peft = answer.logprobs[0]!;
    expect(peft).toHaveLength(MIXED.length);
    peft.forEach((lp, t) => expect(Math.abs(lp - policy[t]!), `token ${t} (id ${MIXED[t]})`).toBeLessThanOrEqual(TOLERANCE));
  });
});
