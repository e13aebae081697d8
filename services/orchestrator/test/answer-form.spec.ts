// The answer forms the held-out evaluation reports: right number, worked out or direct, per-form accuracy.
import { describe, expect, it } from "vitest";
import { answerForm, answerFormStats, formCounts, isBoxed, isRightNumber, lastNumber } from "../src/eval/answer-form.js";

describe("answer forms", () => {
  it("reads the last number written, boxed or not", () => {
    expect(lastNumber("27 + 45 = \\boxed{72}")).toBe(72);
    expect(lastNumber("27 + 45 = 72")).toBe(72);
    expect(lastNumber("no number")).toBeNull();
    expect(isRightNumber("27 + 45 = 72", "72")).toBe(true);
    expect(isRightNumber("27 + 45 = \\boxed{62}", "72")).toBe(false);
    expect(isRightNumber("x = 0.5", "0.50")).toBe(true);
    expect(isRightNumber("x = 3", "\\frac{1}{2}")).toBe(false);
    expect(isBoxed("= \\boxed{3}")).toBe(true);
  });

  it("calls an answer worked out when it writes a number that is neither the problem's nor its last", () => {
    const problem = "What is 27 + 45?";
    expect(answerForm("27 + 45: 7+5=12, 2+4+1=7, \\boxed{72}", problem)).toBe("worked");
    expect(answerForm("27 + 45: 60 + 12 = \\boxed{72}", problem)).toBe("worked");
    expect(answerForm("42 - 27: 12-7=5, 4-1-2=1, \\boxed{15}", "What is 42 - 27?")).toBe("worked");
    expect(answerForm("27 + 45 = \\boxed{72}", problem)).toBe("direct");
    expect(answerForm("\\boxed{72}", problem)).toBe("direct");
    expect(answerForm("", problem)).toBe("direct");
  });

  it("sums counts over problems into shares and per-form accuracies", () => {
    const a = formCounts(
      [
        { text: "27 + 45: 7+5=12, 2+4+1=7, \\boxed{72}", tokens: 31, truncated: false, solved: true },
        { text: "27 + 45 = 72", tokens: 12, truncated: false, solved: false },
      ],
      "What is 27 + 45?",
      "72",
    );
    const b = formCounts([{ text: "3 + 4 = \\boxed{8}", tokens: 12, truncated: true, solved: false }], "What is 3 + 4?", "7");
    const stats = answerFormStats([a, b])!;
    expect(stats.completions).toBe(3);
    expect(stats.right_number).toBeCloseTo(2 / 3);
    expect(stats.boxed).toBeCloseTo(2 / 3);
    expect(stats.worked_share).toBeCloseTo(1 / 3);
    expect(stats.accuracy_worked).toBe(1);
    expect(stats.accuracy_direct).toBe(0);
    expect(stats.right_number_direct).toBe(0.5);
    expect(stats.completion_tokens).toBeCloseTo(55 / 3);
    expect(stats.truncated).toBeCloseTo(1 / 3);
    expect(answerFormStats([])).toBeUndefined();
    const allDirect = answerFormStats([b])!;
    expect(allDirect.accuracy_worked).toBeNull();
  });
});
