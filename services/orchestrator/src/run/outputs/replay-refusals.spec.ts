import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { RewardResultSchema } from "@lean-grpo/gen/leangrpo/v1/reward_pb";
import { Verdict, VerdictTier } from "@lean-grpo/gen/leangrpo/v1/verifier_pb";
import { countReplayRefusals, replayRefusalAlarm } from "./replay-refusals.js";

const result = (verdict: Verdict, decidedBy: VerdictTier) => create(RewardResultSchema, { verification: { verdict, decidedBy } });

describe("replay refusals", () => {
  it("counts only what the replay refused, not what the screen or the REPL decided, nor what the replay could not check", () => {
    const results = [
      result(Verdict.REJECTED, VerdictTier.REPLAY),
      result(Verdict.REJECTED, VerdictTier.SCREEN),
      result(Verdict.ERROR, VerdictTier.REPLAY),
      result(Verdict.PROVED, VerdictTier.REPLAY),
      result(Verdict.REJECTED, VerdictTier.REPLAY),
      create(RewardResultSchema, {}),
    ];
    expect(countReplayRefusals(results)).toBe(2);
    // A math group has no verification at all: no count, so the step reports none.
    expect(countReplayRefusals([create(RewardResultSchema, {}), create(RewardResultSchema, {})])).toBeUndefined();
  });

  it("raises an alarm line only for a step that had some", () => {
    expect(replayRefusalAlarm(7, { verifier_replay_refusals: 0 })).toBeUndefined();
    expect(replayRefusalAlarm(7, {})).toBeUndefined();
    expect(replayRefusalAlarm(7, { verifier_replay_refusals: 3 })).toMatch(
      /^EXPLOIT CAUGHT at step 7: the kernel replay refused 3 proof\(s\)/,
    );
  });
});
