// Sampling n completions past the inference service's max_n: how the calls are cut and seeded.
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_N, generateLimit, sampleChunks } from "../src/eval/sample-chunks.js";

describe("sampleChunks", () => {
  it("cuts n into calls of at most max_n, the last one the remainder", () => {
    expect(sampleChunks(32, 64).map((c) => c.n)).toEqual([32]);
    expect(sampleChunks(64, 16).map((c) => c.n)).toEqual([16, 16, 16, 16]);
    expect(sampleChunks(70, 32).map((c) => c.n)).toEqual([32, 32, 6]);
    expect(sampleChunks(1, 1).map((c) => c.n)).toEqual([1]);
  });

  it("keeps the problem's seed for the first call and gives each later call a different one", () => {
    const seeds = sampleChunks(64, 8).map((c) => c.seed(12345));
    expect(seeds[0]).toBe(12345);
    expect(new Set(seeds).size).toBe(8);
    for (const seed of seeds) expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32).toBe(true);
  });

  it("refuses a max_n that is not a positive integer", () => {
    expect(() => sampleChunks(8, 0)).toThrow("max_n must be a positive integer, got 0");
  });
});

describe("generateLimit", () => {
  const clients = (maxN: number) =>
    ({
      inference: { listModels: async () => ({ maxN }) },
      withRetry: <T>(_service: string, call: () => Promise<T>) => call(),
    }) as unknown as Parameters<typeof generateLimit>[0];

  it("is the max_n the inference service reports, or its default from a server that reports none", async () => {
    expect(await generateLimit(clients(16))).toBe(16);
    expect(await generateLimit(clients(0))).toBe(DEFAULT_MAX_N);
  });
});
