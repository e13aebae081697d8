// AdamW with global-norm clipping against torch.optim.AdamW + clip_grad_norm_, and the
// learning-rate schedules against transformers' formulas (fixtures from
// scripts/reference/make_algorithm_fixtures.py).
import { beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "@lean-grpo/lm";
import { AdamW } from "../src/optimizer/adamw.js";
import { clipByGlobalNorm } from "../src/optimizer/global-norm-clipping.js";
import { learningRateMultiplier, LR_SCHEDULES } from "../src/optimizer/learning-rate-schedule.js";
import { ALGORITHM_FIXTURES, readAlgorithmFixture, relativeError, type AlgorithmFixture } from "./support/algorithm-fixtures.js";
import { readFixtureTensors } from "../../../packages/lm/test/support/fixtures.js";

const fixture: AlgorithmFixture = await readAlgorithmFixture();

describe("AdamW and schedules match PyTorch", () => {
  beforeAll(async () => {
    await useBackend("cpu");
  });

  it("two clipped AdamW steps give torch's weights within 1e-5 relative", async () => {
    const { adamw } = fixture;
    const lora = await readFixtureTensors(`${fixture.adapter}/adapter_model.safetensors`);
    const grads = await readFixtureTensors(`${ALGORITHM_FIXTURES}${adamw.gradients}`);
    const expected = await readFixtureTensors(`${ALGORITHM_FIXTURES}${adamw.weights}`);
    const shapeOf = (key: string, size: number): [number, number] => {
      const rank = 4; // the qwen2-tiny adapter's r
      return key.includes("lora_A") ? [rank, size / rank] : [size / rank, rank];
    };
    const variables = new Map([...lora].map(([key, data]) => [key, tf.variable(tf.tensor2d(data, shapeOf(key, data.length)))]));
    const optimizer = new AdamW({ beta1: adamw.betas[0], beta2: adamw.betas[1], epsilon: adamw.eps, weightDecay: adamw.weight_decay });
    for (let step = 0; step < adamw.steps; step++) {
      const raw = new Map([...grads].map(([key, data]) => [key, tf.tensor2d(data, shapeOf(key, data.length))]));
      const clipped = clipByGlobalNorm(raw, adamw.max_grad_norm);
      expect(Math.abs(clipped.norm - adamw.grad_norms[step]!) / adamw.grad_norms[step]!).toBeLessThan(1e-5);
      optimizer.apply(
        [...clipped.grads].map(([key, grad]) => ({ key, variable: variables.get(key)!, grad })),
        adamw.lr,
      );
      tf.dispose([...raw.values(), ...clipped.grads.values()]);
    }
    expect(optimizer.updates).toBe(2);
    for (const [key, variable] of variables) {
      const before = lora.get(key)!;
      const after = (await variable.data()) as Float32Array;
      const { error } = relativeError(after, expected.get(key)!);
      expect(error, key).toBeLessThan(1e-5);
      // The update itself must be large enough for the comparison to mean something.
      expect(relativeError(before, expected.get(key)!).error, key).toBeGreaterThan(1e-3);
    }
    optimizer.dispose();
    for (const v of variables.values()) v.dispose();
  });

  it.each(LR_SCHEDULES)("%s schedule with warm-up gives transformers' multipliers", (name) => {
    const { warmup, total, multipliers } = fixture.schedules;
    multipliers[name].forEach((expected, step) => {
      expect(learningRateMultiplier({ name, warmupSteps: warmup, totalSteps: total }, step)).toBeCloseTo(expected, 12);
    });
  });
});
