// The reward service owns length shaping: a request names the generation budget its
// completions were sampled with (RewardSpec.max_completion_tokens), and the `length`
// scorer's max_tokens and cache_tokens follow it wherever nobody chose them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { completion, mathProblem } from "./messages.js";
import { failure } from "./support/failure.js";
import { startRewardServer, type RewardServer } from "./support/server.js";

/** A right answer padded to `tokens` tokens (the test completions have one token per character). */
const answer = (tokens: number) => completion(`\\boxed{4}${"x".repeat(tokens - 9)}`);

describe("RewardSpec.max_completion_tokens", () => {
  let reward: RewardServer;
  beforeAll(async () => {
    // The server's own reward has the overlong penalty with the scorer's defaults.
    reward = await startRewardServer(["reward.preset=shaped"]);
  });
  afterAll(async () => {
    await reward.stop();
  });
  const lengthOf = async (spec: object, tokens: number) => {
    const { result } = await reward.client.score({ theorem: mathProblem("4"), completion: answer(tokens), spec });
    return result!.components.find((c) => c.scorer === "length")!;
  };

  it("sets the length scorer's max_tokens to the budget and its soft zone to a quarter of it", async () => {
    // Budget 64: soft limit 48, hard 64; 60 tokens: (48 - 60) / 16.
    expect(await lengthOf({ maxCompletionTokens: 64 }, 60)).toMatchObject({ value: -0.75, detail: "60 tokens (soft limit 48, hard 64)" });
    // The same completion against the scorer's own default (4096) is not penalised.
    expect(await lengthOf({}, 60)).toMatchObject({ value: 0, detail: "60 tokens (soft limit 3072, hard 4096)" });
  });

  it("fits a named preset and keeps what a request chose", async () => {
    expect(await lengthOf({ preset: "shaped", maxCompletionTokens: 64 }, 60)).toMatchObject({
      detail: "60 tokens (soft limit 48, hard 64)",
    });
    // Chosen max_tokens below the budget stays; its soft zone follows it.
    const chosen = { preset: "shaped", maxCompletionTokens: 64, scorers: [{ name: "length", weight: 0.5, params: { max_tokens: 40 } }] };
    expect(await lengthOf(chosen, 35)).toMatchObject({ value: -0.5, detail: "35 tokens (soft limit 30, hard 40)" });
    // A chosen soft zone stays too.
    const zone = { maxCompletionTokens: 64, scorers: [{ name: "length", weight: 0.5, params: { cache_tokens: 4 } }] };
    expect(await lengthOf(zone, 62)).toMatchObject({ value: -0.5, detail: "62 tokens (soft limit 60, hard 64)" });
  });

  it("refuses a chosen max_tokens above the budget, naming it and the budget", async () => {
    const error = await failure(
      lengthOf({ maxCompletionTokens: 64, scorers: [{ name: "length", weight: 0.5, params: { max_tokens: 100 } }] }, 10),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(
      /length: max_tokens \(100\) exceeds the generation budget \(64\).*set at most 64 \(spec\.max_completion_tokens 64\)/,
    );
  });

  it("refuses a preset's soft zone that does not fit in the budget, naming the preset and the key", async () => {
    // strict sets cache_tokens 512.
    const error = await failure(lengthOf({ preset: "strict", maxCompletionTokens: 64 }, 10));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.rawMessage).toMatch(
      /^reward "strict": length: cache_tokens \(512\) is larger than max_tokens \(64, the generation budget\)/,
    );
  });
});
