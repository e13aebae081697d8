// The per-step reasoning metrics and the samples' reasoning spans (docs/concepts/reasoning-vocabulary.md),
// from hand-built completion traces whose numbers are counted here by hand.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CompletionSchema, FinishReason, type ReasoningTrace } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { reasoningStepMetrics } from "../src/run/outputs/reasoning-metrics.js";
import { pickSamples, sampleToProto } from "../src/run/training/step-samples.js";

const completion = (
  length: number,
  reasoning?: Omit<ReasoningTrace, "$typeName" | "spans"> & { spans: Array<{ start: number; end: number }> },
  text = "x".repeat(length),
) =>
  create(CompletionSchema, {
    text,
    tokenIds: Array.from({ length }, (_, i) => i),
    finishReason: FinishReason.STOP,
    ...(reasoning ? { reasoning } : {}),
  });

describe("reasoning step metrics", () => {
  it("are absent without a reasoning vocabulary", () => {
    expect(reasoningStepMetrics([completion(5), completion(7)])).toEqual({});
  });

  it("count reasoning ids inside and outside the block, its length, and how many open and close it", () => {
    const metrics = reasoningStepMetrics([
      // 20 tokens, block [4, 14) closed: 10 inside, 8 of them reasoning; 1 reasoning id outside.
      completion(20, { opened: true, closed: true, blockStart: 4, blockEnd: 14, reasoningInside: 8, reasoningOutside: 1, spans: [] }),
      // 10 tokens, block [2, 10) never closed: 8 inside, 2 reasoning.
      completion(10, { opened: true, closed: false, blockStart: 2, blockEnd: 10, reasoningInside: 2, reasoningOutside: 0, spans: [] }),
      // 6 tokens, no block, no reasoning ids.
      completion(6, { opened: false, closed: false, blockStart: 0, blockEnd: 0, reasoningInside: 0, reasoningOutside: 0, spans: [] }),
    ]);
    expect(metrics.reasoning_share).toBeCloseTo(11 / 36, 12);
    expect(metrics.reasoning_share_inside).toBeCloseTo(10 / 18, 12);
    expect(metrics.reasoning_share_outside).toBeCloseTo(1 / 18, 12);
    expect(metrics.reasoning_block_tokens).toBeCloseTo(9, 12);
    expect(metrics.reasoning_block_opened).toBeCloseTo(2 / 3, 12);
    expect(metrics.reasoning_block_closed).toBeCloseTo(1 / 3, 12);
  });
});

describe("samples with reasoning spans", () => {
  it("keep the spans (code points) of the kept text and send them on the step event", () => {
    const c = completion(
      3,
      { opened: true, closed: true, blockStart: 1, blockEnd: 2, reasoningInside: 1, reasoningOutside: 0, spans: [{ start: 2, end: 5 }] },
      "a: ×÷=b",
    );
    const [record] = pickSamples([{ groupId: "g", theoremId: "t", prompt: "p", completions: [c], results: [] }], 1);
    expect(record!.reasoning_spans).toEqual([[2, 5]]);
    expect(sampleToProto(record!).reasoningSpans.map((s) => [s.start, s.end])).toEqual([[2, 5]]);
    const plain = pickSamples([{ groupId: "g", theoremId: "t", prompt: "p", completions: [completion(3)], results: [] }], 1)[0]!;
    expect(plain.reasoning_spans).toBeUndefined();
  });
});
