import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { backoffCeilingMs, fullJitter, retryPolicy, sleep } from "./backoff.js";

describe("backoff", () => {
  it("grows the ceiling by the multiplier up to the cap", () => {
    const policy = retryPolicy({ initialBackoffMs: 50, maxBackoffMs: 300, multiplier: 2 });
    expect([1, 2, 3, 4, 5].map((attempt) => backoffCeilingMs(attempt, policy))).toEqual([50, 100, 200, 300, 300]);
  });

  it("defaults to 4 attempts, 50 ms growing ×2 to 2 s", () => {
    expect(retryPolicy()).toEqual({ maxAttempts: 4, initialBackoffMs: 50, maxBackoffMs: 2000, multiplier: 2 });
  });

  it("rejects policies that cannot work", () => {
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => retryPolicy({ initialBackoffMs: 500, maxBackoffMs: 100 })).toThrow(/initialBackoffMs/);
  });

  it("draws waits from [0, ceiling)", () => {
    expect(fullJitter(100, () => 0)).toBe(0);
    expect(fullJitter(100, () => 0.999)).toBe(99);
    expect(fullJitter(100, () => 0.5)).toBe(50);
  });

  it("ends a wait with CANCELED as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = sleep(10_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toSatisfy((e) => ConnectError.from(e).code === Code.Canceled);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
