// A gradient thread: its own tfjs backend and copy of the base model and adapter, computing
// the micro-batches of each pass it claims (micro-batch-gradients.ts) with the weights the
// learner's thread sends at the start of the pass, and posting each share back.
import * as tf from "@tensorflow/tfjs-core";
import { parentPort, workerData } from "node:worker_threads";
import { loadReasoningModel, ReasoningTokenMap, ReasoningVocabulary, useBackend } from "@lean-grpo/lm";
import { createPolicyAdapter } from "../training/policy-adapter.js";
import { microBatchGradients } from "../training/micro-batch-gradients.js";
import {
  claimTask,
  shareToArrays,
  type FromGradientThread,
  type GradientThreadSetup,
  type ToGradientThread,
  type WeightArray,
} from "./gradient-thread-protocol.js";

const port = parentPort!;
const post = (message: FromGradientThread) => port.postMessage(message);
const failure = (id: number | null, error: unknown): FromGradientThread => ({
  kind: "failed",
  id,
  name: (error as Error).name ?? "Error",
  message: (error as Error).message ?? String(error),
});

async function start(setup: GradientThreadSetup) {
  await useBackend(setup.backend);
  const reasoning = setup.reasoning;
  const vocab = reasoning
    ? new ReasoningVocabulary(
        new ReasoningTokenMap(reasoning.standardSize, Int32Array.from(reasoning.sourceIds)),
        reasoning.markers,
        "free",
      )
    : undefined;
  const model = await loadReasoningModel(setup.modelDir, vocab);
  // Initialised at random; every pass overwrites the weights with the learner's.
  const adapter = createPolicyAdapter(model, setup.lora, 0, reasoning?.rows ? "train" : "frozen");
  const variables = new Map(adapter.variables().map((v) => [adapter.peftKeyOfVariable(v.name)!, v]));
  const assign = (weights: WeightArray[]) => {
    for (const { key, shape, data } of weights) {
      const variable = variables.get(key);
      if (!variable) throw new Error(`the gradient thread's adapter has no tensor ${key}`);
      tf.tidy(() => variable.assign(tf.tensor(data, shape)));
    }
  };
  return { model, adapter, assign };
}

try {
  const state = await start(workerData as GradientThreadSetup);
  port.on("message", (message: ToGradientThread) => {
    if (message.kind !== "pass") return;
    try {
      state.assign(message.weights);
      const claims = new Int32Array(message.claims);
      for (let next = claimTask(claims); next < message.tasks.length; next = claimTask(claims)) {
        const share = microBatchGradients(state.model, state.adapter, message.pass, message.tasks[next]!);
        const shared = shareToArrays(share);
        post({ kind: "share", id: message.id, share: shared });
      }
      post({ kind: "done", id: message.id });
    } catch (error) {
      post(failure(message.id, error));
    }
  });
  post({ kind: "ready" });
} catch (error) {
  post(failure(null, error));
}
