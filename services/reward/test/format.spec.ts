import { describe, expect, it } from "vitest";
import { completion, leanTheorem, mathProblem, proved } from "./messages.js";
import { component, rewardOf, scoreOne } from "./scoring.js";

const math = rewardOf(["math_answer", 1], ["format", 1]);
const lean = rewardOf(["lean_proof", 1], ["format", 1]);

async function mathFormat(text: string, params: Record<string, unknown> = {}) {
  const reward = rewardOf(["math_answer", 1], ["format", 1, params]);
  return component(await scoreOne(reward, mathProblem("4"), completion(text)), "format");
}

describe("format", () => {
  it("pays 1 for thinking then a boxed answer", async () => {
    expect((await mathFormat("<think>2+2</think> so \\boxed{4}")).value).toBe(1);
    expect((await mathFormat("\n <think>2+2</think>\\boxed{5}")).value).toBe(1); // structure, not correctness
  });

  it.each([
    ["no thinking", "\\boxed{4}", "thinking: wanted exactly one <think> and one </think>, found 0 and 0"],
    ["text before thinking", "Hi <think>x</think> \\boxed{4}", "thinking: text before <think>"],
    ["empty thinking", "<think> </think> \\boxed{4}", "thinking: empty"],
    ["two thinking blocks", "<think>a</think><think>b</think>\\boxed{4}", "found 2 and 2"],
    ["box only inside the thinking", "<think>\\boxed{4}</think> done", "answer: no non-empty \\boxed{}"],
    ["empty box", "<think>a</think> \\boxed{ }", "answer: no non-empty \\boxed{}"],
  ])("pays 0 for %s", async (_, text, detail) => {
    const result = await mathFormat(text);
    expect(result.value).toBe(0);
    expect(result.detail).toContain(detail);
  });

  it("expects only </think> when the prompt opened the thinking", async () => {
    expect((await mathFormat("2+2 is 4</think> \\boxed{4}", { think_opened_by_prompt: true })).value).toBe(1);
    expect((await mathFormat("<think>2+2</think> \\boxed{4}", { think_opened_by_prompt: true })).value).toBe(0);
  });

  it("checks only what is required", async () => {
    expect((await mathFormat("\\boxed{4}", { require_think: false })).value).toBe(1);
    expect((await mathFormat("<think>a</think> four", { require_answer: false })).value).toBe(1);
    expect(() => rewardOf(["format", 1, { require_think: false, require_answer: false }])).toThrow("format would pay for anything");
  });

  it("wants a Lean block with code for Lean tasks; comments alone are not code", async () => {
    const score = async (text: string) => component(await scoreOne(lean, leanTheorem(), completion(text), proved()), "format").value;
    expect(await score("<think>simp</think>\n```lean\nby simp\n```")).toBe(1);
    expect(await score("<think>simp</think>\n```lean4\nby simp\n```")).toBe(1);
    expect(await score("<think>simp</think>\n```lean\n-- ring linarith omega\n/- by simp -/\n```")).toBe(0);
    expect(await score("<think>simp</think>\nby simp")).toBe(0);
  });

  it("is independent of the math verdict", async () => {
    const result = await scoreOne(math, mathProblem("4"), completion("<think>guess</think>\\boxed{5}"));
    expect(component(result, "format").value).toBe(1);
    expect(result.solved).toBe(false);
  });
});
