import { describe, expect, it } from "vitest";
import { Code, type ConnectError } from "@connectrpc/connect";
import { FinishReason } from "@lean-grpo/gen/leangrpo/v1/common_pb";
import { choiceLogprobs, choiceTokenIds, finishReason } from "./completion-choice.js";

describe("reading a vLLM completion choice", () => {
  it("prefers token_ids (return_token_ids)", () => {
    const choice = { index: 0, text: "", finish_reason: "stop", token_ids: [5, 6], logprobs: { tokens: ["token_id:9", "token_id:9"] } };
    expect(choiceTokenIds(choice)).toEqual([5, 6]);
  });

  it("falls back to token_id:N logprob tokens from servers without return_token_ids", () => {
    const choice = {
      index: 0,
      text: "ab",
      finish_reason: "length",
      logprobs: { tokens: ["token_id:151644", "token_id:0"], token_logprobs: [-0.25, -1.5] },
    };
    expect(choiceTokenIds(choice)).toEqual([151644, 0]);
    expect(choiceLogprobs(choice, 2)).toEqual([-0.25, -1.5]);
  });

  it("refuses tokens that are not ids and logprob counts that disagree", () => {
    const text = { index: 0, text: "a", finish_reason: "stop", logprobs: { tokens: ["a"], token_logprobs: [-1] } };
    expect(() => choiceTokenIds(text)).toThrow(/is not "token_id:N"/);
    const error = (() => {
      try {
        choiceLogprobs(text, 2);
      } catch (e) {
        return e as ConnectError;
      }
    })();
    expect(error?.code).toBe(Code.Internal);
    expect(error?.rawMessage).toBe("vLLM returned 1 logprobs for 2 tokens");
  });

  it("maps finish reasons", () => {
    expect(finishReason("stop")).toBe(FinishReason.STOP);
    expect(finishReason("length")).toBe(FinishReason.LENGTH);
    expect(finishReason("abort")).toBe(FinishReason.ABORT);
    expect(finishReason(null)).toBe(FinishReason.UNSPECIFIED);
  });
});
