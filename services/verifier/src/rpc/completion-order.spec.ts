import { describe, expect, it } from "vitest";
import { inCompletionOrder } from "./completion-order.js";

const delay = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe("inCompletionOrder", () => {
  it("yields results as they finish, never more than `concurrency` in flight", async () => {
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    for await (const value of inCompletionOrder([60, 10, 30, 5], 2, async (ms, i) => {
      most = Math.max(most, ++inFlight);
      await delay(ms, null);
      inFlight--;
      return i;
    })) {
      seen.push(value);
    }
    expect(seen.sort()).toEqual([0, 1, 2, 3]);
    expect(most).toBe(2);
  });

  it("yields in completion order", async () => {
    const seen: string[] = [];
    for await (const value of inCompletionOrder(["slow", "fast"], 2, (item) => delay(item === "slow" ? 50 : 1, item))) seen.push(value);
    expect(seen).toEqual(["fast", "slow"]);
  });

  it("ends with the first failure and leaves no unhandled rejection behind", async () => {
    const run = async () => {
      for await (const _ of inCompletionOrder([1, 2, 3], 3, async (n) => {
        await delay(n * 5, null);
        throw new Error(`failed ${n}`);
      })) {
        void _;
      }
    };
    await expect(run()).rejects.toThrow("failed 1");
    await delay(30, null);
  });

  it("handles no items", async () => {
    const seen: unknown[] = [];
    for await (const value of inCompletionOrder([], 4, async () => 1)) seen.push(value);
    expect(seen).toEqual([]);
  });
});
