// The sampler on hand-made logits, where the right answer is known exactly.
import { describe, expect, it } from "vitest";
import { sampleToken, type SamplingParams } from "../src/decode/sampler.js";
import { SeededRandom } from "@lean-grpo/random";

// Probabilities 0.5, 0.25, 0.125, 0.125 at temperature 1.
const logits = Float32Array.from([Math.log(0.125), Math.log(0.5), Math.log(0.125), Math.log(0.25)]);

function frequencies(params: SamplingParams, draws = 20000): number[] {
  const random = new SeededRandom(42);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < draws; i++) counts[sampleToken(logits, params, () => random.next()).token]! += 1;
  return counts.map((c) => c / draws);
}

describe("sampleToken", () => {
  it("is greedy at temperature 0 and reports the token's logprob at temperature 1", () => {
    expect(sampleToken(logits, { temperature: 0, topK: 0, topP: 1 }, () => 0.99)).toEqual({
      token: 1,
      logprob: expect.closeTo(Math.log(0.5), 6),
    });
  });

  it("breaks a greedy tie towards the lower id", () => {
    expect(sampleToken(Float32Array.from([1, 3, 3]), { temperature: 0, topK: 0, topP: 1 }, () => 0).token).toBe(1);
  });

  it("draws from softmax(logits / T)", () => {
    const f = frequencies({ temperature: 1, topK: 0, topP: 1 });
    [0.125, 0.5, 0.125, 0.25].forEach((p, i) => expect(Math.abs(f[i]! - p)).toBeLessThan(0.01));
    // T = 0.5 squares the probabilities: 1/64, 1/4, 1/64, 1/16 normalised.
    const sharp = frequencies({ temperature: 0.5, topK: 0, topP: 1 });
    const squared = [1 / 64, 1 / 4, 1 / 64, 1 / 16];
    const total = squared.reduce((a, b) => a + b);
    squared.forEach((p, i) => expect(Math.abs(sharp[i]! - p / total)).toBeLessThan(0.01));
  });

  it("keeps the top k tokens, renormalised", () => {
    const f = frequencies({ temperature: 1, topK: 2, topP: 1 });
    expect(f[0]).toBe(0);
    expect(f[2]).toBe(0);
    expect(Math.abs(f[1]! - 2 / 3)).toBeLessThan(0.01);
    expect(Math.abs(f[3]! - 1 / 3)).toBeLessThan(0.01);
  });

  it("keeps the smallest set whose probability reaches top_p", () => {
    expect(frequencies({ temperature: 1, topK: 0, topP: 0.5 })).toEqual([0, 1, 0, 0]); // 0.5 reaches 0.5
    const f = frequencies({ temperature: 1, topK: 0, topP: 0.7 }); // 0.5 + 0.25 reaches 0.7
    expect(f[0]! + f[2]!).toBe(0);
    expect(Math.abs(f[1]! - 2 / 3)).toBeLessThan(0.01);
    expect(frequencies({ temperature: 1, topK: 0, topP: 0.01 })).toEqual([0, 1, 0, 0]); // never empty
  });

  it("applies top-k before top-p", () => {
    // top-k 3 leaves 0.5, 0.25, 0.125 (ids 1, 3, then 0 before 2 by id); renormalised 4/7, 2/7, 1/7;
    // top-p 0.8 then keeps ids 1 and 3 (6/7 ≥ 0.8).
    const f = frequencies({ temperature: 1, topK: 3, topP: 0.8 });
    expect(f[0]! + f[2]!).toBe(0);
  });

  it("reports the logprob under the processed distribution it drew from (top-k, top-p, temperature)", () => {
    const random = new SeededRandom(1);
    // top-k 2 keeps 0.5 and 0.25: renormalised 2/3 and 1/3.
    const expectedTopK: Record<number, number> = { 1: Math.log(2 / 3), 3: Math.log(1 / 3) };
    // top-k 3 then top-p 0.8 keeps ids 1 and 3 (see above): same 2/3 and 1/3.
    for (const params of [
      { temperature: 1, topK: 2, topP: 1 },
      { temperature: 1, topK: 3, topP: 0.8 },
      { temperature: 1, topK: 0, topP: 0.7 },
    ]) {
      for (let i = 0; i < 20; i++) {
        const { token, logprob } = sampleToken(logits, params, () => random.next());
        expect(logprob).toBeCloseTo(expectedTopK[token]!, 6);
      }
    }
    // Temperature 0.5 squares the probabilities: 0.25, 0.0625, 0.015625 ×2 (sum 0.34375); top-p 0.9 keeps
    // 0.25 / 0.34375 = 0.727 then adds 0.0625 (0.909 ≥ 0.9): ids 1 and 3, renormalised 0.8 and 0.2.
    for (let i = 0; i < 20; i++) {
      const { token, logprob } = sampleToken(logits, { temperature: 0.5, topK: 0, topP: 0.9 }, () => random.next());
      expect(logprob).toBeCloseTo(Math.log(token === 1 ? 0.8 : 0.2), 6);
    }
    // No truncation: the full distribution at the temperature.
    const { token, logprob } = sampleToken(logits, { temperature: 0.5, topK: 0, topP: 1 }, () => 0.5);
    expect(logprob).toBeCloseTo(2 * logits[token]! - Math.log(0.34375), 6);
  });
});

describe("SeededRandom", () => {
  it("repeats for a seed and stays in [0, 1)", () => {
    const a = new SeededRandom(5);
    const b = new SeededRandom(5);
    const values = Array.from({ length: 1000 }, () => a.next());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(Math.abs(values.reduce((s, v) => s + v) / 1000 - 0.5)).toBeLessThan(0.05);
  });
});
